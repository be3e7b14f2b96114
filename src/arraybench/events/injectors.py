"""What every injector is (`Injector`), and commands run with a time limit (`run_command`).
Each kind's injectors are in events/event_kinds/.

`apply()` returns what was done (one line) or raises InjectorError; `revert()` undoes it,
returns what it did and may be called any number of times (after the first it has nothing
left to do). `applied` says whether something is in place that a revert would undo, also
after an `apply()` that failed half-way.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from arraybench.events.journal import Journaled

OUTPUT_LIMIT = 2000  # characters of a command's output kept in the record

PidSource = Callable[[], list[int]]


class Injector(Journaled, ABC):
    kind: ClassVar[str]
    label: str = ""  # the event's name, for the journal
    last_exit_code: int | None = None
    last_output: str = ""

    @abstractmethod
    def apply(self) -> str: ...

    @abstractmethod
    def revert(self) -> str: ...

    @property
    @abstractmethod
    def applied(self) -> bool: ...

    def refresh(self) -> None:
        """Called about once a second while applied (e.g. to catch new load processes)."""


# --------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class CommandResult:
    outcome: str  # ok | failed | timeout
    exit_code: int | None
    output: str  # stdout and stderr together, trimmed
    elapsed_s: float
    detail: str


def trim_output(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """The head and tail of a long output with a marker between."""
    text = text.strip()
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters left out ...]\n{text[-half:]}"


def run_command(argv: Sequence[str], timeout_s: float) -> CommandResult:
    """Run argv (no shell) in its own session; on timeout kill it and all it started."""
    shown = " ".join(argv)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return CommandResult(
            "failed", None, "", 0.0, f"`{shown}` could not start: {exc.strerror or exc}"
        )
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:
            out, _ = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            out = b""
        elapsed = time.monotonic() - start
        return CommandResult(
            "timeout",
            proc.returncode,
            trim_output(out.decode(errors="replace")),
            elapsed,
            f"`{shown}` ran past its timeout of {timeout_s:g}s and was killed",
        )
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    elapsed = time.monotonic() - start
    output = trim_output(out.decode(errors="replace"))
    if proc.returncode != 0:
        return CommandResult(
            "failed",
            proc.returncode,
            output,
            elapsed,
            f"`{shown}` exited with code {proc.returncode} after {elapsed:.1f}s",
        )
    return CommandResult("ok", 0, output, elapsed, f"`{shown}` done in {elapsed:.1f}s")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
