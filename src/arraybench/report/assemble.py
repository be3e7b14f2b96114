"""Build the ReportModel of one run."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields
from typing import Any, Literal

from arraybench.analysis.acceptance import FAIL, NO_DATA, PASS, Verdict, judge_all
from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.fabric import payload_ceiling
from arraybench.analysis.findings import Disagreements, summarize_disagreements
from arraybench.analysis.headline import Headline
from arraybench.analysis.repeats import throughput_spread_pct
from arraybench.analysis.statistics import METHOD, Spread
from arraybench.finding_kinds import (
    ADAPTIVE,
    INTEGRITY,
    MONITOR,
    PRECONDITION,
    PROVENANCE,
    PURGE,
    AdaptiveFinding,
)
from arraybench.plan.catalog import template_names, template_text
from arraybench.plan.load import stored_plan
from arraybench.plan.model import Expectation
from arraybench.report.appendix import notes_box
from arraybench.report.arrayside import add_array_view
from arraybench.report.build import (
    HOST_COLUMNS,
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
from arraybench.report.distribution import distributions
from arraybench.report.failures import failure_tables
from arraybench.report.headlines import (
    curve_levels,
    headline_includes_flagged,
    run_headlines,
)
from arraybench.report.histograms import histogram_figures
from arraybench.report.model import (
    REMARK_MARK,
    CurvePanel,
    PointRow,
    ReportModel,
    ReportTable,
    SummaryCell,
    SummaryRow,
    WorkloadSection,
)
from arraybench.report.overlays import overlays
from arraybench.report.regions import whole_target_notes
from arraybench.report.rounds import rounds_report, window_means
from arraybench.report.scaling import scaling_overlay, scaling_tables, spread_note
from arraybench.report.scenarios import scenario_overlays, scenario_report
from arraybench.report.seedfigures import add_seed_figures
from arraybench.report.seedtables import devices_grids, maximum_recorded
from arraybench.report.special import special_report
from arraybench.report.spread import (
    LevelFacts,
    confidence_note,
    flag_table,
    headline_notes,
    level_facts,
    repeat_notes,
    spread_tables,
    thresholds_table,
)
from arraybench.report.timelines import timelines, untimed_note
from arraybench.run.provenance import provenance_rows
from arraybench.store.db import Finding, PointRecord, RunRecord, Store
from arraybench.targets.condition import purge_lines
from arraybench.units import format_size


def _panel(
    points: list[PointRecord], ceiling: float | None, facts: LevelFacts, summary: Headline
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
        ceiling=ceiling,
        throughput_ci=[ci(facts.throughput, p.key) for p in points],
        lat_mean_ci=[ci(facts.latency, p.key) for p in points],
        repeats=max(facts.repeats.get(p.key, 1) for p in points),
        interval_method=METHOD,
        flagged=[", ".join(facts.flagged.get(p.key, [])) for p in points],
        remarks=[", ".join(facts.remarks.get(p.key, [])) for p in points],
    )


def fabric_of(run: RunRecord) -> dict[str, Any] | None:
    plan = stored_plan(run.plan_yaml, f"{run.folder}/plan.yaml")
    return plan.fabric.model_dump() if plan and plan.fabric else None


def ceiling_for(fabric: dict[str, Any] | None, point: PointRecord) -> float | None:
    """The fabric's payload ceiling for this workload, in the series' unit, per host."""
    if not fabric:
        return None
    direction: Literal["read", "write", "mixed"] = (
        "read" if point.read_pct == 100 else "write" if point.read_pct == 0 else "mixed"
    )
    top = payload_ceiling(
        fabric["links"], point.bs, direction, mtu=fabric.get("mtu", 1500),
        read_fraction=point.read_pct / 100,
    )  # fmt: skip
    return top.iops if point.unit == "IOPS" else top.mb_per_s


def report_for_run(store: Store, run_id: str) -> ReportModel:
    """Everything stored about a run, as the report's view-model."""
    run = store.get_run(run_id)
    points = store.points(run_id)
    findings = store.findings(run_id)
    # curves and summaries on each level's median over its repetitions (repeat: N)
    once = curve_levels(points)
    facts = level_facts(points, findings, headline_includes_flagged(run))
    headlines = run_headlines(once, run, facts)  # once per series: every section reads them
    model = build_report(run, once, throughput_spread_pct(points), rows=False, facts=facts,
                         headlines=headlines)  # fmt: skip
    model.points = [point_row(p) for p in points]
    steady, tables = rounds_report(points, findings)
    special_tables, special_timelines = special_report(findings)
    model.timelines = steady + special_timelines + timelines(store, run_id, once)
    model.notes += untimed_note(once)
    model.notes += whole_target_notes(run, once, findings)
    model.distributions = distributions(once)
    model.notes += [line for t in steady for line in t.findings]
    model.tables += tables + special_tables
    model.overlays = overlays(run.plan_yaml, once, facts, headlines)
    # SNIA rounds: each test's window mean, as the window table states it
    recorded = window_means(points, findings)
    model.tables = maximum_recorded(once, headlines, recorded) + devices_grids(once) + model.tables
    model.tables = scenario_report(run, once, findings, headlines) + model.tables
    model.overlays = scenario_overlays(once, headlines) + model.overlays
    model.tables += scaling_tables(once, facts, headlines)
    model.overlays += scaling_overlay(once, facts, headlines)
    model.notes += spread_note(points)
    model.notes += adaptive_notes(findings, once, headlines)
    model.tables += failure_tables(points, findings)
    spread = spread_tables(points, facts)  # per point: the appendix; which level won: here
    model.tables += spread[1:]
    model.appendix += spread[:1] + flag_table(points, findings) + thresholds_table(findings)
    model.notes += repeat_notes(points)
    add_array_view(model, store, run_id, points)  # `arraybench attach`
    add_seed_figures(model, once, findings)  # the seed reports' own figure forms
    model.figures += histogram_figures(once, headlines)  # latency bars per series
    model.verdicts = verdict_tables(run, points, findings, facts)
    model.provenance = run_provenance(run, findings)
    partial = [p.key for p in points if p.partial]
    if partial:
        model.notes.append(f"partial points (a host failed; the others' data kept): "
                           f"{', '.join(partial)}")  # fmt: skip
    for purge in PURGE.among(findings):
        model.notes += purge_lines(purge["targets"])
    for d in PRECONDITION.among(findings):
        model.notes.append(f"preconditioned: {d['bytes'] / 1e9:,.2f} GB of {d['bs'] // 1024} KiB "
                           f"{d['pattern']} writes ({d['passes']:g} x capacity) in "
                           f"{d['seconds']:,.0f} s")  # fmt: skip
    by_id = {p.id: p.key for p in points}
    flags = [(by_id.get(f.point_id or 0, "?"), flag) for f in findings if f.kind == MONITOR.name
             for flag in MONITOR.of(f)["flags"]]  # fmt: skip
    compared = sum(1 for p in points if p.kernel_iops is not None or p.kernel_mbps is not None)
    model.notes += disagreement_notes(summarize_disagreements(flags, compared))
    model.notes_box = notes_box(model.notes, facts, points)
    return model


