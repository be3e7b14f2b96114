"""A point's load on all of its hosts at once: fio's client/server mode through the fleet
(`run/fleet.py`), each host's job file gated to start at one instant; its sidecars are the
integrity writers on the hosts, the events (on the hosts over SSH, or on the controller) and
the live seconds (the hosts' disk counters over SSH: fio's client relays no status reports).
A failed host leaves a partial point.

A logged warm-up (`timing.log_ramp`, run/warmup.py) is its own gated run on every host into
the point's `warmup/` folder, then the measured run (ramp 0) gated afresh: between the two
the hosts are idle for about `start_lead`, a real pause in the load that the `warmup` finding
states (`gap_s`). A host whose warm-up failed is a failed host of the point (it is measured
unwarmed): the point is stored as partial and `on_host_failure` decides, as for the measured
run; no host warmed up at all fails the point."""

from __future__ import annotations

from pathlib import Path

from arraybench.analysis.openloop import open_loop_hosts
from arraybench.engines.fio import runner
from arraybench.finding_kinds import HOSTS, WARMUP, WarmupFinding
from arraybench.hosts import HostError
from arraybench.plan.expand import Point
from arraybench.records import Finding
from arraybench.run.context import RunContext
from arraybench.run.fleet import Fleet, HostRun
from arraybench.run.host_events import HostEvents
from arraybench.run.host_verify import HostsVerify
from arraybench.run.hosts_live import HostsLive
from arraybench.run.injections import StoreInjectionLog
from arraybench.run.load import LoadResult, LoadStart
from arraybench.run.openloop_watch import (
    HOST_RESOLUTION_S,
    hosts_finding,
    intended_iops,
    second_rows,
    with_knee,
)
from arraybench.run.sidecar import Sidecar
from arraybench.run.warmup import FOLDER, logs_ramp, measured_point, warmup_point, warmup_rows


