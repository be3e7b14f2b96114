"""A campaign's hosts: fio servers started (over SSH) or found, checked, and each point run
on all of a scenario's hosts at once through fio's client/server mode."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from arraybench.analysis.hosts import combine_hosts
from arraybench.engines.base import Engine
from arraybench.engines.fio.engine import FioEngine
from arraybench.engines.fio.jobfile import rename_filenames, render_jobfile
from arraybench.engines.measurement import Measurement
from arraybench.errors import UnsafeTargetError
from arraybench.events.journal import Injection, InjectionLog, NoLog
from arraybench.events.sysfs import RemoteSysfs
from arraybench.finding_kinds import HostsFinding
from arraybench.hosts import (
    HostError,
    HostSpec,
    MultiHostOutcome,
    SshSpec,
    TargetSafety,
    aligned_per_second,
    check_hosts,
    run_on_hosts,
    start_server_over_ssh,
    stop_server_over_ssh,
)
from arraybench.hosts.server import remote_pidfile
from arraybench.plan.expand import Point, host_point
from arraybench.plan.model import Host, Plan
from arraybench.records import Sample
from arraybench.run.host_verify import check_hosts_can_verify
from arraybench.targets.actions import target_uses, writers_of


def fleet_binary(engine: Engine) -> str:
    """The controller's fio: many hosts run fio's client/server mode, whatever the engine
    (`run.plan_values` refuses another `engine:` with hosts)."""
    return engine.binary if isinstance(engine, FioEngine) else FioEngine().binary


def host_spec(host: Host) -> HostSpec:
    ssh = None
    if host.ssh:
        s = host.ssh
        key = Path(s.key) if s.key else None
        pinned = (f"UserKnownHostsFile={s.known_hosts}", "StrictHostKeyChecking=yes")
        ssh = SshSpec(user=s.user, host=s.host, port=s.port, identity_file=key, fio=s.fio,
                      options=pinned if s.known_hosts else ())  # fmt: skip
    return HostSpec(host.name, host.address, host.port, ssh)


@dataclass
class HostRun:
    """One point on several hosts: every host's jobs, the aligned totals, who failed."""

    jobs: list[Measurement]
    samples: list[Sample]
    finding: HostsFinding
    failed: list[str] = field(default_factory=list)
    spread_ms: float | None = None
    engine_version: str | None = None
    elapsed_s: float = 0.0
    host_samples: dict[str, list[Sample]] = field(default_factory=dict)  # per host, aligned


def _column(
    outcome: MultiHostOutcome, kind: str, ddir: int, scale: float = 1.0
) -> dict[int, float]:
    return {t: v * scale for t, v in aligned_per_second(outcome, kind, ddir).total}


def per_host_samples(outcome: MultiHostOutcome) -> dict[str, list[Sample]]:
    """Per host, its own per-second samples on the same wall-clock seconds as the totals."""
    cols: dict[str, dict[str, dict[int, float]]] = {}
    names = ("read_iops", "write_iops", "read_mbps", "write_mbps", "read_lat_us", "write_lat_us")
    for ddir, name in ((0, "read"), (1, "write")):
        for kind, column, scale in (("iops", "iops", 1.0), ("bw", "mbps", 1024 / 1e6),
                                    ("lat", "lat_us", 1 / 1000)):  # fmt: skip
            for host, series in aligned_per_second(outcome, kind, ddir).per_host.items():
                values = cols.setdefault(host, {}).setdefault(f"{name}_{column}", {})
                values.update({t: v * scale for t, v in series})
    found = {}
    for host, by_col in cols.items():
        seconds = sorted(set(by_col.get("read_iops", {})) | set(by_col.get("write_iops", {})))
        found[host] = [Sample(t, *(by_col.get(c, {}).get(t) for c in names)) for t in seconds]
    return found


def aligned_samples(outcome: MultiHostOutcome) -> list[Sample]:
    """Per wall-clock second, totals over hosts (IOPS and MB/s summed, latency I/O-weighted)."""
    cols = {}
    for ddir, name in ((0, "read"), (1, "write")):
        cols[f"{name}_iops"] = _column(outcome, "iops", ddir)
        cols[f"{name}_mbps"] = _column(outcome, "bw", ddir, 1024 / 1e6)  # KiB/s -> MB/s
        cols[f"{name}_lat_us"] = _column(outcome, "lat", ddir, 1 / 1000)  # ns -> µs
    # only seconds that every host logged: an edge second holding some hosts is not a total
    per_host = aligned_per_second(outcome, "iops").per_host
    common = (
        set.intersection(*(set(t for t, _ in s) for s in per_host.values())) if per_host else set()
    )
    seconds = sorted((set(cols["read_iops"]) | set(cols["write_iops"])) & common)
    return [Sample(t, *(cols[c].get(t) for c in (
        "read_iops", "write_iops", "read_mbps", "write_mbps", "read_lat_us", "write_lat_us")))
        for t in seconds]  # fmt: skip


def host_targets(plan: Plan) -> dict[str, list[str]]:
    """Each host's target paths: its own, or the plan's."""
    return {h.name: [t.path for t in (h.targets or plan.targets)] for h in plan.hosts}


def target_safety(plan: Plan) -> TargetSafety:
    """Per host, the phase writing each of its targets (`targets.actions`)."""
    uses = target_uses(plan)
    writers = {h.name: writers_of(uses, h.name) for h in plan.hosts}
    return TargetSafety(writers=writers, allow_destroy=tuple(plan.allow_destroy))


