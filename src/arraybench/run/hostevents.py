"""A many-host point's controller-side events: `run` commands and operator `prompt`s.

They run on the controller, on the point's clock (t0: the instant every host starts its I/O),
and are reverted (a `run`'s `revert`, a prompt's `revert_text`) after the point's load and its
integrity writers have stopped and before the integrity read-back, as on a local point.
Events that act on a host's devices or processes (throttle, netem, signal, scsi_offline) are
not applied on many-host points here: they act on the hosts over SSH (events on hosts, whose
``HostPointEvents`` has the same three methods and takes this class's place).
"""

from __future__ import annotations

from collections.abc import Callable

from arraybench.events.timeline import EventTimeline
from arraybench.plan.expand import Point

CONTROLLER_KINDS = ("run", "prompt")


class ControllerEvents:
    def __init__(self, point: Point, confirm: Callable[[str], None] | None) -> None:
        events = [e for e in point.workload.events if e.kind in CONTROLLER_KINDS]
        self.timeline = EventTimeline(events, list, confirm=confirm,
                                      interactive=confirm is not None)  # fmt: skip

    @classmethod
    def of(cls, point: Point, confirm: Callable[[str], None] | None) -> ControllerEvents | None:
        """None when the point has no controller-side event."""
        if not any(e.kind in CONTROLLER_KINDS for e in point.workload.events):
            return None
        return cls(point, confirm)

    def started(self, t0: float) -> None:
        """t0: the instant every host's I/O starts (Unix seconds)."""
        self.timeline.start(t0)

    def finish(self) -> None:
        """Every event still applied is reverted (always called)."""
        self.timeline.stop()

    def failed_lines(self) -> list[str]:
        return [f"event {r.label} ({r.action}): {r.outcome}: {r.detail}"
                for r in self.timeline.records() if r.outcome != "ok"]  # fmt: skip