def disagreement_notes(found: Disagreements | None) -> list[str]:
    """fio against the kernel, once per run: how many points, the worst, the likely cause."""
    if found is None:
        return []
    graded = ""
    if found.same_bytes:  # bytes first (analysis.validity): request counts alone are remarks
        graded = (f" ({found.same_bytes} of them the same bytes in other requests: merged or "
                  "split I/O, a remark, kept in the headline figures)")  # fmt: skip
    return [
        f"fio and the kernel (/proc/diskstats) disagree by more than 10 % on {found.points} of "
        f"{found.of} points{graded}; worst {found.worst_point}: {found.worst}; likely cause: "
        f"{found.likely_cause} (per point: the column 'kernel vs fio' of the points table)"
    ]


def adaptive_notes(
    findings: list[Finding], points: list[PointRecord], headlines: Mapping[str, Headline]
) -> list[str]:
    """Which levels an adaptive series tried, and why it stopped; its optimal point and
    maximum are the series' headline (the summary's), the search's own named beside them
    when they differ (the headline leaves flagged points out, the search saw every point)."""
    series = {p.key: series_name(p) for p in points}
    labels = {p.key: p.identity.label for p in points}  # the finding names points by key

    def _level(key: str) -> str:
        return labels.get(key, key)

    notes = []
    for d in ADAPTIVE.among(findings):
        found = next((headlines[series[k]] for k in d["tried"] if k in series), None)
        optimal = found.optimal.key if found and found.optimal else d["optimal"]
        top = found.maximum.key if found and found.maximum else d["maximum"]
        own = ""
        if (optimal, top) != (d["optimal"], d["maximum"]):
            own = (f" (the search named optimal {_level(d['optimal'] or '–')}, max "
                   f"{_level(d['maximum'] or '–')} on every point it measured)")  # fmt: skip
        notes.append(
            f"{d['series']}: adaptive series ({d['mode']}): ran {len(d['tried'])} of "
            f"{len(d['ladder'])} levels ({', '.join(_level(k) for k in d['tried'])}); "
            f"{d['reason']}; optimal {_level(optimal or '–')}, "
            f"max {_level(top or '–')}{own}" + _confidence(d)
        )
    return notes


