"""What every point does once its load has run, wherever it ran (its executor refused a
failed job): the metrics, the stored record's fields, the findings (the plan's analyses,
the executor's, the sidecars', validity), the pause after it, the store (with what the
point's report reads: `run/reportable.py`), and what the console says."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from arraybench.analysis.aggregate import PointMetrics, point_metrics
from arraybench.analysis.cliff import no_gc_rate_why, pause_after
from arraybench.analysis.fabric import WorkloadCeiling, workload_ceiling
from arraybench.analysis.findings import cliff_finding, steady_finding
from arraybench.analysis.kernelcheck import kernel_view
from arraybench.analysis.validity import point_finding
from arraybench.finding_kinds import CLIFF, STEADY
from arraybench.hosts import HostError
from arraybench.plan.expand import Point, throughput_unit
from arraybench.records import Finding, NewPoint, RunRecord, Sample
from arraybench.run.context import RunContext
from arraybench.run.load import LoadResult
from arraybench.run.record import PointPlace, names_of, new_point, now_iso
from arraybench.run.reportable import keep_for_report
from arraybench.run.sidecar import Sidecar
from arraybench.run.warmup import logs_ramp
from arraybench.run.written import count_written, unwritten_before


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


def pause_seconds(
    ctx: RunContext, point: Point, metrics: PointMetrics, findings: list[Finding]
) -> float:
    """The pause after a point: fixed, or the HUS VM rule bytes written / GC rate."""
    rule = point.workload.pause_after
    if rule != "gc":
        return float(rule)
    rate = ctx.settings.gc_rate or gc_rate_of(findings)
    cliffs = ctx.store.findings(ctx.run.id, CLIFF.name)
    if rate is None:
        rate = gc_rate_of(cliffs)
    if rate is None or rate <= 0:
        if "no-gc-rate" not in ctx.said:  # the same news at every such point: said once
            ctx.said.add("no-gc-rate")
            ctx.observer.warning(f"pause_after: gc skipped from point {point.key} on: "
                                 f"{no_gc_rate_why(CLIFF.among(cliffs))}")  # fmt: skip
        return 0.0
    return pause_after(metrics.write.bytes, rate)


def point_ceiling(ctx: RunContext, point: Point, hosts: int | None) -> WorkloadCeiling | None:
    """The plan's fabric ceiling for this point's workload on the hosts that ran it (None:
    no `fabric:` declared)."""
    fabric = ctx.plan.fabric
    if fabric is None:
        return None
    return workload_ceiling(fabric.links, point.workload.bs, point.workload.read,
                            mtu=fabric.mtu, hosts=hosts or 1)  # fmt: skip


def point_fields(
    run: RunRecord, point: Point, folder: Path, started: str, result: LoadResult
) -> NewPoint:
    """The point's stored record: its place, its names, what its jobs measured, and the
    many-host columns (None on a local point)."""
    level = point.level
    place = PointPlace(run.id, point.seq, point.identity, point.ioengine, level.workers,
                       level.iodepth, [t.path for t in point.targets], str(folder),
                       level.devices)  # fmt: skip
    names = names_of(point.workload, point.ioengine)
    record = new_point(place, names, result.jobs, started, now_iso(), result.elapsed_s,
                       result.version)  # fmt: skip
    return replace(record, scenario=point.scenario, hosts=result.hosts, partial=result.partial,
                   failed_hosts=result.failed_hosts,
                   start_spread_ms=result.start_spread_ms)  # fmt: skip


def store_point(
    ctx: RunContext, point: Point, folder: Path, started: str, result: LoadResult,
    sidecars: Sidecar,
) -> None:  # fmt: skip
    """The point judged and stored (one transaction), then said; the pause after it."""
    metrics = point_metrics(result.jobs)
    record = point_fields(ctx.run, point, folder, started, result)
    seen = result.monitor
    findings = [*result.findings, *point_findings(point, result.samples)]
    findings += sidecars.findings(result)
    flags = point_finding(point, record, result.samples, monitor_flags=seen.flags,
                          cpus=result.cpus, cpu=seen.cpu, file_target=result.file_target,
                          max_start_spread_ms=result.max_start_spread_ms,
                          warmup_apart=logs_ramp(point), kernel=kernel_view(seen),
                          mb_per_s=metrics.total.mbps, total_iops=metrics.total.iops,
                          ceiling=point_ceiling(ctx, point, record.hosts),
                          unwritten_share=unwritten_before(ctx, point, record.hosts),
                          data_misses=ctx.data_misses.get(point.workload.name, ()))  # fmt: skip
    findings += [flags] if flags else []
    pause = pause_seconds(ctx, point, metrics, findings)  # on many hosts too: the plan asked
    record = replace(record, pause_s=pause, kernel_iops=seen.kernel_iops,
                     kernel_mbps=seen.kernel_mbps, cpu_busy_pct=seen.cpu_busy_pct)  # fmt: skip
    point_id = ctx.store.add_point(record, metrics, result.samples, seen.host, seen.cpu, findings)
    if "block" in ctx.target_kinds.values():  # what it wrote: later reads' unwritten share
        count_written(ctx, [p for p in [ctx.store.point(ctx.run.id, point.key)] if p])
    bins = result.jobs if result.bins_in_jobs else None
    keep_for_report(ctx.store, point_id, folder, bins, ctx.engine.job_name)  # report reads
    ctx.observer.point_finished(point, metrics, throughput_unit(point.workload))
    for line in sidecars.lines():
        (ctx.observer.warning if line.warning else ctx.observer.note)(line.text)
    if result.failure is not None:
        if ctx.settings.on_host_failure == "stop":
            raise HostError(result.failure, "fix the host, then continue with --resume")
        ctx.observer.warning(result.failure)
    if pause > 0:
        ctx.observer.pausing(point, pause)
        time.sleep(pause)
