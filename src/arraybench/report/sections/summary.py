"""The report's head and its summary: the model with the run's set-up (title, status,
versions, job files, the set-up notes), then the summary table (one row per workload family,
one cell per mix: optimal point, extremes, latency-bounded throughput) and each family's
curve panels, every figure from the series' headline."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.fabric import WorkloadCeiling, workload_ceiling
from arraybench.analysis.headline import Headline
from arraybench.analysis.repeats import throughput_spread_pct
from arraybench.analysis.statistics import METHOD, Spread
from arraybench.plan.array_monitor import without_credentials
from arraybench.plan.catalog import template_names, template_text
from arraybench.report.build import (
    MAX_JOB_FILES,
    bound_text,
    cell_texts,
    curve_points,
    family_of,
    job_file_points,
    job_files,
    job_series,
    level_axis,
    mix_sort_key,
    point_columns,
    series_name,
    series_of,
)
from arraybench.report.model import (
    REMARK_MARK,
    CurvePanel,
    Internal,
    ReportModel,
    SummaryCell,
    SummaryRow,
    WorkloadSection,
)
from arraybench.report.sections.inputs import RunInputs
from arraybench.report.sections.spread import (
    LevelFacts,
    SecondsNoise,
    confidence_note,
    decision_note,
    headline_notes,
    saturation_note,
)
from arraybench.store.db import PointRecord, RunRecord

if TYPE_CHECKING:
    from arraybench.plan.model import Plan

# what a customer's report says instead (report/audience.py): no command, no option
INTERNAL = (
    Internal(r": continue with `arraybench run --resume [^`]*`"),
    Internal(
        r"run at --scale (\S+): durations and sizes were scaled",
        r"a shortened trial run: durations and sizes were scaled by \1",
    ),
    Internal(r"^job files: .*"),  # where the engineer's files lie
)
SCRATCH_FILE = "arraybench-scratch.dat"  # run/setup.py SCRATCH_NAME; importing it loads the plan


def new_model(
    run: RunRecord, once: list[PointRecord], stored_job_files: Mapping[int, Mapping[str, str]]
) -> ReportModel:
    """The model's head: the run's set-up and its notes; `once`: the curves' levels;
    `stored_job_files`: point id -> its job files as the run stored them (Store.job_files)."""
    files = job_files(once, stored_job_files)
    return ReportModel(
        title=report_title(run),
        run_id=run.id,
        scenario=shown_scenario(run),
        labels=run.labels,
        started=run.started,
        finished=run.finished,
        status=_status(run, once),
        arraybench_version=run.arraybench_version,
        engine_version=run.engine_version or "unknown",
        host=run.host,
        kernel=run.kernel,
        targets=run.targets,
        latency_bound=bound_text(run),
        summary_columns=[],
        summary=[],
        sections=[],
        points=[],
        point_columns=point_columns(),
        plan_yaml=without_credentials(run.plan_yaml),  # array_monitor's password
        job_files=files,
        job_series=job_series(once, files),
        notes=_notes(run, once),
    )


def section(model: ReportModel, run: RunInputs) -> None:
    """The summary table and the workload sections' panels, with each series' headline notes;
    the Set-up's system under test and fabric: sections/setupblock.py."""
    summarize(model, run.run, run.once, throughput_spread_pct(run.points), run.facts,
              run.headlines, fabric_of(run.plan),
              lambda pts: SecondsNoise(run.store, pts))  # fmt: skip


def summarize(
    model: ReportModel, run: RunRecord, points: list[PointRecord], spreads: dict[str, float],
    facts: LevelFacts, headlines: Mapping[str, Headline], fabric: dict[str, Any] | None,
    seconds: Callable[[list[PointRecord]], Mapping[str, float | None]] | None = None,
) -> None:  # fmt: skip
    """`spreads`: level key -> its throughput's 95 % half-width in % (repeated levels);
    `facts`: the levels' intervals and validity flags (flagged points leave the headline
    figures); `headlines`: series name -> its headline; `seconds`: a series' points -> each
    one's 1-second throughput spread (the noise of a level measured once)."""
    families = summary_rows_of(list(series_of(points).values()))
    model.summary_columns = sorted({mix for fam in families.values() for mix in fam},
                                   key=mix_sort_key)  # fmt: skip
    for family, mixes in families.items():
        cells = {}
        for mix, pts in mixes.items():
            name = series_name(pts[0])
            summary = headlines[name]
            model.notes += headline_notes(name, summary, {p.key: p.identity.label for p in pts})
            levels = [(p.key, p.throughput()) for p in pts]
            optimal = summary.optimal.key if summary.optimal else None
            model.notes += confidence_note(name, levels, optimal, facts)
            labels = {p.key: p.identity.label for p in pts}
            model.notes += saturation_note(name, summary, labels)
            curve = curve_points(
                pts,
                facts.flagged.keys(),
                {k: v.half_width_pct for k, v in facts.throughput.items()},
            )
            noise = seconds(pts) if seconds else {}
            model.notes += decision_note(name, summary, curve, labels, noise)
            top = ceiling_for(fabric, pts[0])
            ceiling = top.in_unit(pts[0].unit) if top else None
            count = len({p.identity.level_key for p in pts})  # load levels, repeats as one
            optimal, extremes, bounded = cell_texts(summary, pts[0].unit, run, ceiling, spreads,
                                                    count)  # fmt: skip
            cells[mix] = SummaryCell(optimal, extremes, bounded)
        model.summary.append(SummaryRow(family, cells))
        ordered = sorted(mixes.items(), key=lambda item: mix_sort_key(item[0]))
        panels = [_panel(pts, ceiling_for(fabric, pts[0]), facts, headlines[series_name(pts[0])])
                  for _, pts in ordered]  # fmt: skip
        model.sections.append(WorkloadSection(family, panels))