def _confidence(d: AdaptiveFinding) -> str:
    """How sure the adaptive series' optimal point is, from its levels' 1-second spread."""
    if d.get("confidence"):
        return f"; {d.get('confidence')} (noise: {d.get('noise', '')})"
    if d.get("noise"):  # searched with noise, but no level had enough seconds for a spread
        return "; how sure: unknown (its points were too short for a spread of their seconds)"
    return ""


def expectations_of(run: RunRecord) -> list[Expectation]:
    plan = stored_plan(run.plan_yaml, f"{run.folder}/plan.yaml")
    return list(plan.acceptance) if plan else []


def integrity_verdicts(points: list[PointRecord], findings: list[Finding]) -> list[Verdict]:
    """One verdict per point run in verify mode (per host on many hosts): no acknowledged
    write lost; a read-back that could not run is NO DATA."""
    keys = {p.id: p.key for p in points}
    verdicts = []
    for f in findings:
        if f.kind == INTEGRITY.name:
            d = INTEGRITY.of(f)
            clean = not (d.get("lost") or d.get("corrupt") or d.get("unreadable"))
            verdict = NO_DATA if d.get("error") else PASS if clean else FAIL
            summary, key = str(d.get("summary", "")), keys.get(f.point_id or 0)
            verdicts.append(Verdict("no acknowledged write lost", verdict, summary, key))
    return verdicts


def verdict_tables(
    run: RunRecord, points: list[PointRecord], findings: list[Finding],
    facts: LevelFacts | None = None,
) -> list[ReportTable]:  # fmt: skip
    """The plan's acceptance criteria and the integrity checks; flagged points decide no
    criterion, as they name no headline figure (unless the plan keeps them in)."""
    facts = facts or level_facts(points, findings, headline_includes_flagged(run))
    verdicts = judge_all(expectations_of(run), points, facts.flagged, facts.include_flagged)
    verdicts += integrity_verdicts(points, findings)
    if not verdicts:
        return []
    rows = [[v.criterion, v.verdict, v.evidence, v.point or "–"] for v in verdicts]
    passed = sum(v.passed for v in verdicts)
    return [ReportTable("Acceptance criteria", ["Criterion", "Verdict", "Measured", "Point"],
                        rows, f"{passed} of {len(verdicts)} passed")]  # fmt: skip


def run_provenance(run: RunRecord, findings: list[Finding]) -> list[tuple[str, str]]:
    rows = [
        ("arraybench", run.arraybench_version),
        ("fio", run.fio_version or "?"),
        ("controller", f"{run.host}, Linux {run.kernel}"),
        ("started", run.started),
        ("finished", run.finished or "not finished"),
        ("results folder", run.folder),
    ]
    for found in PROVENANCE.among(findings):
        rows += provenance_rows(found)
    return rows


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


