"""The scenarios of one campaign (plan `scenarios:`): In&Out's tables II and IV.

Per workload family one table: a row per scenario, a column per mix; each cell the series'
maximum (`470 kIOPS Max -38 %`) and its optimal point, with the impact in % against the
first scenario: (scenario - first) / first, of the maximum, and of the throughput at the
first scenario's optimal load (or latency: analysis/headline.py optimal_impact), never of
the scenario's own optimal point, which may sit at another load. Both figures are the
series' headline (report/sections/headlines.py), the same the summary states. Beside them
what the scenario steps did and what the hosts saw of their paths and devices at each
scenario's start and end.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.headline import Headline, optimal_impact
from arraybench.finding_kinds import SCENARIO_PATHS, SCENARIO_STEP, HostViewData
from arraybench.report.build import (
    campaign_scenario,
    family_of,
    level_axis,
    mix_sort_key,
    series_of,
)
from arraybench.report.model import Overlay, ReportModel, ReportTable
from arraybench.report.sections.impactwords import (
    FLAGGED_MARK,
    OPTIMAL_IMPACT_RULE,
    optimal_impact_text,
)
from arraybench.report.sections.inputs import RunInputs, run_plan
from arraybench.report.sections.overlays import curves_overlay
from arraybench.store.db import Finding, PointRecord, RunRecord
from arraybench.units import format_duration, format_latency, format_pct, format_throughput

OUTPUT_SHOWN = 80  # characters of a step's output in the table (the store keeps more)
IMPACT_CAPTION = (
    "impact = (scenario - {base}) / {base}, in %, of the series' maximum (Max), as the summary "
    "states them; " + OPTIMAL_IMPACT_RULE + " (the optimal point: the end of the healthy "
    "range, the last level before the first step whose throughput gain is not larger than "
    "its latency rise; docs/headline.md); (flagged): a figure from a point with validity flags"
)

if TYPE_CHECKING:
    from arraybench.plan.model import Plan


def scenario_order(points: list[PointRecord]) -> list[str]:
    """The campaign's scenarios in the order they ran."""
    ordered = sorted(points, key=lambda p: p.seq)
    return list(dict.fromkeys(s for p in ordered if (s := campaign_scenario(p))))


def _impact(value: CurvePoint, base: CurvePoint | None) -> str:
    if base is None or not base.throughput:
        return ""
    flag = FLAGGED_MARK if value.flagged or base.flagged else ""
    return " " + format_pct((value.throughput - base.throughput) / base.throughput * 100,
                            signed=True) + flag  # fmt: skip


def _cell(mine: Headline, base: Headline | None, first: str, unit: str) -> str:
    """`470 kIOPS Max -38 %; optimal 304 kIOPS @ 208 µs; against C1's optimal point: -12 %
    at w4-qd1 (...)` (no impact in the baseline, `base` None)."""
    top, opt = mine.maximum, mine.optimal
    if top is None:
        return "–"
    text = f"{format_throughput(top.throughput, unit)} Max"
    text += _impact(top, base.maximum if base else None)
    if opt is not None:
        text += (f"; optimal {format_throughput(opt.throughput, unit)} @ "
                 f"{format_latency(opt.lat_mean_us)}")  # fmt: skip
    impact = optimal_impact(mine, base) if base else None
    if impact is not None:
        text += f"; against {first}'s optimal point: {optimal_impact_text(impact, unit)}"
    return text


Cell = tuple[Headline, str]  # the series' headline, its unit


def _grid(
    points: list[PointRecord], headlines: Mapping[str, Headline]
) -> dict[str, dict[str, dict[str, Cell]]]:
    """family -> column (the mix) -> scenario -> its cell: the series' headline figures."""
    grid: dict[str, dict[str, dict[str, Cell]]] = {}
    for name, pts in series_of([p for p in points if campaign_scenario(p)]).items():
        first = pts[0]
        columns = grid.setdefault(family_of(first, scenario=False), {})
        column = first.mix
        if str(first.scenario) in columns.get(column, {}):  # two workloads share the mix
            column = f"{first.mix} · {first.workload}"
        columns.setdefault(column, {})[str(first.scenario)] = (headlines[name], first.unit)
    return grid


def impact_tables(
    points: list[PointRecord], labels: dict[str, str], headlines: Mapping[str, Headline]
) -> list[ReportTable]:
    """One table per workload family: scenarios down, mixes across. `headlines`: series name
    -> its headline (report/sections/headlines.py run_headlines of the same points)."""
    order = scenario_order(points)
    if not order:
        return []
    first = order[0]
    tables = []
    for family, columns in _grid(points, headlines).items():
        names = sorted(columns, key=mix_sort_key)
        rows = []
        for scenario in order:
            row = [scenario, labels.get(scenario, "")]
            for column in names:
                got, base = columns[column].get(scenario), columns[column].get(first)
                against = None if scenario == first or base is None else base[0]
                row.append(_cell(got[0], against, first, got[1]) if got else "–")
            rows.append(row)
        title = f"Scenarios: {family}, maximum per scenario against {first}"
        caption = IMPACT_CAPTION.format(base=first)
        tables.append(ReportTable(title, ["Scenario", "Set-up", *names], rows, caption, 2))
    return tables


