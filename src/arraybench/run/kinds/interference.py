"""dbi's mixed-workload interference test as a test kind: a rate-limited base load alone, then
beside growing background streams; one stored point, one `interference` finding."""

from __future__ import annotations

from pathlib import Path

from arraybench.analysis.interference import (
    chart_data,
    read_background_iops,
    read_background_latency,
    read_base_histograms,
    read_interference_logs,
    run_start_second,
    step_table,
    verdict,
)
from arraybench.engines.fio.interference import InterferenceSpec, render_interference_jobfile
from arraybench.engines.fio.interference import total_seconds as interference_seconds
from arraybench.engines.measurement import EngineDocument
from arraybench.errors import PlanError
from arraybench.finding_kinds import (
    INTERFERENCE,
    InterferenceChartData,
    InterferenceFinding,
    StepRowData,
    fields_of,
)
from arraybench.plan.expand import mix_label
from arraybench.plan.model import InterferenceTest, Plan, Target
from arraybench.point_identity import PointIdentity
from arraybench.run.context import RunContext
from arraybench.run.kinds.base import KindStep
from arraybench.run.record import SeriesNames
from arraybench.run.spans import OVERHEAD_HIGH_S, OVERHEAD_S, Phase, Span
from arraybench.units import format_duration

INTERFERENCE_POINT = PointIdentity("interference", "base+steps")


def interference_spec(plan: Plan, test: InterferenceTest) -> InterferenceSpec:
    try:
        # fio 3.33 aborts (double free) when rate-limited jobs share a list of several
        # files, so the test runs on the first target; the report says which
        return InterferenceSpec(
            targets=[plan.targets[0].path],
            base_bs=test.base_bs,
            base_read_pct=test.base_read,
            base_rate_iops=test.base_rate_iops,
            base_jobs=test.base_jobs,
            base_iodepth=test.base_iodepth,
            bg_bs=test.bg_bs,
            bg_read_pct=test.bg_read,
            bg_rate_iops_per_step=test.bg_rate_iops,
            steps=test.steps,
            bg_iodepth=test.bg_iodepth,
            interval_s=test.interval,
            ioengine=plan.ioengine,
            direct=plan.direct,
        )
    except ValueError as exc:
        raise PlanError(f"interference: {exc}", "fix the interference section") from None


def interference_findings(
    spec: InterferenceSpec, test: InterferenceTest, folder: Path
) -> InterferenceFinding:
    base_iops, base_lat, bg_mbps = read_interference_logs(folder)
    t0 = run_start_second(base_iops)
    bg_lat = read_background_latency(folder)  # the large I/O's own latency
    rows = step_table(spec, base_iops, base_lat, bg_mbps, t0,
                      base_hist=read_base_histograms(folder),
                      bg=(bg_lat, read_background_iops(folder)))  # fmt: skip
    chart = chart_data(spec, base_iops, base_lat, bg_mbps, t0, bg_lat_us=bg_lat)
    return {
        "target": spec.targets[0],
        "rows": [fields_of(StepRowData, r) for r in rows],
        "tolerated_steps": verdict(rows, test.max_latency_increase),
        "max_latency_increase": test.max_latency_increase,
        "chart": fields_of(InterferenceChartData, chart),
        "bg_bs": spec.bg_bs,
        "bg_rate_iops": spec.bg_rate_iops_per_step,
    }


def _with_a_target(plan: Plan) -> Plan:
    """The interference test's timing does not depend on its target; a template has none."""
    if plan.targets:
        return plan
    return plan.model_copy(update={"targets": [Target(path="target")]})


class InterferenceKind:
    name = INTERFERENCE.name  # the phase kind and the finding kind
    report_section = "report.sections.special.interference_report"
    touches_targets = True

    def slots(self, plan: Plan) -> int:
        return 1

    def steps(self, plan: Plan, first_seq: int) -> list[KindStep]:
        test = plan.interference
        if test is None:
            return []
        seconds = interference_seconds(interference_spec(plan, test))
        names = SeriesNames("interference", "Mixed workload interference",
                            mix_label(test.base_read), "interference", test.base_bs,
                            test.base_read, "IOPS")  # fmt: skip
        phase = f"base load, then {test.steps} background steps ({INTERFERENCE_POINT.key})"
        return [KindStep(INTERFERENCE_POINT, first_seq, f"{first_seq:03d}-interference", phase,
                         seconds + OVERHEAD_S, seconds, names, test.base_jobs,
                         test.base_iodepth)]  # fmt: skip

    def outline(self, plan: Plan) -> Phase | None:
        test = plan.interference
        if test is None:
            return None
        seconds = interference_seconds(interference_spec(_with_a_target(plan), test))
        title = (f"interference test: base load alone, then {test.steps} background steps of "
                 f"{format_duration(test.interval)}")  # fmt: skip
        return Phase("interference", title, Span(seconds, seconds + OVERHEAD_S,
                                                 seconds + OVERHEAD_HIGH_S), 1)  # fmt: skip

    def job_file(self, step: KindStep, ctx: RunContext) -> str:
        assert ctx.plan.interference is not None  # steps() gave this step
        size = min(ctx.sizes.values()) if ctx.sizes else None
        return render_interference_jobfile(interference_spec(ctx.plan, ctx.plan.interference), size)

    def finding(
        self, step: KindStep, ctx: RunContext, folder: Path, document: EngineDocument
    ) -> InterferenceFinding:
        test = ctx.plan.interference
        assert test is not None
        return interference_findings(interference_spec(ctx.plan, test), test, folder)
