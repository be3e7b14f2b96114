"""What runs beside one point's fio: its event timeline and its integrity writer.

Both start when fio starts and end when it ends; events are reverted before anything is
stored, whatever happened (the timeline's own guarantee). The integrity check reads every
acknowledged block back after the events, so a failover's lost writes show up.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arraybench.analysis.events import event_impact, windows_from_records
from arraybench.analysis.steady import steady_state
from arraybench.engines.measurement import Measurement
from arraybench.events.journal import InjectionLog
from arraybench.events.paths import snapshot_paths
from arraybench.events.timeline import EventTimeline
from arraybench.finding_kinds import (
    EVENTS,
    INTEGRITY,
    EventImpactData,
    EventRecordData,
    PathLine,
    fields_of,
)
from arraybench.integrity import IntegrityReport, check_region
from arraybench.integrity.writer import WriterConfig, spawn_writer, stop_writer, supports_direct
from arraybench.plan.expand import Point
from arraybench.store.db import Finding, Sample
from arraybench.system.procs import process_tree_pids

POINT_ENV = ("ARRAYBENCH_POINT_DIR", "ARRAYBENCH_POINT_KEY")
STEADY_WINDOW_S = 5  # SNIA's window, on the kernel's per-second IOPS of the targets


class PointExtras:
    def __init__(
        self,
        point: Point,
        folder: Path,
        sizes: dict[str, int],
        *,
        live_iops: Callable[[], list[float]],
        confirm: Callable[[str], None] | None,
        allow_destroy: Sequence[str] = (),
        journal: InjectionLog | None = None,
    ) -> None:
        self.point = point
        self.folder = folder
        self.sizes = dict(sizes)
        self.live_iops = live_iops
        self.confirm = confirm
        self.allow_destroy = tuple(allow_destroy)
        self.journal = journal  # every injection written down before it is applied
        self.fio_pid: int | None = None
        self.started_unix: float | None = None
        self.timeline: EventTimeline | None = None
        self.writer: Any = None
        self.writer_error: str | None = None
        self.paths: dict[str, list[PathLine]] = {}
        self.integrity: IntegrityReport | None = None

    # -- before fio ------------------------------------------------------------------------
    @property
    def verify_target(self) -> str | None:
        return self.point.targets[0].path if self.point.workload.verify else None

    def fio_sizes(self) -> dict[str, int]:
        """Target sizes as fio sees them: the verify region is kept out of its load."""
        target, verify = self.verify_target, self.point.workload.verify
        if target is None or verify is None:
            return self.sizes
        return {**self.sizes, target: self.sizes[target] - verify.region}

    def _snapshot(self, moment: str) -> None:
        targets = [t.path for t in self.point.targets]
        for path, state in snapshot_paths(targets).items():
            self.paths.setdefault(moment, []).append({"target": path, "line": state.describe()})

    # -- while fio runs --------------------------------------------------------------------
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

    def started(self, fio_pid: int) -> None:
        self.fio_pid, self.started_unix = fio_pid, time.time()
        # `run` commands (and their reverts) learn which point they act on
        os.environ.update(dict(zip(POINT_ENV, (str(self.folder), self.point.key), strict=True)))
        self._snapshot("before")
        verify = self.point.workload.verify
        if verify is not None and self.verify_target:
            size = self.sizes[self.verify_target]
            cfg = WriterConfig(
                path=self.verify_target, length=verify.region, offset=size - verify.region,
                block_size=verify.block_size, direct=self.point.direct, iops=verify.iops,
                allow_destroy=self.allow_destroy,
            )  # fmt: skip
            self.writer = spawn_writer(cfg, self.folder / "integrity.journal")
        events = self.point.workload.events
        if events:
            self.timeline = EventTimeline(
                events, self._pids, confirm=self.confirm, interactive=self.confirm is not None,
                steady=self._steady, on_record=self._on_record, journal=self.journal,
            )  # fmt: skip
            self.timeline.start(self.started_unix)

    def _on_record(self, record: Any) -> None:
        if record.action in ("apply", "prompt", "run") and record.outcome == "ok":
            self._snapshot(f"during {record.label}")

    # -- after fio -------------------------------------------------------------------------
    def finish(self) -> None:
        """Revert every event, stop the writer, read back every acknowledged block."""
        # the writer stops with the load; the reverts come after it (a failback that loses
        # cached writes does so after the last acknowledged write), then the read-back
        try:
            if self.writer is not None:
                try:
                    stop_writer(self.writer)
                except Exception as exc:  # the check below still reads what was journaled
                    self.writer_error = str(exc)
        finally:
            if self.timeline is not None:
                self.timeline.stop()
            for name in POINT_ENV:
                os.environ.pop(name, None)
        if self.started_unix is not None:
            self._snapshot("after")
        if self.writer is not None and self.verify_target:
            direct = self.point.direct and supports_direct(self.verify_target)
            self.integrity = check_region(self.verify_target, self.folder / "integrity.journal",
                                          direct=direct)  # fmt: skip

    def findings(self, samples: Sequence[Sample], jobs: Sequence[Measurement]) -> list[Finding]:
        found = []
        io_errors = sum(j.total_err for j in jobs)
        if self.timeline is not None:
            records = self.timeline.records()
            impact = event_impact(samples, windows_from_records(records))
            found.append(EVENTS.new({
                "records": [fields_of(EventRecordData, r) for r in records],
                "impact": [fields_of(EventImpactData, i) for i in impact],
                "paths": self.paths, "io_errors": io_errors,
                "t0_unix": self.started_unix,
            }))  # fmt: skip
        if self.integrity is not None:
            data = self.integrity.as_dict()
            data |= {"summary": self.integrity.summary_line(), "writer_error": self.writer_error}
            found.append(Finding(None, INTEGRITY.name, data))  # keys checked by the store
        return found

    @property
    def integrity_failed(self) -> bool:
        return self.integrity is not None and not self.integrity.clean
