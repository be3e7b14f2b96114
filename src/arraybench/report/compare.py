"""Several runs (or scenarios of one run) side by side: one chart per workload with one line
per scenario, and max / optimal / min latency per scenario with the delta to a baseline.

A scenario is `RUN` (labelled by the run's scenario, else its id), `RUN:hN` (the points of
that run measured on N hosts), `RUN:C3` (the points of the plan scenario C3 of a run with
`scenarios:`) or `RUN:LABEL` (the whole run, shown as LABEL).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field, replace

from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.headline import Headline, optimal_impact
from arraybench.analysis.kernelcheck import KernelView, views_by_point
from arraybench.analysis.repeats import (
    collapse,
    level_throughputs,
    noise_mark,
)
from arraybench.analysis.validity import KIND
from arraybench.errors import ArraybenchError
from arraybench.finding_kinds import MONITOR, PROVENANCE
from arraybench.plan.array_monitor import without_credentials
from arraybench.report.build import (
    bound_text,
    campaign_scenario,
    cell_texts,
    job_files,
    job_series,
    order_points,
    point_columns,
)
from arraybench.report.model import Overlay, ReportModel, ReportTable, SummaryCell, SummaryRow
from arraybench.report.sections.arrayside import ArrayView, array_view
from arraybench.report.sections.datareduction import COLUMNS as DATA_COLUMNS
from arraybench.report.sections.datareduction import array_reduction, reduction_rows
from arraybench.report.sections.headlines import (
    HOW_COMPUTED,
    headline_includes_flagged,
    series_headline,
)
from arraybench.report.sections.impactwords import (
    FLAGGED_MARK,
    OPTIMAL_IMPACT_RULE,
    optimal_impact_text,
)
from arraybench.report.sections.overlays import curves_overlay, with_marks, x_axis_title
from arraybench.report.sections.points import point_row
from arraybench.report.sections.setupbars import SetupHeadline, setup_bars
from arraybench.report.sections.spread import LevelFacts, flag_table, level_facts
from arraybench.store.db import PointRecord, RunRecord, Store
from arraybench.targets.queue import differences, recorded_queues
from arraybench.units import format_latency, format_pct, format_throughput

SPECIAL_WORKLOADS = {"interference", "metadata"}  # not curves over load levels
NOISE_NOTE = ("within noise: the 95 % intervals (Student t) of the two levels' repeats "
              "overlap; beyond noise: they do not")  # fmt: skip


@dataclass(frozen=True)
class Scenario:
    label: str
    run: RunRecord
    points: list[PointRecord]
    queues: dict[str, dict[str, str]] = field(default_factory=dict)  # target -> its settings
    # level key -> its validity flags' kinds: left out of the headline figures, as in the run's
    # report, unless its plan sets report.headline_includes_flagged (`include_flagged`)
    flagged: dict[str, list[str]] = field(default_factory=dict)
    include_flagged: bool = False
    # its "Validity flags" table (report/sections/spread.flag_table), if any
    flags: list[ReportTable] = field(default_factory=list)
    # its levels' flags and spreads, as its run's report reads them (report/sections/spread.py)
    facts: LevelFacts = field(default_factory=LevelFacts)
    # its points beside the array's own counters (`arraybench attach`, array_monitor:)
    array: ArrayView | None = None
    # point id -> its job files as its run stored them (empty: read from its folder)
    job_texts: dict[int, dict[str, str]] = field(default_factory=dict)
    # point id -> fio against the kernel, as its run stored it (analysis.kernelcheck)
    kernel: dict[int, KernelView] = field(default_factory=dict)
    # its writing workloads' data: the datareduction table's rows (workload, requested,
    # achieved, on the target, the array's ratio); empty when its run sampled none
    data: list[list[str]] = field(default_factory=list)
    _headlines: dict[tuple[str, ...], Headline] = field(default_factory=dict, compare=False)

    def summary(self, curve: list[PointRecord]) -> Headline:
        """The curve's headline (max, optimal point, min latency), computed once per curve
        by the function the run's own report uses (report/sections/headlines.py)."""
        key = tuple(p.key for p in curve)
        if key not in self._headlines:
            self._headlines[key] = series_headline(curve, self.run, self.facts)
        return self._headlines[key]


