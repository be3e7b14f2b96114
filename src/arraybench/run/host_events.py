"""The events of a point run on many hosts: the same timeline and records as a local point,
the injections done on the hosts over SSH (events.host_injectors), the impact measured on
each host's own seconds and on the total.

A sidecar of the point (`run/sidecar.py`): `start` before fio's client, `load_started` with
the gated start instant (every host's fio starts then), `stop` always (every event
reverted), then `findings` and `lines`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from arraybench.analysis.events import event_impact, windows_from_records
from arraybench.events.event_kinds import make_injector
from arraybench.events.host_injectors import hosts_injector
from arraybench.events.injectors import Injector, PidSource
from arraybench.events.journal import InjectionLog
from arraybench.events.timeline import EventTimeline
from arraybench.finding_kinds import EVENTS, EventImpactData, EventRecordData, fields_of
from arraybench.hosts.server import HostSpec
from arraybench.plan.events import Event
from arraybench.plan.expand import Point
from arraybench.records import Finding
from arraybench.run.load import LoadResult, LoadStart
from arraybench.run.local_events import clear_point_env, failed_lines, set_point_env
from arraybench.run.sidecar import Line, Sidecar

STEADY_WINDOW_S = 5  # no live per-second figures from the hosts: the ramp plus one window


class HostEvents(Sidecar):
    def __init__(
        self,
        point: Point,
        specs: dict[str, HostSpec],
        journal: InjectionLog,
        folder: Path,
        *,
        confirm: Callable[[str], None] | None = None,
    ) -> None:
        self.point = point
        self.specs = specs
        self.journal = journal
        self.folder = folder
        self.confirm = confirm
        self.t0: float | None = None
        self.timeline: EventTimeline | None = None

    def _injector(self, event: Event, pids: PidSource) -> Injector | None:
        on_hosts = hosts_injector(event, self.specs, self.point.level.hosts, self.journal)
        return on_hosts if on_hosts is not None else make_injector(event, pids)

    def _steady(self) -> bool:
        elapsed = time.time() - (self.t0 or time.time())
        return elapsed >= self.point.timing.ramp + STEADY_WINDOW_S

    def start(self) -> None:
        set_point_env(self.folder, self.point.key)

    def load_started(self, load: LoadStart) -> None:
        """Called with the instant every host's fio starts (the start gate)."""
        self.t0 = t0 = load.t0
        self.timeline = EventTimeline(
            self.point.workload.events, list, confirm=self.confirm,
            interactive=self.confirm is not None, steady=self._steady,
            injector_factory=self._injector, journal=self.journal,
        )  # fmt: skip
        self.timeline.start(t0)

    def stop(self) -> None:
        try:
            if self.timeline is not None:
                self.timeline.stop()
        finally:
            clear_point_env()

    def lines(self) -> list[Line]:
        return failed_lines(self.point.key, self.timeline.records() if self.timeline else [])

    def findings(self, result: LoadResult) -> list[Finding]:
        """The `events` finding: records, the impact on the total and on each host."""
        if self.timeline is None:
            return []
        records = self.timeline.records()
        windows = windows_from_records(records)
        per_host: dict[str, list[EventImpactData]] = {
            name: [fields_of(EventImpactData, i) for i in event_impact(samples, windows)]
            for name, samples in sorted(result.host_samples.items())
        }
        errors = {name: sum(j.total_err for j in result.jobs if j.hostname == spec.address)
                  for name, spec in self.specs.items() if name in result.host_samples}  # fmt: skip
        return [EVENTS.new({
            "records": [fields_of(EventRecordData, r) for r in records],
            "impact": [fields_of(EventImpactData, i)
                       for i in event_impact(result.samples, windows)],
            "host_impact": per_host, "host_io_errors": errors,
            "paths": {}, "io_errors": sum(j.total_err for j in result.jobs),
            "t0_unix": self.t0, "hosts": list(self.point.level.hosts),
        })]  # fmt: skip
