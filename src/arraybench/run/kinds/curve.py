"""vdbench's `iorate=curve` (SPC-1's response-time curve) as a test kind: after the grid, each
workload again at the load level of its measured maximum, rate-limited (fio `rate_iops`) to
each percentage of that maximum; one stored point and one `curve` finding per rate. A step's
rate is the total of its jobs at the workload's mix, split per direction as every rate is
(`plan.rate`); it is reached when its total and its read share are both within the plan's
tolerance (`analysis.validity.rate_misses`).

The maximum is the grid series' headline maximum (`analysis.headline`: points whose flags
leave the headline left out, as in the report), read from the store when the step starts,
so the curve always follows what this run measured.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import Path

from arraybench.analysis.aggregate import point_metrics
from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.headline import headline
from arraybench.analysis.validity import flags_of, leaves_headline, rate_misses
from arraybench.engines.measurement import EngineDocument
from arraybench.errors import ArraybenchError
from arraybench.finding_kinds import CURVE, VALIDITY, CurveFinding
from arraybench.plan.expand import Point, expand, mix_label
from arraybench.plan.model import Plan, Workload
from arraybench.plan.rate import JobRate, job_rate
from arraybench.point_identity import PointIdentity
from arraybench.records import PointRecord
from arraybench.run.context import RunContext
from arraybench.run.kinds.base import KindStep
from arraybench.run.record import SeriesNames
from arraybench.run.spans import OVERHEAD_HIGH_S, OVERHEAD_S, ZERO, Phase, Span

GRID = ("random", "sequential")
MAX_CURVE_SLOTS = 1000  # point numbers kept for the curve after the grid
CURVE_PREFIX = "curve-"  # the curve's series: `curve-rr`, beside the grid's `rr`
LEVEL_PREFIX = "p"  # its levels: `p50`, 50 % of the series' maximum


def curve_workloads(plan: Plan) -> list[Workload]:
    if plan.curve is None:
        return []
    names = plan.curve.workloads
    return [w for w in plan.workloads if any(fnmatchcase(w.name, n) for n in names)]


def curve_identity(workload: str, percent: int) -> PointIdentity:
    return PointIdentity(f"{CURVE_PREFIX}{workload}", f"{LEVEL_PREFIX}{percent}")


def _names(w: Workload) -> SeriesNames:
    return SeriesNames(f"{CURVE_PREFIX}{w.name}", f"Response-time curve {w.name}",
                       mix_label(w.read), "curve", w.bs, w.read, "IOPS")  # fmt: skip


def _seconds(plan: Plan, w: Workload) -> float:
    timing = w.timing or plan.timing
    return timing.ramp + timing.duration


class CurveKind:
    name = CURVE.name  # the phase kind and the finding kind
    report_section = "report.sections.ratecurve.curve_report"
    touches_targets = True

    def slots(self, plan: Plan) -> int:
        return MAX_CURVE_SLOTS

    def steps(self, plan: Plan, first_seq: int) -> list[KindStep]:
        test = plan.curve
        if test is None:
            return []
        steps: list[KindStep] = []
        for w in curve_workloads(plan):
            for pct in test.percents:
                seq = first_seq + len(steps)
                identity = curve_identity(w.name, pct)
                phase = f"{identity.key}: {w.name} at {pct} % of its maximum"
                seconds = _seconds(plan, w)
                steps.append(KindStep(identity, seq, f"{seq:03d}-curve-{w.name}-p{pct}", phase,
                                      seconds + OVERHEAD_S, seconds, _names(w), 1, 1,
                                      source=w.name, percent=pct))  # fmt: skip
        return steps[:MAX_CURVE_SLOTS]

    def outline(self, plan: Plan) -> Phase | None:
        test = plan.curve
        if test is None:
            return None
        span = ZERO
        for w in curve_workloads(plan):
            s = _seconds(plan, w)
            span = span + Span(s, s + OVERHEAD_S, s + OVERHEAD_HIGH_S).times(len(test.percents))
        title = (f"response-time curve: {len(curve_workloads(plan))} workload(s) at "
                 f"{', '.join(map(str, test.percents))} % of their maximum")  # fmt: skip
        return Phase("curve", title, span, len(curve_workloads(plan)) * len(test.percents))

    def resolve(self, step: KindStep, ctx: RunContext) -> KindStep:
        """The step at its maximum's load level (known once the grid has run)."""
        point, _, _ = self._target(step, ctx)
        return replace(step, workers=point.level.workers, iodepth=point.level.iodepth)

    def _target(self, step: KindStep, ctx: RunContext) -> tuple[Point, PointRecord, float]:
        """The grid point that measured the workload's maximum, its record and its IOPS."""
        workload = step.source
        stored = [p for p in ctx.store.points(ctx.run.id)
                  if p.workload == workload and p.pattern in GRID
                  and p.identity.scenario is None and p.identity.round is None]  # fmt: skip
        flagged = {f.point_id for f in ctx.store.findings(ctx.run.id, VALIDITY.name)
                   if leaves_headline(flags_of(VALIDITY.of(f)))}  # fmt: skip
        curve = [CurvePoint(i, p.metric("total", "iops") or 0.0, None, None, p.key,
                            p.id in flagged) for i, p in enumerate(stored)]  # fmt: skip
        top = headline(curve).maximum
        if top is None or not top.throughput > 0:
            raise ArraybenchError(f"{step.key}: workload {workload} has no measured maximum "
                                  "to take a fraction of", "its grid points failed or are "
                                  "missing: see the run's points")  # fmt: skip
        record = next(p for p in stored if p.key == top.key)
        point = next(p for p in expand(ctx.plan) if p.key == top.key)
        return point, record, top.throughput

    def job_file(self, step: KindStep, ctx: RunContext) -> str:
        point, _, top = self._target(step, ctx)
        per_job = _per_job(step, point, top)
        limited = point.workload.model_copy(update={"rate_iops": per_job})
        point = replace(point, workload=limited, seq=step.seq)
        rate = _job_rate(point, per_job)
        title = (f"{step.key}: {per_job} IOPS per job at {point.workload.read} % reads "
                 f"({rate.read_iops:g} + {rate.write_iops:g})")  # fmt: skip
        return ctx.engine.point_job(point, ctx.sizes, title=title)

    def finding(
        self, step: KindStep, ctx: RunContext, folder: Path, document: EngineDocument
    ) -> CurveFinding:
        point, record, top = self._target(step, ctx)
        test = ctx.plan.curve
        assert test is not None  # steps() gave this step
        pct = _percent(step)
        planned = _job_rate(point, _per_job(step, point, top)).total_iops * point_jobs(point)
        metrics = point_metrics(document.jobs)
        total = metrics.total
        achieved = total.iops or 0.0
        read_pct = 100.0 * metrics.read.ios / total.ios if total.ios else None
        misses = rate_misses(planned, point.workload.read, achieved, read_pct, test.tolerance,
                             test.tolerance)  # fmt: skip
        return {
            "workload": point.workload.name,
            "percent": pct,
            "max_iops": top,
            "max_key": record.key,
            "planned_iops": float(planned),
            "achieved_iops": achieved,
            "lat_mean_us": total.lat_mean_us,
            "lat_p99_us": total.lat_p99_us,
            "tolerance_pct": test.tolerance,
            "reached": not misses,
            "planned_read_pct": float(point.workload.read),
            "achieved_read_pct": read_pct,
            "misses": misses,
        }


def _per_job(step: KindStep, point: Point, top: float) -> int:
    """Each job's rate: the step's share of the maximum over the jobs, rounded up."""
    return max(math.ceil(_percent(step) / 100 * top / point_jobs(point)), 1)


def _job_rate(point: Point, per_job: int) -> JobRate:
    return job_rate(per_job, point.workload.read, point.workload.bs)


def _percent(step: KindStep) -> int:
    assert step.percent is not None  # steps() gave every curve step its share
    return step.percent


def point_jobs(point: Point) -> int:
    """fio's jobs at the point's level: rate_iops caps each of them."""
    per = len(point.targets) if point.spread == "per_target" else 1
    return max(point.level.workers * per, 1)
