"""Processes an event names: by a user's pattern (as pgrep) or by a pid file, checked as a
user's input (an InjectorError with a hint when they are not). The /proc facts under them
are system/procs.py's."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from arraybench.events.errors import InjectorError
from arraybench.system.procs import matching
from arraybench.userfiles import InputFileError, read_whole
from arraybench.userregex import UserRegexError, compile_user_regex

PID_FILE_BYTES = 4096  # a pid and a newline; more is no pid file


def find_processes(pattern: str, *, full: bool = False, exclude: Collection[int] = ()) -> list[int]:
    """Processes whose name (as pgrep) or, with `full`, whole command line (pgrep -f) matches
    the regular expression `pattern` (searched, not anchored, in linear time: userregex.py).
    This process is never listed."""
    try:
        regex = compile_user_regex(pattern, "the signal event's process")
    except UserRegexError as exc:  # the plan's loader refuses it first: a plan made by hand
        raise InjectorError(str(exc), "see `process` in docs/plan.md") from None
    return matching(regex.found, full=full, exclude=exclude)


def read_pid_file(path: str) -> int:
    """The pid written in a pid file (first word); InjectorError when unreadable."""
    try:  # a regular file only, read within PID_FILE_BYTES: a FIFO there must not hang us
        words = read_whole(Path(path), "the pid file", PID_FILE_BYTES).decode().split()
        pid = int(words[0])
    except (InputFileError, OSError, ValueError, IndexError) as exc:
        raise InjectorError(
            f"cannot read a pid from {path}: {exc}", "check the pid_file of the event"
        ) from None
    if pid <= 0:
        raise InjectorError(f"{path} holds no valid pid ({pid})")
    return pid
