"""One point of a campaign: its folder and job file, fio (locally beside the monitor and the
sidecars, or on its hosts), the findings read from it, the stored record, the pause after it."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from arraybench.analysis.aggregate import PointMetrics, point_metrics
from arraybench.analysis.cliff import pause_after
from arraybench.analysis.findings import cliff_finding, steady_finding
from arraybench.analysis.validity import point_finding
from arraybench.engines.base import RunSpec
from arraybench.engines.fio import runner  # the many-host path runs fio (client/server) only
from arraybench.engines.measurement import FioDocument
from arraybench.events.records import EventRecord
from arraybench.finding_kinds import CLIFF, HOSTS, MONITOR, STEADY, WARMUP
from arraybench.hosts import HostError
from arraybench.monitor.point import PointMonitor
from arraybench.plan.expand import Point, throughput_unit
from arraybench.records import Finding, NewPoint, RunRecord, Sample
from arraybench.run.context import Observer, RunContext
from arraybench.run.fleet import HostRun
from arraybench.run.host_events import HostPointEvents
from arraybench.run.host_sidecars import HostPointExtras
from arraybench.run.host_verify import HostsVerify
from arraybench.run.injections import StoreInjectionLog
from arraybench.run.interrupts import raise_if_swallowed
from arraybench.run.live_feed import LiveFeed
from arraybench.run.record import PointPlace, names_of, new_point, now_iso
from arraybench.run.reportable import keep_for_report
from arraybench.run.sidecars import PointExtras
from arraybench.run.warmup import logs_ramp, measured_point, run_warmup


def point_findings(point: Point, samples: Sequence[Sample]) -> list[Finding]:
    """Analyses the plan asks for on this point's 1-second series."""
    found = []
    if "cliff" in point.workload.analysis:
        found.append(CLIFF.new(cliff_finding(samples, point.workload.bs)))
    if "steady" in point.workload.analysis or point.timing.steady:
        found.append(STEADY.new(steady_finding(samples)))
    return found


def gc_rate_of(findings: Sequence[Finding]) -> float | None:
    """The last measured garbage-collection rate (bytes/s) among cliff findings."""
    rates = [c.get("gc_bytes_per_s") for c in CLIFF.among(findings)]
    known = [r for r in rates if r]
    return float(known[-1]) if known else None


def point_folder(run: RunRecord, point: Point) -> Path:
    return Path(run.folder) / "points" / f"{point.seq:03d}-{point.key.replace('/', '-')}"


def run_point(ctx: RunContext, point: Point) -> None:
    """Run one point and store it before returning (a crash later never loses it)."""
    raise_if_swallowed()  # a Ctrl-C that CPython swallowed since the point before
    ctx.store.check_identity()  # a store deleted or replaced meanwhile: stop before measuring
    folder = point_folder(ctx.run, point)
    if folder.exists():  # left by an interrupted attempt: start it afresh
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    started = now_iso()
    if point.level.hosts:
        run_point_on_hosts(ctx, point, folder, started)
        return
    run, sizes, engine, observer = ctx.run, ctx.sizes, ctx.engine, ctx.observer
    extras = extras_for(ctx, point, folder)
    jobfile = folder / engine.job_name
    fio_sizes = extras.fio_sizes() if extras else sizes
    ctx.guard.recheck(t.path for t in point.targets)  # a link swapped since the check
    warmup = None
    if logs_ramp(point, extras is not None):  # the ramp as its own logged fio phase
        tick = lambda elapsed: observer.point_tick(point, elapsed)  # noqa: E731
        with ctx.guard.pinned(t.path for t in point.targets) as pins:
            warmup = run_warmup(point, folder, fio_sizes, title=f"run {run.id}", engine=engine,
                                on_tick=tick, pins=pins)  # fmt: skip
    ramp = point.timing.ramp if warmup else 0.0
    measured = measured_point(point) if warmup else point
    jobfile.write_text(engine.point_job(measured, fio_sizes, title=f"run {run.id}"))
    feed = LiveFeed(observer, point, folder, events=lambda: live_events(extras))
    with (
        PointMonitor([t.path for t in point.targets], ctx.settings.monitor) as monitor,
        ctx.guard.pinned(t.path for t in point.targets) as pins,  # what fio opens: checked
    ):
        if extras:
            extras.live_iops = monitor.live_iops
        try:
            outcome = engine.run(jobfile, RunSpec(
                point.key,
                engine.watchdog_seconds(point.expected_seconds),
                on_tick=lambda elapsed: feed.tick(ramp + elapsed),  # point_tick, live second
                on_start=extras.started if extras else None,
                pins=pins,
                status_interval_s=feed.interval,
            ))  # fmt: skip
        finally:
            if extras:
                extras.finish()  # events reverted, acknowledged writes read back
            feed.close(folder)
    document = engine.results(outcome, point.key)  # a failed job refused there
    metrics = point_metrics(document.jobs)
    record = point_fields(run, point, folder, started, outcome.elapsed_s, document)
    samples = engine.samples(folder)
    findings = point_findings(point, samples) + ([warmup] if warmup else [])
    if extras:
        findings += extras.findings(samples, document.jobs)
        report_extras(observer, point, extras)
    host = monitor.result(samples)
    if point.workload.verify:  # the integrity writer's I/O is on the device by design
        host.flags = []
    if host.flags:
        findings.append(MONITOR.new({"flags": host.flags, "devices": host.devices}))
        # not printed per point: the report says it once per run (report.assemble)
    files = all(ctx.target_kinds.get(t.path) in ("file", "new-file") for t in point.targets)
    flags = point_finding(point, record, samples, monitor_flags=host.flags, cpus=os.cpu_count(),
                          cpu=host.cpu, file_target=files)  # fmt: skip
    findings += [flags] if flags else []
    pause = pause_seconds(ctx, point, metrics, findings)
    record = replace(
        record,
        pause_s=pause,
        kernel_iops=host.kernel_iops,
        kernel_mbps=host.kernel_mbps,
        cpu_busy_pct=host.cpu_busy_pct,
    )
    point_id = ctx.store.add_point(record, metrics, samples, host.host, host.cpu, findings)
    keep_for_report(ctx.store, point_id, folder, document.jobs)  # what its report reads
    observer.point_finished(point, metrics, throughput_unit(point.workload))
    pull_array(ctx, point, samples, warmup)
    if pause > 0:
        observer.pausing(point, pause)
        time.sleep(pause)