def step_table(findings: list[Finding]) -> list[ReportTable]:
    """What every scenario step did, in the order they ran."""
    rows = []
    for f in findings:
        if f.kind != SCENARIO_STEP.name:
            continue
        d = SCENARIO_STEP.of(f)
        output = " ".join(str(d.get("output", "")).split())
        output = output if len(output) <= OUTPUT_SHOWN else output[: OUTPUT_SHOWN - 3] + "..."
        code = "" if d.get("exit_code") is None else str(d["exit_code"])
        rows.append([d["scenario"], f"{d['phase']}[{d['index']}]", d["step"], d["outcome"],
                     _clock(d["started"]), format_duration(max(0.0, d["ended"] - d["started"])),
                     code, output or "–"])  # fmt: skip
    if not rows:
        return []
    columns = ["Scenario", "Step", "What", "Outcome", "Started (UTC)", "Took", "Exit", "Output"]
    return [ReportTable("Scenario steps", columns, rows,
                        "prompts: confirmed by the operator, or assumed in a non-interactive "
                        "run; commands never through a shell", key_columns=2)]  # fmt: skip


def _clock(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%H:%M:%S")


NO_CHANGE = "no change"
MOMENTS = {"before": "before its steps", "start": "at its start", "end": "at its end",
           "after": "after its steps"}  # fmt: skip


def paths_table(findings: list[Finding]) -> list[ReportTable]:
    """Per scenario and host, each recorded moment: the targets and devices seen, and what
    changed since the moment before (the same host, any scenario)."""
    rows: list[list[str]] = []
    last: dict[str, HostViewData] = {}  # host -> its view at the moment before
    # (scenario, host) -> its row and that row's first moment: a moment that changed
    # nothing extends that row ("before its steps to at its end") instead of repeating it
    open_row: dict[tuple[str, str], tuple[list[str], str, str]] = {}
    for f in findings:
        if f.kind != SCENARIO_PATHS.name:
            continue
        d = SCENARIO_PATHS.of(f)
        moment = MOMENTS.get(d["moment"], d["moment"]) + (" (resumed)" if d["resumed"] else "")
        for host, view in d["hosts"].items():
            change, at = _change(last.get(host), view), (d["scenario"], host)
            last[host] = view
            if change == NO_CHANGE and at in open_row:
                row, first_moment, first_time = open_row[at]
                row[2] = f"{first_moment} to {moment}"
                row[3] = f"{first_time} to {_clock(d['t'])}"
                continue
            rows.append([d["scenario"], host, moment, _clock(d["t"]), _view(view), change])
            open_row[at] = (rows[-1], moment, rows[-1][3])
    if not rows:
        return []
    caption = ("start: after the before-steps; end: after the last point, before the "
               "after-steps; a row that spans moments saw the same at each; devices from "
               "/proc/partitions")  # fmt: skip
    columns = ["Scenario", "Host", "When", "Time (UTC)", "Targets and devices", "Changed"]
    return [ReportTable("Scenario paths and devices", columns, rows, caption, 2)]


def _view(view: HostViewData) -> str:
    if not view["recorded"]:
        return f"not recorded: {view['why_not']}"
    count = len(view["devices"])
    return f"{'; '.join(view['targets'])} ({count} block device{'' if count == 1 else 's'})"


def _change(before: HostViewData | None, now: HostViewData) -> str:
    if before is None or not (before["recorded"] and now["recorded"]):
        return "–"
    names = ({d.split()[0] for d in before["devices"]}, {d.split()[0] for d in now["devices"]})
    parts = [f"gone: {', '.join(sorted(names[0] - names[1]))}" if names[0] - names[1] else "",
             f"new: {', '.join(sorted(names[1] - names[0]))}" if names[1] - names[0] else "",
             "targets differ" if before["targets"] != now["targets"] else ""]  # fmt: skip
    return "; ".join(p for p in parts if p) or NO_CHANGE


def scenario_overlays(
    points: list[PointRecord], headlines: Mapping[str, Headline] | None = None
) -> list[Overlay]:
    """Per workload one chart, one line per scenario (In&Out's curves of pulled controllers),
    each line marked at its series' headline optimal point and maximum."""
    curves: dict[str, list[tuple[str, list[PointRecord]]]] = {}
    marks: dict[str, dict[str, Headline]] = {}
    for series, pts in series_of([p for p in points if campaign_scenario(p)]).items():
        first = pts[0]
        name = first.workload + (f" ({first.devices} dev)" if first.devices else "")
        name += f" ({first.hosts} hosts)" if first.hosts else ""
        curves.setdefault(name, []).append((str(first.scenario), pts))
        if headlines and series in headlines:
            marks.setdefault(name, {})[str(first.scenario)] = headlines[series]
    return [curves_overlay(f"Scenarios: {name}", level_axis(lines[0][1])[0], lines,
                           headlines=marks.get(name))
            for name, lines in curves.items() if len(lines) > 1]  # fmt: skip


def scenario_labels(run: RunRecord) -> dict[str, str]:
    """Scenario name -> its label, from the run's stored plan (`show`: parsed here)."""
    return labels_of(run_plan(run))


def labels_of(plan: Plan | None) -> dict[str, str]:
    return {s.name: s.label or "" for s in (plan.scenarios or [])} if plan else {}


def scenario_report(
    plan: Plan | None, points: list[PointRecord], findings: list[Finding],
    headlines: Mapping[str, Headline],
) -> list[ReportTable]:  # fmt: skip
    """Every table of a run with scenarios (none without): `points` one per level."""
    tables = impact_tables(points, labels_of(plan), headlines)
    return [*tables, *step_table(findings), *paths_table(findings)] if tables else []


def section(model: ReportModel, run: RunInputs) -> None:
    """A run with plan scenarios: its impact tables first, its scenarios' curves overlaid."""
    model.tables += scenario_report(run.plan, run.once, run.findings, run.headlines)
    model.overlays += scenario_overlays(run.once, run.headlines)
