"""User-facing errors. Library code raises these; only the CLI turns them into exit codes."""

from __future__ import annotations

import errno
import signal
from typing import TypeVar, cast

T = TypeVar("T")


class ArraybenchError(Exception):
    """An error a user can act on: `message` says what is wrong, `hint` what to do."""

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        return f"{self.message}; {self.hint}" if self.hint else self.message


class PlanError(ArraybenchError):
    """The plan (YAML file or template) is invalid."""


class OutputParseError(ArraybenchError):
    """A tool's output could not be read: fio's, mdtest's, or a file being imported."""


class FioMissingError(ArraybenchError):
    """fio (or an engine a plan asks for) is not available on this machine."""


class FioRunError(ArraybenchError):
    """fio failed, is missing, or ran past its watchdog; the message names the point."""

    exit_code = 1


class UnsafeTargetError(ArraybenchError):
    """A target must not be written without explicit consent (allow_destroy)."""


class TargetError(ArraybenchError):
    """A target is missing, not writable or otherwise unusable."""


class StoreError(ArraybenchError):
    """The results store or a run folder is missing or inconsistent."""


class StoreMachineError(StoreError):
    """The store's disk failed or filled up: not the user's doing."""

    exit_code = 1


class RunLockedError(StoreError):
    """Another live arraybench process is running this run."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, handled as Ctrl-C is: cleanup runs through the same paths."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report it
# the run completed, but an event's injection could not be undone (its revert failed): the
# machine is not as the run found it; before EXIT_NOT_ACCEPTED (cli), which it outranks
EXIT_LEFT_IN_PLACE = 4


def interruption(exc: KeyboardInterrupt) -> tuple[str, int]:
    """Ctrl-C or a signal: its words and the shell's exit code (130 for Ctrl-C, 128 + N for
    signal N: 143 SIGTERM, 129 SIGHUP)."""
    if isinstance(exc, Terminated):
        return f"interrupted by {signal.Signals(exc.signum).name}", 128 + exc.signum
    return "interrupted", EXIT_INTERRUPTED


# a path with a byte that is not UTF-8 (read with Python's surrogate escapes) must still be
# writable where only UTF-8 goes: a message, the store, a terminal, a report
def utf8_safe(text: str) -> str:
    """`text` if it is valid UTF-8 text, else with each undecodable byte as `\\xNN` (and any
    other lone surrogate as `\\udNNN`)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        data = text.encode("utf-8", "surrogateescape")  # the bytes the path had
    except UnicodeEncodeError:  # a surrogate no byte gave (JSON "\ud800")
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return data.decode("utf-8", "backslashreplace")


OS_ERRORS: dict[int, tuple[str, str, int]] = {  # errno -> what it means, what to do, exit code
    errno.EROFS: ("the filesystem is read-only", "choose a path on a writable filesystem", 2),
    errno.ENOSPC: ("the filesystem is full", "free space there or choose another path", 1),
    errno.EDQUOT: ("the disk quota is exceeded", "free space there or choose another path", 1),
    errno.EIO: ("the disk failed (I/O error)", "check the disk (dmesg) or choose another path", 1),
    errno.ENAMETOOLONG: ("a name in the path is too long",
                         "use a shorter path (or plan, workload or run name)", 2),
    errno.ENOTDIR: ("a part of the path is a file, not a directory",
                    "choose a path under a directory", 2),
    errno.EISDIR: ("it is a directory", "give a file name, e.g. DIR/report.html", 2),
    errno.EEXIST: ("it exists and is not a directory",  # mkdir(exist_ok=True) on a file
                   "choose a path under a directory", 2),
    errno.EACCES: ("permission denied", "choose a path you may write, or get the rights", 2),
    errno.EPERM: ("operation not permitted", "choose a path you may write, or get the rights", 2),
    errno.ENOENT: ("no such file or directory", "check the path", 2),
}  # fmt: skip


def os_error_line(exc: OSError, where: str) -> tuple[str, int]:
    """An OSError -> one line naming the path (else `where`) and what to do, and an exit
    code: 2 for a path the user can change, 1 for a machine that failed."""
    what, hint, code = OS_ERRORS.get(exc.errno or 0, (exc.strerror or str(exc), "", 1))
    where = exc.filename if exc.filename is not None else where
    detail = f" ({exc.strerror})" if exc.strerror and exc.strerror.lower() not in what else ""
    return f"{where}: {what}{detail}" + (f"; {hint}" if hint else ""), code


def last_resort(
    exc: OSError | RecursionError | OverflowError, written: list[object]
) -> tuple[str, int]:
    """Failures no layer below could name better, each still one line and an exit code;
    `written`: where the command writes, for an OSError that names no file (a write())."""
    if isinstance(exc, OSError):
        where = " or ".join(str(p) for p in written if p)
        return os_error_line(exc, f"writing {where}" if where else "arraybench")
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to read; flatten the plan or file", 2
    return f"a number is too large ({exc}); use a smaller value", 2


def utf8_safe_all(value: T) -> T:
    """`utf8_safe` on every string inside lists, tuples and dicts (keys too)."""
    if isinstance(value, str):
        return cast(T, utf8_safe(value))
    if isinstance(value, list | tuple):
        return cast(T, type(value)(utf8_safe_all(v) for v in value))
    if isinstance(value, dict):
        return cast(T, {utf8_safe_all(k): utf8_safe_all(v) for k, v in value.items()})
    return value
