"""A point's load on all of its hosts at once: fio's client/server mode through the fleet
(`run/fleet.py`), each host's job file gated to start at one instant; its sidecars are the
integrity writers on the hosts, the events (on the hosts over SSH, or on the controller) and
the live seconds (the hosts' disk counters over SSH: fio's client relays no status reports).
A failed host leaves a partial point."""

from __future__ import annotations

from pathlib import Path

from arraybench.engines.fio import runner
from arraybench.finding_kinds import HOSTS
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
from arraybench.run.sidecar import Sidecar


class HostsExecutor:
    def __init__(self, ctx: RunContext, point: Point, folder: Path) -> None:
        assert ctx.fleet is not None
        self.ctx, self.point, self.folder = ctx, point, folder
        self.fleet: Fleet = ctx.fleet
        self.timeout = runner.watchdog_seconds(point.expected_seconds)
        self.ran: HostRun | None = None

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
        # last: its ssh loops stop after the writers and the events
        found.append(HostsLive(ctx.observer, point, fleet.specs, fleet.targets, fleet.live_said))
        return found

    def warm_up(self, sizes: dict[str, int]) -> Finding | None:
        return None  # `log_ramp` is a local point's

    def run(self, sizes: dict[str, int], sidecars: Sidecar) -> None:
        self.ran = self.fleet.run_load(
            self.point,
            self.folder,
            sizes,
            f"run {self.ctx.run.id}",
            self.timeout,
            on_start=lambda t0: sidecars.load_started(LoadStart(t0)),
        )

    def result(self) -> LoadResult:
        ran, key = self.ran, self.point.key
        assert ran is not None
        if not ran.jobs:
            raise HostError(f"point {key}: no host returned results "
                            f"({'; '.join(ran.finding['failures'].values())})",
                            f"see {self.folder}")  # fmt: skip
        runner.check_job_errors(key, ran.jobs, self.folder)
        failure = None
        if ran.failed:
            why = "; ".join(ran.finding["failures"].values())
            failure = (
                f"point {key}: host(s) {', '.join(ran.failed)} failed ({why}); stored as partial"
            )
        spread = self.ctx.settings.max_start_spread_s * 1000
        return LoadResult(
            ran.jobs,
            ran.samples,
            ran.elapsed_s,
            ran.fio_version,
            [HOSTS.new(ran.finding)],
            host_samples=ran.host_samples,
            max_start_spread_ms=spread,
            hosts=len(self.point.level.hosts),
            partial=int(bool(ran.failed)),
            failed_hosts=",".join(ran.failed),
            start_spread_ms=ran.spread_ms,
            failure=failure,
            bins_in_jobs=False,
        )