def load_scenario(store: Store, spec: str) -> Scenario:
    run_id, _, name = spec.partition(":")
    run = store.get_run(run_id)
    points = [p for p in store.points(run_id)
              if p.workload not in SPECIAL_WORKLOADS and p.pattern != "curve"]  # fmt: skip
    own = run.scenario if run.scenario not in ("", "default") else run.id
    label = name or own
    points = plan_scenario(run_id, points, name)
    hosts = re.fullmatch(r"h(\d+)", name)
    if hosts:
        points = [p for p in points if (p.hosts or 1) == int(hosts.group(1))]
        label = f"{own} ({name})"
        if not points:
            raise ArraybenchError(
                f"{spec}: run {run_id} has no points on {hosts.group(1)} host(s)",
                "see `arraybench show RUN` for its host counts",
            )
    queues = {k: v for found in PROVENANCE.among(store.findings(run_id, PROVENANCE.name))
              for k, v in recorded_queues(found).items()}  # fmt: skip
    validity = store.findings(run_id, KIND)
    include = headline_includes_flagged(run)
    facts = level_facts(points, validity, include)
    flags = [t for t in flag_table(points, validity) if t.medium != "print"]  # every flag
    array = array_view(store, run_id, points)
    kernel = views_by_point(store.findings(run_id, MONITOR.name))
    data = reduction_rows(store.findings(run_id), points,
                          array_reduction(store, run_id, points))  # fmt: skip
    return Scenario(label, run, points, queues, facts.flagged, include, flags, facts, array,
                    store.job_files(run_id), kernel, data)  # fmt: skip


def flags_of_all(scenarios: list[Scenario]) -> list[ReportTable]:
    """Every scenario's validity flags in one table, as each run's report lists its own (the
    crosses on the charts refer to it)."""
    own = [(s.label, table) for s in scenarios for table in s.flags]
    if not own:
        return []
    rows = [[label, *row] for label, table in own for row in table.rows]
    caption = ", ".join(f"{label}: {table.caption}" for label, table in own)
    columns = ["Scenario", *own[0][1].columns]
    return [ReportTable(own[0][1].title, columns, rows,
                        caption + " (red crosses on the report's charts)", 2)]  # fmt: skip


def plan_scenario(run_id: str, points: list[PointRecord], name: str) -> list[PointRecord]:
    """`RUN:C3` of a run with plan scenarios: the points of scenario C3; `RUN` alone would
    draw every scenario's points as one curve, so it is refused with the specs to give."""
    names = list(dict.fromkeys(s for p in points if (s := campaign_scenario(p))))
    if not names:
        return points
    if name not in names:
        raise ArraybenchError(
            f"{run_id}{':' + name if name else ''}: run {run_id} measured the scenarios "
            f"{', '.join(names)}",
            f"compare them as {' '.join(f'{run_id}:{n}' for n in names)}",
        )
    return [p for p in points if campaign_scenario(p) == name]


def _series_key(point: PointRecord) -> str:
    """A curve to match across scenarios: the workload (at a device count); hosts only count
    when a scenario holds several host counts (then they are different curves)."""
    return f"{point.workload} ({point.devices} dev)" if point.devices else point.workload


def curves_of(scenario: Scenario) -> OrderedDict[str, list[PointRecord]]:
    several_host_counts = len({p.hosts or 1 for p in scenario.points}) > 1
    curves: OrderedDict[str, list[PointRecord]] = OrderedDict()
    for point in sorted(collapse(scenario.points), key=lambda p: p.seq):  # repeats: medians
        key = _series_key(point)
        if several_host_counts:
            key += f" ({point.hosts or 1} hosts)"
        curves.setdefault(key, []).append(point)
    return OrderedDict((k, order_points(v)) for k, v in curves.items())


