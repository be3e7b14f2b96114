"""The event kinds a plan knows, in the order the reference lists them: one line per kind.
A new kind: its action model and `KIND` in a module here, one line below, and what it does
at run time in events/event_kinds/ (a module of the same name); see CONTRIBUTING.md."""

from __future__ import annotations

from arraybench.plan.event_kinds import netem, prompt, run, scsi_offline, signal, throttle
from arraybench.plan.event_kinds.base import EventKind

BUILT_IN: tuple[EventKind, ...] = (
    prompt.KIND,
    run.KIND,
    throttle.KIND,
    netem.KIND,
    signal.KIND,
    scsi_offline.KIND,
)
