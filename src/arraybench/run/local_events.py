"""The events of a local point: the plan's timeline beside fio, its injectors acting here
(on fio's processes, the targets' devices, the controller's commands), the target paths'
state snapshotted before, during and after. The timeline starts when fio starts; the events
are reverted when the load ends, whatever happened (the timeline's own guarantee), after
the integrity writer stopped and before its read-back."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arraybench.analysis.events import event_impact, windows_from_records
from arraybench.analysis.steady import steady_state
from arraybench.events.journal import InjectionLog
from arraybench.events.paths import snapshot_paths
from arraybench.events.records import EventRecord
from arraybench.events.timeline import EventTimeline
from arraybench.finding_kinds import EVENTS, EventImpactData, EventRecordData, PathLine, fields_of
from arraybench.plan.expand import Point
from arraybench.records import Finding
from arraybench.run.load import LoadResult, LoadStart
from arraybench.run.sidecar import Line, Sidecar
from arraybench.system.procs import process_tree_pids

POINT_ENV = ("ARRAYBENCH_POINT_DIR", "ARRAYBENCH_POINT_KEY")
STEADY_WINDOW_S = 5  # SNIA's window, on the kernel's per-second IOPS of the targets


def set_point_env(folder: Path, key: str) -> None:
    """`run` commands (and their reverts) learn which point they act on."""
    os.environ.update(dict(zip(POINT_ENV, (str(folder), key), strict=True)))


def clear_point_env() -> None:
    for name in POINT_ENV:
        os.environ.pop(name, None)


def failed_lines(key: str, records: list[EventRecord]) -> list[Line]:
    """A warning for each event step that did not go well."""
    return [Line(True, f"point {key}: event {r.label} ({r.action}): {r.outcome}: {r.detail}")
            for r in records if r.outcome != "ok"]  # fmt: skip


class LocalEvents(Sidecar):
    def __init__(
        self,
        point: Point,
        folder: Path,
        *,
        live_iops: Callable[[], list[float]],
        confirm: Callable[[str], None] | None,
        journal: InjectionLog | None = None,
    ) -> None:
        self.point = point
        self.folder = folder
        self.live_iops = live_iops  # the controller monitor's per-second IOPS so far
        self.confirm = confirm
        self.journal = journal  # every injection written down before it is applied
        self.fio_pid: int | None = None
        self.started_unix: float | None = None
        self.timeline: EventTimeline | None = None
        self.paths: dict[str, list[PathLine]] = {}

    def records(self) -> list[EventRecord]:
        """The point's event records so far (the live view shows them as they happen)."""
        return self.timeline.records() if self.timeline else []

    def _snapshot(self, moment: str) -> None:
        targets = [t.path for t in self.point.targets]
        for path, state in snapshot_paths(targets).items():
            self.paths.setdefault(moment, []).append({"target": path, "line": state.describe()})

    def _steady(self) -> bool:
        """SNIA's window on the kernel's per-second IOPS; without a block device (files on
        tmpfs), the ramp plus one window of seconds stands in."""
        values = self.live_iops()
        if len(values) >= STEADY_WINDOW_S:
            return steady_state(values[-STEADY_WINDOW_S:], window=STEADY_WINDOW_S).steady
        elapsed = time.time() - (self.started_unix or time.time())
        return not values and elapsed >= self.point.timing.ramp + STEADY_WINDOW_S

    def _pids(self) -> list[int]:
        # fio's job processes call setsid(): follow parent links, not the process group
        return process_tree_pids(self.fio_pid) if self.fio_pid else []

    def _on_record(self, record: Any) -> None:
        if record.action in ("apply", "prompt", "run") and record.outcome == "ok":
            self._snapshot(f"during {record.label}")

    def load_started(self, load: LoadStart) -> None:
        self.fio_pid, self.started_unix = load.pid, load.t0
        set_point_env(self.folder, self.point.key)
        self._snapshot("before")
        self.timeline = EventTimeline(
            self.point.workload.events, self._pids, confirm=self.confirm,
            interactive=self.confirm is not None, steady=self._steady,
            on_record=self._on_record, journal=self.journal,
        )  # fmt: skip
        self.timeline.start(self.started_unix)

    def stop(self) -> None:
        """Every event reverted; the paths' state after."""
        try:
            if self.timeline is not None:
                self.timeline.stop()
        finally:
            clear_point_env()
        if self.started_unix is not None:
            self._snapshot("after")

    def findings(self, result: LoadResult) -> list[Finding]:
        if self.timeline is None:
            return []
        records = self.timeline.records()
        impact = event_impact(result.samples, windows_from_records(records))
        return [EVENTS.new({
            "records": [fields_of(EventRecordData, r) for r in records],
            "impact": [fields_of(EventImpactData, i) for i in impact],
            "paths": self.paths, "io_errors": sum(j.total_err for j in result.jobs),
            "t0_unix": self.started_unix,
        })]  # fmt: skip

    def lines(self) -> list[Line]:
        return failed_lines(self.point.key, self.records())
