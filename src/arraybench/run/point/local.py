"""A point's load here: the run's engine (`ctx.engine`: fio unless the plan names another)
on the point's job, beside the controller's monitor, the live stream and (for events and
verify) the local sidecars; the targets rechecked before and pinned while the load runs
(it opens what was checked)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from arraybench.engines.base import RunOutcome, RunSpec
from arraybench.plan.expand import Point
from arraybench.records import Finding
from arraybench.run.context import RunContext
from arraybench.run.injections import StoreInjectionLog
from arraybench.run.live_feed import LiveFeed
from arraybench.run.load import LoadResult, LoadStart
from arraybench.run.local_events import LocalEvents
from arraybench.run.local_monitor import LocalMonitor
from arraybench.run.local_verify import LocalVerify
from arraybench.run.openloop_watch import OpenLoopWatch, intended_iops
from arraybench.run.sidecar import Sidecar
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
        self.open_loop: OpenLoopWatch | None = None
        if intended_iops(point) is not None and ctx.engine.capabilities.open_loop_logs:
            self.open_loop = OpenLoopWatch(point, folder, point.timing.stuck_io,
                                           live_iops=self.monitor.live_iops,
                                           end_on_stuck=point.timing.end_on_stuck_io)  # fmt: skip
        events = self.events.records if self.events else list
        self.feed = LiveFeed(ctx.observer, point, ctx.engine.live_reader(folder), events=events)
        self.ramp = 0.0  # the ramp already run as a warm-up phase
        self.outcome: RunOutcome | None = None

    def sidecars(self) -> list[Sidecar]:
        # the writer stops before the events are reverted; the monitor samples to the end
        found: list[Sidecar | None] = [self.verify, self.events, self.open_loop, self.feed,
                                       self.monitor]  # fmt: skip
        return [s for s in found if s is not None]

    def _paths(self) -> list[str]:
        return [t.path for t in self.point.targets]

    def warm_up(self, sizes: dict[str, int]) -> Finding | None:
        self.ctx.guard.recheck(self._paths())  # a link swapped since the check
        if not logs_ramp(self.point):
            return None
        tick = lambda elapsed: self.ctx.observer.point_tick(self.point, elapsed)  # noqa: E731
        with self.ctx.guard.pinned(self._paths()) as pins:
            found = run_warmup(self.point, self.folder, sizes, title=f"run {self.ctx.run.id}",
                               engine=self.ctx.engine, on_tick=tick, pins=pins)  # fmt: skip
        self.ramp = self.point.timing.ramp
        return found

    def run(self, sizes: dict[str, int], sidecars: Sidecar) -> None:
        engine, key = self.ctx.engine, self.point.key
        point = measured_point(self.point) if self.ramp else self.point
        job = self.folder / engine.job_name
        job.write_text(engine.point_job(point, sizes, title=f"run {self.ctx.run.id}"))

        def tick(elapsed: float) -> None:  # the point's time counts the warm-up's too
            self.ctx.observer.point_tick(self.point, self.ramp + elapsed)
            sidecars.tick(self.ramp + elapsed)

        def started(pid: int) -> None:
            sidecars.load_started(LoadStart(time.time(), pid))

        with self.ctx.guard.pinned(self._paths()) as pins:  # what the load opens: checked
            spec = RunSpec(key, engine.watchdog_seconds(self.point.expected_seconds),
                           on_tick=tick, on_start=started, pins=pins,
                           status_interval_s=self.feed.interval)  # fmt: skip
            self.outcome = engine.run(job, spec)

    def result(self) -> LoadResult:
        assert self.outcome is not None
        engine = self.ctx.engine
        document = engine.results(self.outcome, self.point.key)  # a failed job refused there
        samples = engine.samples(self.folder)
        kinds = self.ctx.target_kinds
        files = all(kinds.get(t.path) in ("file", "new-file") for t in self.point.targets)
        return LoadResult(document.jobs, samples, self.outcome.elapsed_s, document.engine_version,
                          monitor=self.monitor.view(samples), cpus=os.cpu_count(),
                          file_target=files)  # fmt: skip
