"""A many-host point's controller-side events: `run` commands and operator `prompt`s.

They run on the controller, on the point's clock (t0: the instant every host starts its I/O),
and are reverted (a `run`'s `revert`, a prompt's `revert_text`) after the point's load and its
integrity writers have stopped and before the integrity read-back, as on a local point.
Events that act on a host's devices or processes (throttle, netem, signal, scsi_offline) are
not applied on many-host points here: they act on the hosts over SSH (events on hosts).
"""

from __future__ import annotations

from collections.abc import Callable

from arraybench.events.timeline import EventTimeline
from arraybench.plan.expand import Point

CONTROLLER_KINDS = ("run", "prompt")


def controller_timeline(
    point: Point, confirm: Callable[[str], None] | None
) -> EventTimeline | None:
    """The point's `run` and `prompt` events as a timeline (None when it has none)."""
    events = [e for e in point.workload.events if e.kind in CONTROLLER_KINDS]
    if not events:
        return None
    return EventTimeline(events, list, confirm=confirm, interactive=confirm is not None)
