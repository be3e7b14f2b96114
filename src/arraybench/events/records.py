"""What happened to each event of a point, as the timeline recorded it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Action = Literal["apply", "revert", "prompt", "run", "skipped"]
Outcome = Literal["ok", "failed", "timeout"]
START_ACTIONS: tuple[str, ...] = ("apply", "prompt", "run")


@dataclass(frozen=True)
class EventRecord:
    """One step of one event.

    `action`: "apply" (an injector), "prompt" (the operator's action, confirmed or assumed),
    "run" (a command), "revert" (the end of the event: injector reverted, revert command or
    revert prompt), "skipped" (never started: the point ended first, or the load never became
    steady; outcome "timeout"). Times are Unix seconds on the timeline's clock. For a prompt,
    `ended_unix` is the operator's action (the confirmation; non-interactive: the time the
    plan gives, then `started_unix` is the same) and `started_unix` when it was shown.
    """

    index: int  # position of the event in the plan's list
    kind: str
    label: str
    action: Action
    outcome: Outcome
    planned_at_s: float | None  # planned offset from the point's start; None: the point's end
    started_unix: float
    ended_unix: float
    detail: str
    output: str = ""  # trimmed stdout + stderr of a command
    exit_code: int | None = None

    @property
    def starts_event(self) -> bool:
        return self.action in START_ACTIONS

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
