"""An open-loop rate as a share of a knee (the workload's `rate_of`, In&Out-style): the
optimal point's total IOPS of a workload's series, measured earlier in this run or stored
from a named run, times the share, is the point's total intended rate. It is resolved when
the point starts, as the curve's steps are (`run/kinds/curve.py`: the same per-job split,
rounded up, each job's rate at the workload's mix through `plan.rate.job_rate`), and
written into the point's workload as its `rate_iops`, so the job file, the open-loop
figures (`intended_iops`) and the rate check all read the resolved rate.

The optimal point is `analysis.headline`'s (docs/headline.md), over the series' grid points
in the scenario named (default: the point's own; none: the run's), outside SNIA rounds,
its flagged points left out as the report leaves them out. No knee (no such series, every
point failed or flagged, no point with a throughput) is an ArraybenchError, one line, before
the point runs.
"""

from __future__ import annotations

import math
from dataclasses import replace

from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.headline import ALL_FLAGGED, headline
from arraybench.analysis.validity import flags_of, leaves_headline
from arraybench.errors import ArraybenchError
from arraybench.finding_kinds import VALIDITY
from arraybench.plan.expand import Knee, Point
from arraybench.plan.model import Plan
from arraybench.plan.workload import RateOf
from arraybench.records import PointRecord, RunRecord
from arraybench.run.context import RunContext
from arraybench.run.kinds.curve import GRID, point_jobs
from arraybench.store.db import Store


def with_knee_rate(ctx: RunContext, point: Point) -> Point:
    """The point with its `rate_of` resolved to a per-job `rate_iops` (unchanged without)."""
    of = point.workload.rate_of
    if of is None:
        return point
    knee = find_knee(ctx, point, of)
    per_job = knee_per_job(of.share, knee.iops, point)
    limited = point.workload.model_copy(update={"rate_iops": per_job})
    return replace(point, workload=limited, knee=knee)


def knee_per_job(share: int, knee_iops: float, point: Point) -> int:
    """Each job's rate: the share of the knee over the point's jobs (on every host), rounded
    up, as the curve's steps are."""
    jobs = point_jobs(point) * max(len(point.level.hosts), 1)
    return max(math.ceil(share / 100 * knee_iops / jobs), 1)


def find_knee(ctx: RunContext, point: Point, of: RateOf) -> Knee:
    source = of.workload or point.workload.name
    run = ctx.run if of.run is None else _named_run(ctx, point, of.run)
    where = f"run {run.id}" if of.run else "this run"
    points = ctx.store.points(run.id)
    scenario = of.scenario or point.scenario
    stored = [p for p in points if _in_series(p, source, scenario)]
    if not stored and of.run is not None and of.scenario is None:  # measured without scenarios
        stored = [p for p in points if _in_series(p, source, None)]
    if of.scenario is not None:
        where += f", scenario {of.scenario}"
    said = f"{point.key}: rate_of {of.share} % of workload {source}'s optimal point in {where}"
    if not stored:
        raise ArraybenchError(f"{said}: that series has no stored point",
                              "run its ladder first, or name a run that did")  # fmt: skip
    flagged = {f.point_id for f in ctx.store.findings(run.id, VALIDITY.name)
               if leaves_headline(flags_of(VALIDITY.of(f)))}  # fmt: skip
    include = ctx.plan.report.headline_includes_flagged
    figures = headline(_curve(stored, flagged), bound_us=run.latency_bound_us,
                       stat=run.latency_stat, include_flagged=include)  # fmt: skip
    top = figures.optimal
    if figures.rule == ALL_FLAGGED:
        raise ArraybenchError(f"{said}: every point of that series is flagged, no knee to take",
                              "see the run's validity flags")  # fmt: skip
    if top is None or not top.throughput > 0:
        raise ArraybenchError(f"{said}: that series has no optimal point with a throughput",
                              "its points failed: see the run's points")  # fmt: skip
    return Knee(run.id, top.key, top.throughput, of.share)


def check_named_knees(plan: Plan, store: Store) -> None:
    """Before the run: each `rate_of` naming a run names one of this store with points of
    the workload it takes the knee of (the knee itself is found when the point starts)."""
    for w in plan.workloads:
        of = w.rate_of
        if of is None or of.run is None:
            continue
        source = of.workload or w.name
        said = f"workload {w.name}: rate_of names run {of.run!r}"
        if of.run not in {r.id for r, _ in store.list_runs()}:
            raise ArraybenchError(f"{said}, not in this store", "list runs with `arraybench runs`")
        if not any(p.workload == source and p.pattern in GRID for p in store.points(of.run)):
            raise ArraybenchError(f"{said}, which has no point of workload {source}",
                                  f"see its points: arraybench show {of.run}")  # fmt: skip


def _named_run(ctx: RunContext, point: Point, run_id: str) -> RunRecord:
    if run_id not in {r.id for r, _ in ctx.store.list_runs()}:
        raise ArraybenchError(f"{point.key}: rate_of names run {run_id!r}, not in this store",
                              "list runs with `arraybench runs`")  # fmt: skip
    return ctx.store.get_run(run_id)


def _in_series(p: PointRecord, workload: str, scenario: str | None) -> bool:
    return (p.workload == workload and p.pattern in GRID and p.identity.round is None
            and p.identity.scenario == scenario)  # fmt: skip


def _curve(stored: list[PointRecord], flagged: set[int | None]) -> list[CurvePoint]:
    """The series as the report orders it: outstanding I/Os (workers x iodepth) ascending."""
    ordered = sorted(stored, key=lambda p: (p.workers * p.iodepth, p.workers, p.seq))
    return [CurvePoint(float(p.workers * p.iodepth), p.metric("total", "iops") or 0.0,
                       p.metric("total", "lat_mean_us"), p.metric("total", "lat_p99_us"),
                       p.key, p.id in flagged) for p in ordered]  # fmt: skip