def _panel(
    points: list[PointRecord], top: WorkloadCeiling | None, facts: LevelFacts, summary: Headline
) -> CurvePanel:
    """The series' chart; its optimal, max and min-latency marks are `summary`'s points."""
    x_label, xs, ticks = level_axis(points)
    curve = curve_points(points)
    keys = [p.key for p in points]

    def index(chosen: CurvePoint | None) -> int | None:
        return None if chosen is None else keys.index(chosen.key)

    def ci(spreads: dict[str, Spread], key: str) -> tuple[float, float] | None:
        s = spreads.get(key)
        return None if s is None or s.low is None or s.high is None else (s.low, s.high)

    return CurvePanel(
        mix_label=points[0].mix,
        x_label=x_label,
        x_values=xs,
        x_ticks=[
            t + (REMARK_MARK if facts.remarks.get(p.key) else "")  # the footnote mark
            for t, p in zip(ticks, points, strict=True)
        ],
        throughput_unit=points[0].unit,
        throughput=[c.throughput for c in curve],
        lat_mean_us=[c.lat_mean_us for c in curve],
        lat_p99_us=[c.lat_p99_us for c in curve],
        optimal_index=index(summary.optimal),
        max_index=index(summary.maximum),
        min_latency_index=index(summary.min_latency),
        ceiling=top.in_unit(points[0].unit) if top else None,
        ceiling_label=top.label if top else "",
        throughput_ci=[ci(facts.throughput, p.key) for p in points],
        lat_mean_ci=[ci(facts.latency, p.key) for p in points],
        repeats=max(facts.repeats.get(p.key, 1) for p in points),
        interval_method=METHOD,
        flagged=[", ".join(facts.flagged.get(p.key, [])) for p in points],
        remarks=[", ".join(facts.remarks.get(p.key, [])) for p in points],
    )


def fabric_of(plan: Plan | None) -> dict[str, Any] | None:
    return plan.fabric.model_dump() if plan and plan.fabric else None


def ceiling_for(fabric: dict[str, Any] | None, point: PointRecord) -> WorkloadCeiling | None:
    """The fabric's payload ceiling for this workload on the hosts that ran the point (the
    plan's links are one host's: a point of 4 hosts moves data over 4 hosts' links)."""
    if not fabric:
        return None
    return workload_ceiling(fabric["links"], point.bs, point.read_pct,
                            mtu=fabric.get("mtu", 1500), hosts=point.hosts or 1)  # fmt: skip


def summary_rows_of(series: list[list[PointRecord]]) -> dict[str, dict[str, list[PointRecord]]]:
    """Summary row -> mix -> series. A family is one row; when two of its series would share
    a cell, each of its series gets a row named with its workload, the first one too."""
    mixes: dict[str, list[str]] = {}
    for pts in series:
        mixes.setdefault(family_of(pts[0]), []).append(pts[0].mix)
    crowded = {family for family, seen in mixes.items() if len(seen) != len(set(seen))}
    rows: dict[str, dict[str, list[PointRecord]]] = {}
    for pts in series:
        family = family_of(pts[0])
        name = f"{family} · {pts[0].workload}" if family in crowded else family
        rows.setdefault(name, {})[pts[0].mix] = pts
    return rows


def shown_scenario(run: RunRecord) -> str:
    """The scenario label the user set, "" for none: `default`, and a template's own label
    (inout's `L1C4S1`: a LUN, controller and server count nobody said this run measured),
    are not the user's."""
    if run.scenario in ("", "default"):
        return ""
    if run.plan_name in template_names():
        own = re.search(r"^scenario:\s*(\S+)", template_text(run.plan_name), re.M)
        if own and own.group(1) == run.scenario:
            return ""
    return run.scenario


def report_title(run: RunRecord) -> str:
    """`arraybench inout: L1C4S1` when the user set the scenario; on the default scratch file
    `scratch file`, else the plan's name alone."""
    if len(run.targets) == 1 and run.targets[0].endswith("/" + SCRATCH_FILE):
        return f"arraybench {run.plan_name}: scratch file"
    scenario = shown_scenario(run)
    return f"arraybench {run.plan_name}: {scenario}" if scenario else f"arraybench {run.plan_name}"


def _status(run: RunRecord, points: list[PointRecord]) -> str:
    if run.status == "running":
        return f"running or killed ({len(points)} of {run.total_points} points stored)"
    return run.status


def _notes(run: RunRecord, points: list[PointRecord]) -> list[str]:
    notes = []
    if run.status != "complete" and len(points) < run.total_points:
        notes.append(
            f"{run.total_points - len(points)} of {run.total_points} points are missing: "
            f"continue with `arraybench run --resume {run.id}`"
        )
    if run.scale != 1:
        notes.append(f"run at --scale {run.scale:g}: durations and sizes were scaled")
    if len(points) > MAX_JOB_FILES:
        notes.append(
            f"job files: the first point's of each series here ({len(job_file_points(points))} "
            f"of {len(points)}); every point's is in its folder, {run.folder}/points/*/point.fio"
        )
    return notes