def _delta(value: float | None, base: float | None) -> str:
    if value is None or not base:
        return "–"
    return format_pct((value - base) / base * 100, signed=True)


def _noisy(
    p: CurvePoint | None, raw: list[PointRecord], b: CurvePoint | None, base_raw: list[PointRecord]
) -> str:
    """The delta of two levels' throughputs, marked within or beyond noise when both were
    repeated (their 95 % Student t intervals overlap or not), and flagged when either point
    carries validity flags."""
    text = _delta(_thr(p), _thr(b))
    if p is None or b is None or text == "–":
        return text
    mark = _noise(p, raw, b, base_raw)
    return _flagged(f"{text} {mark}" if mark else text, p, b)


def _noise(
    p: CurvePoint, raw: list[PointRecord], b: CurvePoint, base_raw: list[PointRecord]
) -> str:
    """`(within noise)`, `(beyond noise)`, or nothing when a level was not repeated."""
    mark = noise_mark(level_throughputs(raw, p.key), level_throughputs(base_raw, b.key))
    return f"({mark})" if mark else ""


def _against_optimal(
    s: Headline, raw: list[PointRecord], b: Headline | None, base_raw: list[PointRecord],
    unit: str,
) -> str:  # fmt: skip
    """The scenario at the baseline's optimal load or latency (analysis/headline.py
    optimal_impact), never its own optimal point against the baseline's."""
    impact = optimal_impact(s, b) if b else None
    if impact is None:
        return "–"
    noise = _noise(impact.point, raw, impact.base, base_raw) if impact.point else ""
    return optimal_impact_text(impact, unit, noise)


def _thr(p: CurvePoint | None) -> float | None:
    return p.throughput if p else None


def _at(p: CurvePoint | None, unit: str) -> str:
    return (
        f"{format_throughput(p.throughput, unit)} @ {format_latency(p.lat_mean_us)}" if p else "–"
    )


def _lat(p: CurvePoint | None) -> str:
    return format_latency(p.lat_mean_us if p else None)


def _row(
    key: str, scenario: Scenario, curve: list[PointRecord], base: list[PointRecord] | None,
    base_scenario: Scenario | None = None,
) -> list[str]:  # fmt: skip
    """One scenario's figures for one workload; `base` is None for the baseline itself."""
    unit = curve[0].unit
    s = scenario.summary(curve)
    b = base_scenario.summary(base) if base and base_scenario else None
    base_raw = base_scenario.points if base_scenario else []
    if base is None:
        return [key, scenario.label, format_throughput(_thr(s.maximum), unit), "baseline",
                _at(s.optimal, unit), "baseline", _lat(s.min_latency), "baseline"]  # fmt: skip
    opt = s.optimal  # an empty `base` (workload missing from the baseline) gives no deltas
    return [
        key,
        scenario.label,
        format_throughput(_thr(s.maximum), unit),
        _noisy(s.maximum, scenario.points, b.maximum if b else None, base_raw),
        _at(opt, unit),
        _against_optimal(s, scenario.points, b, base_raw, unit),
        _lat(s.min_latency),
        _flagged(
            _delta(
                s.min_latency.lat_mean_us if s.min_latency else None,
                b.min_latency.lat_mean_us if b and b.min_latency else None,
            ),
            s.min_latency,
            b.min_latency if b else None,
        ),
    ]


def _flagged(text: str, mine: CurvePoint | None, base: CurvePoint | None) -> str:
    """A delta marked when either point carries validity flags (a series named from flagged
    points, or a plan that keeps them in)."""
    if text == "–" or not any(p is not None and p.flagged for p in (mine, base)):
        return text
    return text + FLAGGED_MARK


