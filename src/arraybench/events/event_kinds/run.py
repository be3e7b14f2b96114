"""`run` at run time: a command (no shell) at the event and its `revert` command at the end,
here or on a host under its `timeout`; the journal keeps the revert command, which `arraybench
revert` runs only when the run's plan names it."""

from __future__ import annotations

import math
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arraybench.events import remote as sh
from arraybench.events.entries import Refused, mapping, text, type_word
from arraybench.events.errors import InjectorError
from arraybench.events.event_kinds import Runtime
from arraybench.events.injectors import Injector, PidSource, run_command
from arraybench.events.journal import Injection
from arraybench.plan.event_kinds.run import RunAction
from arraybench.plan.events import Event

SSH_SLACK_S = 15.0  # a command's own timeout runs on the host; ssh gets this much more
MAX_ARGV = 256
MAX_TIMEOUT_S = 86400.0

# args: TIMEOUT ARGV...: the command under the host's `timeout` when it has one
_RUN = r"""t=$1; shift
if command -v timeout >/dev/null 2>&1; then exec timeout -k 5 "$t" "$@"; fi
exec "$@"
"""


class CommandInjector(Injector):
    """`run`: a command at the event, and its `revert` command (if any) at the end."""

    kind = "run"

    def __init__(self, action: RunAction) -> None:
        self.action = action
        self._started = False

    @property
    def applied(self) -> bool:
        return self._started and self.action.revert is not None

    def _run(self, argv: Sequence[str]) -> str:
        result = run_command(argv, self.action.timeout)
        self.last_exit_code = result.exit_code
        self.last_output = result.output
        if result.outcome != "ok":
            raise InjectorError(
                result.detail,
                outcome=result.outcome,
                returncode=result.exit_code,
                output=result.output,
            )
        return result.detail

    def apply(self) -> str:
        if self.action.revert is not None:  # a killed controller leaves its revert undone
            undo = {"revert": list(self.action.revert), "timeout": self.action.timeout}
            self._journal(Injection(self.kind, self.label, undo=undo))
        self._started = True
        return self._run(self.action.argv)

    def revert(self) -> str:
        if not self.applied or self.action.revert is None:
            return "nothing to revert"
        self._started = False  # a revert command runs once, whatever its outcome
        done = self._run(self.action.revert)
        self._undone()
        return done


class HostCommand(CommandInjector):
    """`run` on a host: the argv over SSH, under the host's `timeout`; `revert` the same."""

    def __init__(self, remote: sh.Remote, action: RunAction) -> None:
        super().__init__(action)
        self.remote = remote

    def _run(self, argv: Sequence[str]) -> str:
        shown = f"host {self.remote.name}: `{' '.join(argv)}`"
        done = run_argv(self.remote, list(argv), self.action.timeout)
        self.last_exit_code = done.returncode
        self.last_output = (done.stdout + done.stderr).strip()[-2000:]
        if done.returncode == 124:  # timeout(1)'s word for "killed at the timeout"
            raise InjectorError(
                f"{shown} ran past its timeout of {self.action.timeout:g}s",
                outcome="timeout",
                returncode=124,
                output=self.last_output,
            )
        if done.returncode != 0:
            raise InjectorError(
                f"{shown} exited with code {done.returncode}",
                returncode=done.returncode,
                output=self.last_output,
            )
        return f"{shown} done"

    def apply(self) -> str:
        if self.action.revert is not None:
            undo = {"revert": list(self.action.revert), "timeout": self.action.timeout}
            self._journal(Injection(self.kind, self.label, self.remote.name,
                                    self.remote.reach(), undo))  # fmt: skip
        self._started = True
        return self._run(self.action.argv)


def run_argv(
    remote: sh.Remote, argv: list[str], timeout_s: float
) -> subprocess.CompletedProcess[str]:
    return remote.run(_RUN, f"{timeout_s:g}", *argv, timeout_s=timeout_s + SSH_SLACK_S)


# ------------------------------------------------------------------ the journal, revert


@dataclass(frozen=True)
class CommandUndo:
    argv: tuple[str, ...]
    timeout: float


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Refused(f"{what} {value!r} is not a number")
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT_S):
        raise Refused(f"{what} {value!r} is not between 0 and {MAX_TIMEOUT_S:g} seconds")
    return float(value)


def _check(undo: Mapping[str, object], host: str) -> CommandUndo:
    mapping(undo, "undo", {"revert", "timeout"}, {"revert"})
    argv = undo["revert"]
    if not isinstance(argv, list) or not argv or len(argv) > MAX_ARGV:
        raise Refused(f"revert is {type_word(argv)}, not a list of 1 to {MAX_ARGV} arguments")
    words = tuple(text(a, "revert argument") for a in argv)
    if not words[0] or any("\0" in w for w in words):
        raise Refused("revert has an empty command or a NUL byte")
    timeout = undo.get("timeout")
    return CommandUndo(words, 60.0 if timeout is None else _number(timeout, "timeout"))


def _undo(u: Any, remote: sh.Remote | None) -> str:
    assert isinstance(u, CommandUndo)
    argv = list(u.argv)
    if remote is not None:
        done = run_argv(remote, argv, u.timeout)
        if done.returncode != 0:
            raise InjectorError(f"`{' '.join(argv)}` exited with code {done.returncode}", None)
        return f"`{' '.join(argv)}` done"
    result = run_command(argv, u.timeout)
    if result.outcome != "ok":
        raise InjectorError(result.detail, None)
    return result.detail


def _named_by(u: Any, events: list[Event]) -> str | None:
    assert isinstance(u, CommandUndo)
    commands = {tuple(e.action.revert) for e in events
                if isinstance(e.action, RunAction) and e.action.revert is not None}  # fmt: skip
    if u.argv not in commands:
        return f"`{' '.join(u.argv)}` is no revert command of the run's plan"
    return None


def _local(action: RunAction, pids: PidSource, sys_root: str) -> Injector:
    return CommandInjector(action)


RUNTIME = Runtime(_local, HostCommand, _check, _undo, runs_apart=True, plan_guard=_named_by)
