"""User-facing errors. Library code raises these; only the CLI turns them into exit codes."""

from __future__ import annotations

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


class FioParseError(ArraybenchError):
    """A fio output could not be read."""


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


def utf8_safe_all(value: T) -> T:
    """`utf8_safe` on every string inside lists, tuples and dicts (keys too)."""
    if isinstance(value, str):
        return cast(T, utf8_safe(value))
    if isinstance(value, list | tuple):
        return cast(T, type(value)(utf8_safe_all(v) for v in value))
    if isinstance(value, dict):
        return cast(T, {utf8_safe_all(k): utf8_safe_all(v) for k, v in value.items()})
    return value
