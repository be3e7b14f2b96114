"""Overlay charts: curves that a plan groups under one `chart`, drawn as one line each."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.headline import Headline, headline
from arraybench.report.build import level_axis, series_of
from arraybench.report.model import Overlay, OverlayLine, ReportModel
from arraybench.report.sections.inputs import RunInputs
from arraybench.report.sections.spread import LevelFacts
from arraybench.store.db import PointRecord
from arraybench.units import format_size

if TYPE_CHECKING:
    from arraybench.plan.model import Plan


def chart_keys(plan: Plan | None) -> dict[str, str]:
    """Workload name -> its `chart` key, from the plan the run stored (parsed once)."""
    return {w.name: w.chart for w in plan.workloads if w.chart} if plan else {}


def _ticks(points: list[PointRecord]) -> list[str]:
    return level_axis(points)[2]


def overlays(
    plan: Plan | None, points: list[PointRecord], facts: LevelFacts | None = None,
    headlines: Mapping[str, Headline] | None = None,
) -> list[Overlay]:  # fmt: skip
    """The plan's `chart` groups; `headlines`: series name -> its headline (the line marks)."""
    keys = chart_keys(plan)
    charts: OrderedDict[str, list[tuple[str, list[PointRecord]]]] = OrderedDict()
    for name, pts in series_of(points).items():
        key = keys.get(pts[0].workload)
        if key:
            charts.setdefault(key, []).append((name, pts))
    out = []
    for title, curves in charts.items():
        lines = [(format_size(c[0].bs), c) for _, c in curves]
        marks = {format_size(c[0].bs): (headlines or {})[n] for n, c in curves
                 if n in (headlines or {})}  # fmt: skip
        out.append(curves_overlay(title, "jobs per host", lines, facts, headlines=marks))
    return out


def curves_overlay(
    title: str, x_label: str, curves: list[tuple[str, list[PointRecord]]],
    facts: LevelFacts | None = None, flagged_by_line: Mapping[str, Collection[str]] | None = None,
    headlines: Mapping[str, Headline] | None = None,
) -> Overlay:  # fmt: skip
    """Labelled curves on one chart: the union of their ladders, in order of first appearance;
    with `facts`, each repeated point's 95 % interval and a red cross on its flagged points.
    `flagged_by_line`: line label -> the keys of its flagged points, where the lines come from
    different runs (a comparison: the same key can be flagged in one run and not another).
    `headlines`: line label -> its series' headline, whose optimal point and maximum the line
    marks (the summary's; `with_marks` leaves such a line as it is)."""
    spreads = facts.throughput if facts else {}
    run_flagged: Collection[str] = facts.flagged.keys() if facts else ()

    def ci(p: PointRecord | None, unit: str) -> tuple[float, float] | None:
        s = spreads.get(p.key) if p and p.unit == unit else None
        return None if s is None or s.low is None or s.high is None else (s.low, s.high)

    ticks: list[str] = []
    for _, curve in curves:
        ticks += [t for t in _ticks(curve) if t not in ticks]
    lines = []
    for label, curve in curves:
        at = dict(zip(_ticks(curve), curve, strict=True))
        flagged = (flagged_by_line or {}).get(label, run_flagged)
        lines.append(OverlayLine(
            label=label,
            iops=[at[t].metric("total", "iops") if t in at else None for t in ticks],
            mbps=[at[t].metric("total", "mbps") if t in at else None for t in ticks],
            lat_mean_us=[at[t].metric("total", "lat_mean_us") if t in at else None
                         for t in ticks],
            iops_ci=[ci(at.get(t), "IOPS") for t in ticks],
            mbps_ci=[ci(at.get(t), "MB/s") for t in ticks],
            flagged=[t in at and at[t].key in flagged for t in ticks],
            marks=_marks(ticks, at, (headlines or {}).get(label)),
        ))  # fmt: skip
    units = {curve[0].unit for _, curve in curves if curve}
    return Overlay(title, x_label, ticks, lines, units.pop() if len(units) == 1 else "IOPS")


def _marks(ticks: list[str], at: Mapping[str, PointRecord], h: Headline | None) -> list[str]:
    """Per tick "optimal", "max", both or "": the headline's points (none without one)."""
    if h is None:
        return []
    named = [(h.optimal, "optimal"), (h.maximum, "max")]
    return [" ".join(n for p, n in named if p and t in at and at[t].key == p.key) for t in ticks]


def with_marks(overlay: Overlay) -> Overlay:
    """Each line's optimal point and maximum marked: a line drawn from a series keeps its
    headline's marks (`curves_overlay(headlines=...)`); any other line (e.g. a maximum per
    host count) gets them by the same rule (analysis.headline) over its own points, its
    flagged points left out."""
    lines = []
    for line in overlay.lines:
        if any(line.marks):
            lines.append(line)
            continue
        values = line.mbps if overlay.unit == "MB/s" else line.iops
        curve = [CurvePoint(i, v, _at(line.lat_mean_us, i), None, str(i),
                            i < len(line.flagged) and line.flagged[i])
                 for i, v in enumerate(values) if v is not None]  # fmt: skip
        summary = headline(curve)
        marks = [""] * len(overlay.x_ticks)
        for point, name in ((summary.optimal, "optimal"), (summary.maximum, "max")):
            if point is not None:
                i = int(point.level)
                marks[i] = f"{marks[i]} {name}".strip()
        lines.append(replace(line, marks=marks))
    return replace(overlay, lines=lines)


def _at(values: list[float | None], i: int) -> float | None:
    return values[i] if i < len(values) else None


def x_axis_title(curves: list[tuple[str, list[PointRecord]]]) -> str:
    """The x axis of curves from several runs: each curve's own iodepth (or workers) when they
    differ ("workers per host (iodepth: base 1, qd4-run 4)"), not the first curve's."""
    titles = {label: level_axis(points)[0] for label, points in curves if points}
    if len(set(titles.values())) <= 1:
        return next(iter(titles.values()), "load level")
    base = next(iter(titles.values())).split(" (")[0]
    if any(t.split(" (")[0] != base for t in titles.values()):
        return "load level (" + "; ".join(f"{k}: {t}" for k, t in titles.items()) + ")"
    fixed = "; ".join(f"{k} {t.split(' (', 1)[1].rstrip(')')}" for k, t in titles.items())
    return f"{base} ({fixed})"


def section(model: ReportModel, run: RunInputs) -> None:
    """The plan's `chart` groups, after the scenarios' overlays."""
    model.overlays += overlays(run.plan, run.once, run.facts, run.headlines)