def pull_array(
    ctx: RunContext, point: Point, samples: Sequence[Sample], warmup: Finding | None = None
) -> None:
    """The plan's array_monitor asked for this point's window (in its own thread): its logged
    warm-up too, drawn with the controller's CPU beside it (AERODISK's whole hour)."""
    if ctx.array is not None:
        warm = (
            [int(r[0]) for r in WARMUP.of(warmup)["samples"] if r[0] is not None] if warmup else []
        )
        for line in ctx.array.point_done(point.key, [s.t for s in samples] + warm):
            ctx.observer.warning(line)


def live_events(extras: PointExtras | None) -> list[EventRecord]:
    """The point's event records so far (the live view shows them as they happen)."""
    return extras.timeline.records() if extras and extras.timeline else []


def extras_for(ctx: RunContext, point: Point, folder: Path) -> PointExtras | None:
    """The sidecars of a point with events or verify (None: plain fio)."""
    if not (point.workload.events or point.workload.verify):
        return None
    confirm = getattr(ctx.observer, "confirm", None) if ctx.interactive else None
    return PointExtras(point, folder, ctx.sizes, live_iops=list, confirm=confirm,
                       allow_destroy=ctx.settings.allow_destroy,
                       journal=journal_for(ctx, point))  # fmt: skip


def journal_for(ctx: RunContext, point: Point) -> StoreInjectionLog:
    """Where the point's injections are journaled before they are applied (`revert`)."""
    return StoreInjectionLog(ctx.results_dir, ctx.run.id, point.key)


def host_extras_for(ctx: RunContext, point: Point, folder: Path, timeout: float) -> HostPointExtras:
    """A many-host point's sidecars: integrity writers on its hosts, its events (on the hosts
    they name, over SSH, or on the controller)."""
    assert ctx.fleet is not None
    verify = None
    if point.workload.verify is not None:
        verify = HostsVerify(point, ctx.fleet.hosts, ctx.fleet.specs, run_id=ctx.run.id,
                             folder=folder, allow_destroy=ctx.settings.allow_destroy,
                             limit_s=timeout + ctx.fleet.start_lead_s)  # fmt: skip
    events = None
    if point.workload.events:
        confirm = getattr(ctx.observer, "confirm", None) if ctx.interactive else None
        events = HostPointEvents(point, ctx.fleet.specs, journal_for(ctx, point),
                                 confirm=confirm)  # fmt: skip
    return HostPointExtras(point, folder, verify, events)