class HostsExecutor:
    def __init__(self, ctx: RunContext, point: Point, folder: Path) -> None:
        assert ctx.fleet is not None
        self.ctx, self.point, self.folder = ctx, point, folder
        self.fleet: Fleet = ctx.fleet
        self.timeout = runner.watchdog_seconds(point.expected_seconds)
        self.ran: HostRun | None = None
        self.logs_ramp = logs_ramp(point)
        self.warm: HostRun | None = None  # the logged warm-up's run, when it ran
        self.warm_data: WarmupFinding | None = None

    def sidecars(self) -> list[Sidecar]:
        ctx, point, fleet = self.ctx, self.point, self.fleet
        found: list[Sidecar] = []
        if point.workload.verify is not None:  # first: its regions out of fio's sizes
            found.append(HostsVerify(point, fleet.hosts, fleet.specs, run_id=ctx.run.id,
                                     folder=self.folder, allow_destroy=ctx.settings.allow_destroy,
                                     limit_s=self.timeout + fleet.start_lead_s))  # fmt: skip
        if point.workload.events:
            journal = StoreInjectionLog(ctx.results_dir, ctx.run.id, point.key)
            found.append(HostEvents(point, fleet.specs, journal, self.folder,
                                    confirm=ctx.prompt_with()))  # fmt: skip
        # last: its ssh loops stop after the writers and the events; they start with the
        # measured run, so its seconds left are the measured run's (no ramp after a warm-up)
        live = measured_point(point) if self.logs_ramp else point
        found.append(HostsLive(ctx.observer, live, fleet.specs, fleet.targets, fleet.live_said))
        return found

    def warm_up(self, sizes: dict[str, int]) -> Finding | None:
        """The ramp as its own gated run on every host (`timing.log_ramp`): its `warmup`
        finding holds the hosts' per-second totals, as the measured run's samples do."""
        if not self.logs_ramp:
            return None
        warm, key, place = warmup_point(self.point), self.point.key, self.folder / FOLDER
        place.mkdir(parents=True, exist_ok=True)
        tick = lambda elapsed: self.ctx.observer.point_tick(self.point, elapsed)  # noqa: E731
        ran = self.fleet.run_load(warm, place, sizes, f"run {self.ctx.run.id}, warm-up",
                                  runner.watchdog_seconds(warm.expected_seconds),
                                  on_tick=tick)  # fmt: skip
        if not ran.jobs:
            raise HostError(f"point {key}: no host returned the warm-up's results "
                            f"({'; '.join(ran.finding['failures'].values())})",
                            f"see {place}")  # fmt: skip
        runner.check_job_errors(f"{key} (warm-up)", ran.jobs, place)
        self.warm = ran
        self.warm_data = WarmupFinding(seconds=self.point.timing.ramp,
                                       samples=warmup_rows(ran.samples),
                                       hosts=list(ran.finding["hosts"]),
                                       failed_hosts=list(ran.failed), gap_s=None)  # fmt: skip
        return WARMUP.new(self.warm_data)

    def run(self, sizes: dict[str, int], sidecars: Sidecar) -> None:
        ramp = self.point.timing.ramp if self.warm else 0.0  # the point's time counts it

        def tick(elapsed: float) -> None:
            self.ctx.observer.point_tick(self.point, ramp + elapsed)
            sidecars.tick(ramp + elapsed)

        self.ran = self.fleet.run_load(
            measured_point(self.point) if self.warm else self.point,
            self.folder,
            sizes,
            f"run {self.ctx.run.id}",
            self.timeout,
            on_start=lambda t0: sidecars.load_started(LoadStart(t0)),
            on_tick=tick,
        )

    def result(self) -> LoadResult:
        ran, key = self.ran, self.point.key
        assert ran is not None
        if not ran.jobs:
            raise HostError(f"point {key}: no host returned results "
                            f"({'; '.join(ran.finding['failures'].values())})",
                            f"see {self.folder}")  # fmt: skip
        runner.check_job_errors(key, ran.jobs, self.folder)
        failed, failure = failed_hosts(key, ran, self.warm)
        if self.warm is not None and self.warm_data is not None:  # the finding, now complete
            self.warm_data["gap_s"] = warmup_gap_s(self.warm, ran, self.point.timing.ramp)
        spread = self.ctx.settings.max_start_spread_s * 1000
        return LoadResult(
            ran.jobs,
            ran.samples,
            ran.elapsed_s,
            ran.engine_version,
            [HOSTS.new(ran.finding), *self._open_loop(ran)],
            host_samples=ran.host_samples,
            max_start_spread_ms=spread,
            hosts=len(self.point.level.hosts),
            partial=int(bool(failed)),
            failed_hosts=",".join(failed),
            start_spread_ms=ran.spread_ms,
            failure=failure,
            bins_in_jobs=False,
        )

    def _open_loop(self, ran: HostRun) -> list[Finding]:
        """A rate-limited point's open-loop figures, per host (each runs the point's rate,
        against its own schedule) and in total, from the hosts' 1-second samples (on the
        controller's clock)."""
        rate = intended_iops(self.point)
        if rate is None:
            return []
        rows = {name: second_rows(samples) for name, samples in ran.host_samples.items()}
        figures = open_loop_hosts(rows, dict.fromkeys(rows, rate), HOST_RESOLUTION_S * 1000,
                                  stuck_limit_s=self.point.timing.stuck_io)  # fmt: skip
        return [] if figures is None else [with_knee(hosts_finding(figures), self.point)]


def failed_hosts(key: str, ran: HostRun, warm: HostRun | None) -> tuple[list[str], str | None]:
    """The hosts that failed in the measured run or in its warm-up, and the line saying so
    (None when every host ran both): a host measured unwarmed is a failed host of the point."""
    warm_failed = warm.failed if warm is not None else []
    failed = [*ran.failed, *(h for h in warm_failed if h not in ran.failed)]
    if not failed:
        return [], None
    parts = []
    if ran.failed:
        why = "; ".join(ran.finding["failures"].values())
        parts.append(f"host(s) {', '.join(ran.failed)} failed ({why})")
    if warm is not None and warm_failed:
        why = "; ".join(warm.finding["failures"].values())
        parts.append(f"host(s) {', '.join(warm_failed)} failed in the warm-up ({why})")
    return failed, f"point {key}: {'; '.join(parts)}; stored as partial"


def warmup_gap_s(warm: HostRun, ran: HostRun, ramp_s: float) -> float:
    """Seconds without load between the warm-up's end (its last host's start + the ramp) and
    the measured run's first host start; from the start gates where the logs gave no start."""
    ends = [start + ramp_s * 1000 for start in warm.finding["start_ms"].values()]
    starts = list(ran.finding["start_ms"].values())
    if ends and starts:
        return round((min(starts) - max(ends)) / 1000, 3)
    planned_end = warm.finding["start_gate_ms"] + ramp_s * 1000
    return round((ran.finding["start_gate_ms"] - planned_end) / 1000, 3)
