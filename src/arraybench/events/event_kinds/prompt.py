"""`prompt` at run time: nothing to inject; the timeline asks the operator (events/timeline.py)
and records what was confirmed or assumed. Never on a host, never journaled."""

from __future__ import annotations

from arraybench.events.event_kinds import Runtime

RUNTIME = Runtime(None)