COLUMNS = ["Workload", "Scenario", "Max", "Δ max", "Optimal", "Δ at the baseline's optimal",
           "Min latency", "Δ min latency"]  # fmt: skip


def compare(scenarios: list[Scenario], baseline: str | None = None) -> ReportModel:
    """The comparison as a ReportModel (rendered by every report format)."""
    labels = [s.label for s in scenarios]
    if len(set(labels)) != len(labels):
        raise ArraybenchError(
            "two scenarios have the same label",
            "name them: RUN:LABEL (e.g. run1:baseline run2:ctrl-b-down)",
        )
    base_label = baseline or labels[0]
    if base_label not in labels:
        raise ArraybenchError(f"--baseline {base_label}: no such scenario",
                              f"use one of: {', '.join(labels)}")  # fmt: skip
    base = scenarios[labels.index(base_label)]
    curves = {s.label: curves_of(s) for s in scenarios}
    keys: list[str] = []
    for s in scenarios:
        keys += [k for k in curves[s.label] if k not in keys]
    rows, overlays, notes = [], [], []
    bars: list[SetupHeadline] = []
    for key in keys:
        having = [s for s in scenarios if key in curves[s.label]]
        missing = [s.label for s in scenarios if key not in curves[s.label]]
        if missing:
            notes.append(f"workload {key} is missing from: {', '.join(missing)} "
                         "(compared where present)")  # fmt: skip
        units = {curves[s.label][key][0].unit for s in having}
        if len(units) > 1:
            notes.append(f"workload {key}: different units ({', '.join(sorted(units))}); "
                         "not compared")  # fmt: skip
            continue
        base_curve = curves[base.label].get(key)
        for s in having:
            theirs = None if s is base else base_curve
            if s is not base and base_curve is None:
                theirs = []  # no baseline for this workload: no delta
            rows.append(_row(key, s, curves[s.label][key], theirs, base))
        labelled = [(s.label, curves[s.label][key]) for s in having]
        flagged = {s.label: s.flagged for s in having}
        heads = {s.label: s.summary(curves[s.label][key]) for s in having}  # the table's figures
        bars += [SetupHeadline(key, label, curves[label][key][0].unit, h)
                 for label, h in heads.items()]  # fmt: skip
        overlay = curves_overlay(key, x_axis_title(labelled), labelled, None, flagged, heads)
        overlays.append(with_marks(overlay))  # each scenario's optimal point and maximum
    if any("noise)" in cell for row in rows for cell in row):
        notes.append(NOISE_NOTE)
    notes += [line for s in scenarios if (line := flagged_note(s, curves[s.label]))]
    for s in scenarios:  # host settings that differ make the runs less comparable
        if s is not base:
            notes += differences(s.label, base.label, s.queues, base.queues)
    summary = _summary(scenarios, base, curves, keys)
    table = ReportTable(
        f"Max, optimal point and min latency per scenario (Δ against {base_label})",
        COLUMNS, rows,
        "Optimal point: the end of the healthy range, the last level before the first step "
        "whose throughput gain is not larger than its latency rise (" + HOW_COMPUTED + "); "
        + OPTIMAL_IMPACT_RULE + "; (flagged): a figure from a point with validity flags.",
        key_columns=2,
    )  # fmt: skip
    model = _model(scenarios, table, overlays, notes)
    model.tables += [t for key in keys if (t := array_table(key, scenarios, curves))]
    model.tables += [t for t in [data_table(scenarios)] if t]
    model.figures += setup_bars(bars)
    model.appendix += flags_of_all(scenarios)  # look-ups: after the charts
    model.summary_columns = labels
    model.summary = summary
    model.latency_bound = bound_text(base.run)
    model.points = [
        replace(row, series=f"{s.label} · {row.series}")
        for s in scenarios
        for row in (point_row(p, s.kernel.get(p.id)) for p in sorted(s.points, key=lambda p: p.seq))
    ]
    model.point_columns = point_columns()
    for s in scenarios:
        texts = job_files(s.points, s.job_texts)
        model.job_files |= {f"{s.label}: {k}": v for k, v in texts.items()}
        model.job_series |= {f"{s.label}: {k}": f"{s.label}: {v}"
                             for k, v in job_series(s.points, texts).items()}  # fmt: skip
    return model


