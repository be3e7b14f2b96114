"""A campaign's hosts: fio servers started (over SSH) or found, checked, and each point run
on all of a scenario's hosts at once through fio's client/server mode."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arraybench.analysis.hosts import combine_hosts
from arraybench.errors import UnsafeTargetError
from arraybench.fio.jobfile import render_jobfile
from arraybench.fio.results import FioJobResult
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
from arraybench.plan.expand import Point, host_point
from arraybench.plan.model import Host, Plan
from arraybench.run.hostverify import check_hosts_can_verify
from arraybench.store.records import Sample


def host_spec(host: Host) -> HostSpec:
    ssh = None
    if host.ssh:
        s = host.ssh
        key = Path(s.key) if s.key else None
        options: tuple[str, ...] = ()
        if s.known_hosts:
            options = (f"UserKnownHostsFile={s.known_hosts}", "StrictHostKeyChecking=yes")
        ssh = SshSpec(user=s.user, host=s.host, port=s.port, identity_file=key, fio=s.fio,
                      options=options)  # fmt: skip
    return HostSpec(host.name, host.address, host.port, ssh)


@dataclass
class HostRun:
    """One point on several hosts: every host's jobs, the aligned totals, who failed."""

    jobs: list[FioJobResult]
    samples: list[Sample]
    finding: dict[str, Any]
    failed: list[str] = field(default_factory=list)
    spread_ms: float | None = None
    fio_version: str | None = None
    elapsed_s: float = 0.0


def _column(
    outcome: MultiHostOutcome, kind: str, ddir: int, scale: float = 1.0
) -> dict[int, float]:
    return {t: v * scale for t, v in aligned_per_second(outcome, kind, ddir).total}


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
    writes = any(w.read < 100 for w in plan.workloads) or plan.precondition is not None
    return TargetSafety(writes=writes, allow_destroy=tuple(plan.allow_destroy))


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
        self.started: list[HostSpec] = []
        self.verify = any(w.verify for w in plan.workloads)  # integrity writers on the hosts

    def start(self, fio_version: str) -> None:
        for spec in self.specs.values():
            if spec.ssh:
                start_server_over_ssh(spec)
                self.started.append(spec)
        checks = check_hosts(list(self.specs.values()), fio_version, self.targets,
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
        if self.verify:
            check_hosts_can_verify(list(self.hosts.values()), self.specs)

    def stop(self) -> None:
        for spec in self.started:
            try:
                stop_server_over_ssh(spec)
            except HostError as exc:
                self.warn(exc.one_line())
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
            files[name] = folder / f"point-{name}.fio"
            files[name].write_text(text)
        return files, start_ns

    def run_point(
        self, point: Point, folder: Path, sizes: dict[str, int], title: str, timeout_s: float
    ) -> HostRun:
        specs = [self.specs[name] for name in point.level.hosts]
        jobfiles, start_ns = self.write_jobfiles(point, folder, sizes, title)
        outcome = run_on_hosts(jobfiles, specs, folder, timeout_s + self.start_lead_s,
                               offsets_ms=self.offsets, binary=self.fio)  # fmt: skip
        per_host, _ = combine_hosts(outcome)
        jobs = [job for name in outcome.jobs_by_host for job in outcome.jobs_by_host[name]]
        finding = {
            "hosts": [s.name for s in specs],
            "per_host": {name: m.total.as_dict("total") for name, m in per_host.items()},
            "start_ms": outcome.start_ms_by_host,
            "start_spread_ms": outcome.start_spread_ms,
            "start_gate_ms": start_ns / 1e6,  # the planned instant, controller clock
            "failures": outcome.failures,
            "watchdog": outcome.watchdog,
            "offsets_ms": {s.name: self.offsets.get(s.name, 0.0) for s in specs},
        }
        version = outcome.document.fio_version if outcome.document else None
        return HostRun(jobs, aligned_samples(outcome), finding, outcome.failed_hosts,
                       outcome.start_spread_ms, version, outcome.elapsed_s)  # fmt: skip