def integrity_line(observer: Observer, line: str, failed: bool) -> None:
    """A failed check warns; a clean one is a note where the observer has notes."""
    note = getattr(observer, "note", None)
    if failed or note is None:
        observer.warning(line if failed else line + " (clean)")
    else:
        note(line + " (clean)")


def report_extras(observer: Observer, point: Point, extras: PointExtras) -> None:
    if extras.integrity is not None:
        line = f"point {point.key}: {extras.integrity.summary_line()}"
        integrity_line(observer, line, extras.integrity_failed)
    if extras.timeline is not None:
        failed = [r for r in extras.timeline.records() if r.outcome != "ok"]
        for r in failed:
            observer.warning(f"point {point.key}: event {r.label} ({r.action}): "
                             f"{r.outcome}: {r.detail}")  # fmt: skip


def run_point_on_hosts(ctx: RunContext, point: Point, folder: Path, started: str) -> None:
    """One point on all of its hosts at once; a failed host leaves a partial point."""
    run, sizes = ctx.run, ctx.sizes
    assert ctx.fleet is not None
    timeout = runner.watchdog_seconds(point.expected_seconds)
    extras = host_extras_for(ctx, point, folder, timeout)
    sizes = extras.prepare(sizes)  # fio's load stops before each host's verify region
    try:
        extras.start()
        result = ctx.fleet.run_point(point, folder, sizes, f"run {run.id}", timeout,
                                     on_start=extras.load_started)  # fmt: skip
    finally:
        extras.stop()  # writers stopped, events reverted on every host, whatever happened
    extras.check()  # then each host's read-back
    if not result.jobs:
        raise HostError(f"point {point.key}: no host returned results "
                        f"({'; '.join(result.finding['failures'].values())})",
                        f"see {folder}")  # fmt: skip
    runner.check_job_errors(point.key, result.jobs, folder)
    metrics = point_metrics(result.jobs)
    record = point_fields(run, point, folder, started, result.elapsed_s, result)
    record = replace(record, hosts=len(point.level.hosts), partial=int(bool(result.failed)),
                     failed_hosts=",".join(result.failed), start_spread_ms=result.spread_ms,
                     pause_s=0.0)  # fmt: skip
    findings = [HOSTS.new(result.finding), *point_findings(point, result.samples)]
    flags = point_finding(point, record, result.samples,  # fio's CPU only: no monitor
                          max_start_spread_ms=ctx.settings.max_start_spread_s * 1000)  # fmt: skip
    findings += [flags] if flags else []
    findings += extras.findings(result)
    point_id = ctx.store.add_point(record, metrics, result.samples, findings=findings)
    keep_for_report(ctx.store, point_id, folder)  # what its report reads
    ctx.observer.point_finished(point, metrics, throughput_unit(point.workload))
    pull_array(ctx, point, result.samples)
    for failed, line in extras.lines():
        integrity_line(ctx.observer, line, failed)
    if result.failed:
        why = "; ".join(result.finding["failures"].values())
        message = (
            f"point {point.key}: host(s) {', '.join(result.failed)} failed ({why}); "
            "stored as partial"
        )
        if ctx.settings.on_host_failure == "stop":
            raise HostError(message, "fix the host, then continue with --resume")
        ctx.observer.warning(message)


def pause_seconds(
    ctx: RunContext, point: Point, metrics: PointMetrics, findings: list[Finding]
) -> float:
    """The pause after a point: fixed, or the HUS VM rule bytes written / GC rate."""
    rule = point.workload.pause_after
    if rule != "gc":
        return float(rule)
    rate = ctx.settings.gc_rate or gc_rate_of(findings)
    if rate is None:
        rate = gc_rate_of(ctx.store.findings(ctx.run.id, CLIFF.name))
    if rate is None or rate <= 0:
        ctx.observer.warning(
            f"point {point.key}: pause_after: gc, but no GC throughput is known yet "
            "(set gc_throughput in the plan or run a workload with analysis: [cliff] first)"
        )
        return 0.0
    return pause_after(metrics.write.bytes, rate)


def point_fields(
    run: RunRecord, point: Point, folder: Path, started: str, elapsed: float,
    ran: FioDocument | HostRun,
) -> NewPoint:  # fmt: skip
    targets = [t.path for t in point.targets]
    level = point.level
    place = PointPlace(run.id, point.seq, point.identity, point.ioengine, level.workers,
                       level.iodepth, targets, str(folder), level.devices)  # fmt: skip
    names = names_of(point.workload, point.ioengine)
    record = new_point(place, names, ran.jobs, started, now_iso(), elapsed, ran.fio_version)
    return replace(record, scenario=point.scenario)