def data_table(scenarios: list[Scenario]) -> ReportTable | None:
    """Each scenario's data beside the others' (runs made with different `data:`, e.g.
    `--set data=db` against `--set data=incompressible`): what each asked and reached, the
    context of its deltas; None when no scenario's run sampled its data."""
    rows = [[s.label, *row] for s in scenarios for row in s.data]
    if not rows:
        return None
    return ReportTable(
        "Data per scenario: requested, achieved, reported",
        ["Scenario", *DATA_COLUMNS], rows,
        "As in each run's report (docs/data.md): ratios x:1 requested in its data:, reached "
        "by the fio sample before its first point, read back from its targets, and the "
        "array's own; a scenario without a row wrote fio's random bytes unsampled.",
        key_columns=2,
    )  # fmt: skip


def array_table(
    key: str, scenarios: list[Scenario], curves: dict[str, OrderedDict[str, list[PointRecord]]]
) -> ReportTable | None:
    """One workload's points beside the array's counters, per scenario with some attached
    (the cells of its own report's table); None when no scenario has any."""
    having = [s for s in scenarios if key in curves[s.label]]
    views = [s.array for s in having if s.array]
    if not views:
        return None
    columns = list(dict.fromkeys(c for v in views for c in v.columns))
    rows = []
    for s in having:
        if s.array is None:
            rows.append([s.label, "no array counters", *("–" for _ in columns)])
            continue
        levels = {p.key for p in curves[s.label][key]}
        raw = [p for p in sorted(s.points, key=lambda p: p.seq)
               if p.identity.level_key in levels]  # fmt: skip
        rows += [[s.label, p.key, *(s.array.cells[p.key].get(c, "–") for c in columns)]
                 for p in raw if p.key in s.array.cells]  # fmt: skip
    sources = ", ".join(f"{s.label}: {s.array.source}" for s in having if s.array)
    return ReportTable(
        f"{key}: array's counters beside fio's",
        ["Scenario", "Point", *columns],
        rows,
        f"As in each run's report: the array's mean over each point's logged seconds ({sources}).",
        key_columns=2,
    )


def _summary(
    scenarios: list[Scenario],
    base: Scenario,
    curves: dict[str, OrderedDict[str, list[PointRecord]]],
    keys: list[str],
) -> list[SummaryRow]:
    """One row per workload, one cell per scenario: its optimal point, max and min latency,
    and the change of each against the baseline."""
    rows = []
    for key in keys:
        cells = {}
        base_curve = curves[base.label].get(key)
        b = base.summary(base_curve) if base_curve else None
        for s in scenarios:
            curve = curves[s.label].get(key)
            if not curve:
                continue
            mine = s.summary(curve)
            optimal, extremes, bounded = cell_texts(mine, curve[0].unit, s.run)
            if s is not base and b is not None:
                against = _against_optimal(mine, s.points, b, base.points, curve[0].unit)
                extremes += (
                    f" · Δ max {_noisy(mine.maximum, s.points, b.maximum, base.points)}, "
                    f"against the baseline's optimal point {against}"
                )
            elif s is base:
                extremes += " · baseline"
            cells[s.label] = SummaryCell(optimal, extremes, bounded)
        rows.append(SummaryRow(key, cells))
    return rows


