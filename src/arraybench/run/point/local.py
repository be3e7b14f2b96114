"""A point's load here: fio on the point's job file, beside the controller's monitor, the
live stream and (for events and verify) the local sidecars; the targets rechecked before
and pinned while fio runs (fio opens what was checked)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from arraybench.engines.fio import runner
from arraybench.engines.fio.jobfile import render_jobfile
from arraybench.engines.fio.parse import parse_fio_json_file
from arraybench.engines.fio.runner import FioOutcome
from arraybench.errors import FioParseError, FioRunError
from arraybench.plan.expand import Point
from arraybench.records import Finding
from arraybench.run.context import RunContext
from arraybench.run.injections import StoreInjectionLog
from arraybench.run.live_feed import LiveFeed
from arraybench.run.load import LoadResult, LoadStart
from arraybench.run.local_events import LocalEvents
from arraybench.run.local_monitor import LocalMonitor
from arraybench.run.local_verify import LocalVerify
from arraybench.run.sidecar import Sidecar
from arraybench.run.timeseries import point_samples
from arraybench.run.warmup import logs_ramp, measured_point, run_warmup


class LocalExecutor:
    def __init__(self, ctx: RunContext, point: Point, folder: Path) -> None:
        self.ctx, self.point, self.folder = ctx, point, folder
        self.monitor = LocalMonitor(point, ctx.settings.monitor)
        self.events: LocalEvents | None = None
        if point.workload.events:
            journal = StoreInjectionLog(ctx.results_dir, ctx.run.id, point.key)
            self.events = LocalEvents(point, folder, live_iops=self.monitor.live_iops,
                                      confirm=ctx.prompt_with(), journal=journal)  # fmt: skip
        self.verify: LocalVerify | None = None
        if point.workload.verify:
            self.verify = LocalVerify(point, folder, ctx.settings.allow_destroy)
        events = self.events.records if self.events else list
        self.feed = LiveFeed(ctx.observer, point, folder, events=events)
        self.ramp = 0.0  # the ramp already run as a warm-up phase
        self.outcome: FioOutcome | None = None

    def sidecars(self) -> list[Sidecar]:
        # the writer stops before the events are reverted; the monitor samples to the end
        found: list[Sidecar | None] = [self.verify, self.events, self.feed, self.monitor]
        return [s for s in found if s is not None]

    def _paths(self) -> list[str]:
        return [t.path for t in self.point.targets]

    def warm_up(self, sizes: dict[str, int]) -> Finding | None:
        self.ctx.guard.recheck(self._paths())  # a link swapped since the check
        if not logs_ramp(self.point, self.events is not None or self.verify is not None):
            return None
        tick = lambda elapsed: self.ctx.observer.point_tick(self.point, elapsed)  # noqa: E731
        with self.ctx.guard.pinned(self._paths()) as pins:
            found = run_warmup(self.point, self.folder, sizes, title=f"run {self.ctx.run.id}",
                               binary=self.ctx.fio, on_tick=tick, pins=pins)  # fmt: skip
        self.ramp = self.point.timing.ramp
        return found

    def run(self, sizes: dict[str, int], sidecars: Sidecar) -> None:
        point = measured_point(self.point) if self.ramp else self.point
        jobfile = self.folder / "point.fio"
        jobfile.write_text(render_jobfile(point, sizes, title=f"run {self.ctx.run.id}"))

        def tick(elapsed: float) -> None:  # the point's time counts the warm-up's too
            self.ctx.observer.point_tick(self.point, self.ramp + elapsed)
            sidecars.tick(self.ramp + elapsed)

        with self.ctx.guard.pinned(self._paths()) as pins:  # what fio opens: checked
            self.outcome = runner.run_jobfile(
                jobfile,
                label=self.point.key,
                timeout_s=runner.watchdog_seconds(self.point.expected_seconds),
                on_tick=tick,
                binary=self.ctx.fio,
                on_start=lambda pid: sidecars.load_started(LoadStart(time.time(), pid)),
                pins=pins,
                status_interval_s=self.feed.interval,
            )

    def result(self) -> LoadResult:
        assert self.outcome is not None
        try:
            document = parse_fio_json_file(self.outcome.json_path)[-1]
        except FioParseError as exc:
            raise FioRunError(f"point {self.point.key}: {exc.message}",
                              f"see {self.folder}") from None  # fmt: skip
        samples = point_samples(self.folder)
        kinds = self.ctx.target_kinds
        files = all(kinds.get(t.path) in ("file", "new-file") for t in self.point.targets)
        return LoadResult(document.jobs, samples, self.outcome.elapsed_s, document.fio_version,
                          monitor=self.monitor.view(samples), cpus=os.cpu_count(),
                          file_target=files)  # fmt: skip
