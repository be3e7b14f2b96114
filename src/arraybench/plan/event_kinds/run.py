"""`run`: a command (never through a shell) at the event, its `revert` command at the end."""

from __future__ import annotations

from pydantic import BeforeValidator, Field

from arraybench.plan.event_kinds.base import Argv, Duration, EventKind, _argv_form
from arraybench.plan.types import Strict


class RunAction(Strict):
    """Run a command (never through a shell). A failure or a timeout is recorded, the load goes
    on. `revert` runs when the event ends."""

    argv: Argv = Field(description="The command and its arguments (never through a shell).")
    timeout: Duration = Field(
        60.0, description=("The command is killed after this long (recorded as a failure).")
    )
    revert: Argv | None = Field(None, description="A command run when the event ends.")


def describe(action: RunAction) -> str:
    return f"run {action.argv[0]}"


KIND = EventKind(
    "run",
    RunAction,
    "Run a command (a list is its argv).",
    describe,
    hosts="named",
    short_form=BeforeValidator(_argv_form),
    examples="""\
  - {at: 10s, run: [systemctl, stop, iscsid]}            # short form of run: {argv: [...]}
  - {at: 10s, run: {argv: [/usr/local/bin/fail-a], timeout: 30s, revert: [/usr/local/bin/heal-a]}}
""",
)