class Fleet:
    """The plan's hosts for one campaign: start() before the points, stop() after."""

    def __init__(self, plan: Plan, fio: str, warn: Callable[[str], None]) -> None:
        self.specs = {h.name: host_spec(h) for h in plan.hosts}
        self.targets = host_targets(plan)
        self.safety = target_safety(plan)
        self.hosts = {h.name: h for h in plan.hosts}
        self.start_lead_s = plan.start_lead
        self.fio = fio
        self.warn = warn
        self.offsets: dict[str, float] = {}
        self.live_said: set[str] = set()  # hosts said to have no live seconds (hosts_live.py)
        # per host, target -> its path there with links followed (the check saw it): the
        # host's job files name that, so fio opens what was checked, not a swappable link
        self.resolved: dict[str, dict[str, str]] = {}
        self.started: list[HostSpec] = []
        self.verify = any(w.verify for w in plan.workloads)  # integrity writers on the hosts
        self.journal: InjectionLog = NoLog()  # servers started: journaled like injections
        self._entries: dict[str, int] = {}

    def _journal_start(self, spec: HostSpec) -> None:
        """Before a server is started: a killed controller leaves it running otherwise."""
        undo = {"pidfile": remote_pidfile(spec), "address": spec.address, "port": spec.port}
        self._entries[spec.name] = self.journal.before(Injection(
            "fio_server", f"fio --server on {spec.name}", spec.name,
            RemoteSysfs(spec).reach(), undo))  # fmt: skip

    def start(self, controller_fio_version: str) -> None:
        for spec in self.specs.values():
            if spec.ssh:
                self._journal_start(spec)
                start_server_over_ssh(spec)
                self.started.append(spec)
        checks = check_hosts(list(self.specs.values()), controller_fio_version, self.targets,
                             binary=self.fio, safety=self.safety)  # fmt: skip
        problems = [p for c in checks for p in c.problems]
        if any(not c.reachable for c in checks):
            raise HostError("hosts not ready: " + "; ".join(problems),
                            "run `arraybench hosts check PLAN` and fix each line")  # fmt: skip
        refused = [p for p in problems if "refused" in p]
        if refused:
            raise UnsafeTargetError("; ".join(refused), "see `arraybench hosts check PLAN`")
        for line in problems:
            self.warn(line)
        self.offsets = {c.name: c.clock_offset_ms or 0.0 for c in checks}
        self.resolved = {c.name: c.resolved for c in checks}
        if self.verify:
            check_hosts_can_verify(list(self.hosts.values()), self.specs)

    def stop(self) -> None:
        for spec in self.started:
            try:
                stop_server_over_ssh(spec)
            except HostError as exc:
                self.warn(exc.one_line())
            else:
                self.journal.reverted(self._entries.pop(spec.name, 0))
        for name in list(self._entries):  # a start that failed: nothing runs there
            self.journal.reverted(self._entries.pop(name))
        self.started.clear()

    def write_jobfiles(
        self, point: Point, folder: Path, sizes: dict[str, int], title: str
    ) -> tuple[dict[str, Path], int]:
        """One job file per host (its own targets), each gated to start at the same instant:
        now + start_lead on the controller's clock, moved to each host's clock by its offset."""
        start_ns = time.time_ns() + round(self.start_lead_s * 1e9)
        files = {}
        for name in point.level.hosts:
            host_start = start_ns + round(self.offsets.get(name, 0.0) * 1e6)
            text = render_jobfile(host_point(point, self.hosts[name]), sizes, title, host_start)
            text = rename_filenames(text, self.resolved.get(name, {}))
            files[name] = folder / f"point-{name}.fio"
            files[name].write_text(text)
        return files, start_ns

    def run_load(
        self, point: Point, folder: Path, sizes: dict[str, int], title: str, timeout_s: float,
        on_start: Callable[[float], None] | None = None,
        on_tick: Callable[[float], None] | None = None,
    ) -> HostRun:  # fmt: skip
        """`on_start(t0)`: called with the gated start instant (Unix s) before fio runs;
        `on_tick(elapsed)` while it runs, with the seconds since that instant (0 before it)."""
        specs = [self.specs[name] for name in point.level.hosts]
        jobfiles, start_ns = self.write_jobfiles(point, folder, sizes, title)
        if on_start is not None:
            on_start(start_ns / 1e9)
        tick = None
        if on_tick is not None:
            tick = lambda: on_tick(max(0.0, time.time() - start_ns / 1e9))  # noqa: E731
        outcome = run_on_hosts(jobfiles, specs, folder, timeout_s + self.start_lead_s,
                               offsets_ms=self.offsets, binary=self.fio, on_tick=tick)  # fmt: skip
        per_host, _ = combine_hosts(outcome)
        jobs = [job for name in outcome.jobs_by_host for job in outcome.jobs_by_host[name]]
        finding: HostsFinding = {
            "hosts": [s.name for s in specs],
            "per_host": {name: m.total.as_dict("total") for name, m in per_host.items()},
            "start_ms": outcome.start_ms_by_host,
            "start_spread_ms": outcome.start_spread_ms,
            "start_gate_ms": start_ns / 1e6,  # the planned instant, controller clock
            "failures": outcome.failures,
            "watchdog": outcome.watchdog,
            "offsets_ms": {s.name: self.offsets.get(s.name, 0.0) for s in specs},
        }
        version = outcome.document.engine_version if outcome.document else None
        return HostRun(jobs, aligned_samples(outcome), finding, outcome.failed_hosts,
                       outcome.start_spread_ms, version, outcome.elapsed_s,
                       per_host_samples(outcome))  # fmt: skip
