"""`signal`: processes frozen with SIGSTOP, let go on with SIGCONT at revert."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from arraybench.plan.event_kinds.base import EventKind
from arraybench.plan.types import Bool, PositiveInt, Strict
from arraybench.userregex import compile_user_regex


class SignalAction(Strict):
    """Freeze processes (SIGSTOP) and let them go on at revert (SIGCONT)."""

    pid: PositiveInt | None = Field(None, description="The process id to freeze.")
    pid_file: str | None = Field(
        None, min_length=1, description="A file holding the process id to freeze."
    )
    # a regular expression searched in the process name (as pgrep), or in the whole command
    # line with `full: true` (as pgrep -f)
    process: str | None = Field(
        None,
        min_length=1,
        description=(
            "A regular expression searched in process names (as pgrep), "
            "or in whole command lines with `full: true`. Matched in linear time (RE2 "
            "syntax): no backreferences or lookaround."
        ),
    )
    full: Bool = Field(
        False, description=("Match `process` against the whole command line (as pgrep -f).")
    )
    load: Bool = Field(
        False,
        description=(
            "The point's fio job processes (on a host: the job processes of its fio server)."
        ),
    )

    @model_validator(mode="after")
    def _one_selector(self) -> SignalAction:
        given = [n for n in ("pid", "pid_file", "process") if getattr(self, n) is not None]
        given += ["load"] if self.load else []
        if len(given) != 1:
            raise ValueError("give exactly one of pid, pid_file, process or load: true")
        if self.full and self.process is None:
            raise ValueError("full applies to process only")
        return self

    @field_validator("process")
    @classmethod
    def _valid_pattern(cls, pattern: str | None) -> str | None:
        if pattern is not None:  # matched in linear time (RE2): refused here if it cannot be
            compile_user_regex(pattern, "process")  # UserRegexError is a ValueError
        return pattern


def describe(action: SignalAction) -> str:
    if action.pid is not None:
        return f"stop pid {action.pid}"
    if action.pid_file is not None:
        return f"stop pid from {action.pid_file}"
    if action.load:
        return "stop the load"
    return f"stop /{action.process}/"


KIND = EventKind(
    "signal",
    SignalAction,
    "Freeze processes with SIGSTOP, SIGCONT at revert.",
    describe,
    examples="""\
  - {at: 5s, duration: 3s, signal: {process: '^iscsid$'}}   # SIGSTOP, SIGCONT at revert
""",
    more_examples="""\
  - {at: 5s, duration: 3s, signal: {pid_file: /run/iscsid.pid}}
  - {at: 5s, duration: 3s, signal: {pid: 4242}}
  - {at: 5s, duration: 3s, signal: {process: multipathd, full: true}}
""",
)