def flagged_note(s: Scenario, curves: OrderedDict[str, list[PointRecord]]) -> str | None:
    """One line per scenario whose flagged points its figures left out (or kept, when its
    plan says so): the same rule as the run's own report."""
    flagged = [p for curve in curves.values() for p in curve if p.key in s.flagged]
    if not flagged:
        return None
    kinds = ", ".join(dict.fromkeys(k for p in flagged for k in s.flagged[p.key]))

    def points(n: int) -> str:
        return f"{n} flagged point{'s' if n > 1 else ''} ({kinds})"

    if s.include_flagged:
        return (f"{s.label}: {points(len(flagged))} kept in its max, optimal point and min "
                "latency: its plan sets report: {headline_includes_flagged: true}")  # fmt: skip
    left = sum(len(s.summary(curve).left_out) for curve in curves.values())
    every = [k for k, curve in curves.items() if s.summary(curve).named_from_flagged]
    said = []
    if left:
        said.append(f"{points(left)} left out of its max, optimal point and min latency, as "
                    "in its report (`arraybench show` says why)")  # fmt: skip
    if every:
        said.append(f"every point of {', '.join(every)} is flagged: its figures are named "
                    "from flagged points")  # fmt: skip
    return f"{s.label}: " + "; ".join(said)


def _origin(s: Scenario) -> str:
    return f"run {s.run.id}, {s.run.started}, fio {s.run.engine_version}, host {s.run.host}"


def _model(
    scenarios: list[Scenario], table: ReportTable, overlays: list[Overlay], notes: list[str]
) -> ReportModel:
    first = scenarios[0].run
    return ReportModel(
        title="Comparison: " + " vs ".join(s.label for s in scenarios),
        run_id=", ".join(dict.fromkeys(s.run.id for s in scenarios)),
        scenario=", ".join(s.label for s in scenarios),
        labels={},
        started=min(s.run.started for s in scenarios),
        finished=max((s.run.finished or "") for s in scenarios) or None,
        status="comparison",
        arraybench_version=first.arraybench_version,
        engine_version=", ".join(sorted({s.run.engine_version or "?" for s in scenarios})),
        host=", ".join(sorted({s.run.host for s in scenarios})),
        kernel=", ".join(sorted({s.run.kernel for s in scenarios})),
        targets=sorted({t for s in scenarios for t in s.run.targets}),
        latency_bound=f"{first.latency_bound_us:g} µs {first.latency_stat}",
        summary_columns=[],
        summary=[],
        sections=[],
        points=[],
        point_columns=[],
        plan_yaml=without_credentials(  # array_monitor's password
            "\n---\n".join(f"# {s.label} ({s.run.id})\n{s.run.plan_yaml}" for s in scenarios)
        ),
        notes=notes,
        tables=[table],
        overlays=overlays,
        provenance=[
            (
                f"scenario {s.label}",
                f"run {s.run.id}, {s.run.started}, fio {s.run.engine_version}, host {s.run.host}",
            )
            for s in scenarios
        ],
    )


def compare_runs(
    store: Store, specs: list[str], results: str, baseline: str | None, align: str
) -> ReportModel:
    """`arraybench compare`: each RUN[:SCENARIO] (RUN may be `latest`) side by side, with the
    runs' per-second throughput overlaid (from each run's start or its first event)."""
    from arraybench.report.sections.compare_events import event_tables
    from arraybench.report.sections.runseries import RunPoints, backlog_overlays, run_overlays
    from arraybench.run.request import stored_run_id

    named = [(stored_run_id(store, r, results), colon, rest)
             for r, colon, rest in (spec.partition(":") for spec in specs)]  # fmt: skip
    scenarios = [load_scenario(store, "".join(spec)) for spec in named]
    model = compare(scenarios, baseline)
    runs = [RunPoints(s.label, s.run.id, s.points) for s in scenarios]
    model.figures += run_overlays(store, runs, align)
    model.figures += backlog_overlays(store, runs, align)
    events = event_tables(store, runs)
    # a failure study (--align event) reads the events' figures first: point means say little
    # of a dip; otherwise they follow the max / optimal table
    at = 0 if align == "event" else 1
    model.tables[at:at] = events
    return model