def build_report(
    run: RunRecord, points: list[PointRecord], spreads: dict[str, float] | None = None,
    *, rows: bool = True, facts: LevelFacts | None = None,
    headlines: Mapping[str, Headline] | None = None,
) -> ReportModel:  # fmt: skip
    """The model of `points`; without `rows` the points table is left to the caller.
    `spreads`: level key -> its throughput's 95 % half-width in % (repeated levels); `facts`:
    the levels' intervals and validity flags (flagged points leave the headline figures);
    `headlines`: series name -> its headline, when the caller computed them already."""
    facts = facts or LevelFacts()
    headlines = headlines or run_headlines(points, run, facts)
    notes: list[str] = []
    series = series_of(points)
    fabric = fabric_of(run)
    families = summary_rows_of(list(series.values()))
    columns = sorted({mix for fam in families.values() for mix in fam}, key=mix_sort_key)
    summary_rows, sections = [], []
    for family, mixes in families.items():
        cells = {}
        for mix, pts in mixes.items():
            name = series_name(pts[0])
            summary = headlines[name]
            notes += headline_notes(name, summary, {p.key: p.identity.label for p in pts})
            levels = [(p.key, p.throughput()) for p in pts]
            optimal = summary.optimal.key if summary.optimal else None
            notes += confidence_note(name, levels, optimal, facts)
            ceiling = ceiling_for(fabric, pts[0])
            optimal, extremes, bounded = cell_texts(summary, pts[0].unit, run, ceiling, spreads)
            cells[mix] = SummaryCell(optimal, extremes, bounded)
        summary_rows.append(SummaryRow(family, cells))
        ordered = sorted(mixes.items(), key=lambda item: mix_sort_key(item[0]))
        panels = [_panel(pts, ceiling_for(fabric, pts[0]), facts, headlines[series_name(pts[0])])
                  for _, pts in ordered]  # fmt: skip
        sections.append(WorkloadSection(family, panels))
    return ReportModel(
        title=report_title(run),
        run_id=run.id,
        scenario=shown_scenario(run),
        labels=run.labels,
        started=run.started,
        finished=run.finished,
        status=_status(run, points),
        arraybench_version=run.arraybench_version,
        fio_version=run.fio_version or "unknown",
        host=run.host,
        kernel=run.kernel,
        targets=run.targets,
        latency_bound=bound_text(run),
        summary_columns=columns,
        summary=summary_rows,
        sections=sections,
        points=[point_row(p) for p in sorted(points, key=lambda p: p.seq)] if rows else [],
        point_columns=point_columns(),
        plan_yaml=run.plan_yaml,
        job_files=job_files(points),
        job_series=job_series(points),
        notes=_notes(run, points) + notes,
    )


SCRATCH_FILE = "arraybench-scratch.dat"  # run.setup.SCRATCH_NAME (run sits above report)


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


RECORD_FIELDS = [f.name for f in fields(PointRecord) if f.name not in ("metrics", "identity")]


def kernel_vs_fio(point: PointRecord) -> float | None:
    """The kernel's throughput against fio's, in % (+ = the kernel saw more), in the
    series' unit; None without kernel counters."""
    mbps = point.unit == "MB/s"
    kernel = point.kernel_mbps if mbps else point.kernel_iops
    fio = point.metric("total", "mbps" if mbps else "iops")
    if kernel is None or not fio:
        return None
    return (kernel - fio) / fio * 100


def point_row(point: PointRecord) -> PointRow:
    """One stored point as a row of the points tables (and of the CSV, under raw names)."""
    record: dict[str, str | int | float | None] = {"series": series_name(point)}
    record |= {name: getattr(point, name) for name in RECORD_FIELDS}
    repetition = point.identity.repetition  # `repeat: N`: the level's rows told apart
    return PointRow(
        series=series_name(point),
        level=f"{point.workers}x{point.iodepth}" + (f" #{repetition}" if repetition > 1 else ""),
        workers=point.workers,
        iodepth=point.iodepth,
        targets=point.targets,
        values=dict(point.metrics)
        | {c: getattr(point, c) for c in HOST_COLUMNS}
        | {"kernel_vs_fio_pct": kernel_vs_fio(point)},
        block_size=format_size(point.bs),
        engine=point.ioengine,
        record=record | dict(point.metrics),
    )
