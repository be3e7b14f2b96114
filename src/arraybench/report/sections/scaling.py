"""Scaling against the number of hosts: maxima per host count and efficiency against linear.

A host count's maximum is the highest of its series' headline maxima (report/sections/headlines.py:
the summary's, flagged points left out unless the plan keeps them); without headlines, the
highest unflagged point. A maximum measured with repeats carries its 95 % interval to the
chart.
"""

from __future__ import annotations

import statistics
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping

from arraybench.analysis.headline import Headline
from arraybench.report.model import Overlay, OverlayLine, ReportModel, ReportTable
from arraybench.report.sections.inputs import RunInputs
from arraybench.report.sections.spread import LevelFacts
from arraybench.store.db import PointRecord
from arraybench.units import format_latency, format_pct, format_throughput


def _in(unit: str) -> Callable[[PointRecord], float]:
    """Throughput in one unit for every point of a workload (never IOPS against MB/s)."""
    name = "mbps" if unit == "MB/s" else "iops"
    return lambda p: p.metric("total", name) or 0.0


def _best(
    candidates: list[PointRecord], throughput_of: Callable[[PointRecord], float],
    facts: LevelFacts, maxima: Collection[str] = (),
) -> PointRecord:  # fmt: skip
    """The highest throughput among the series' headline maxima (`maxima`: their keys) when
    there are any, else among the unflagged points when there are any."""
    if chosen := [p for p in candidates if p.key in maxima]:
        return max(chosen, key=throughput_of)
    trusted = [p for p in candidates if p.key not in facts.flagged]
    return max(trusted if trusted and not facts.include_flagged else candidates, key=throughput_of)


def _maxima(headlines: Mapping[str, Headline] | None) -> set[str]:
    return {h.maximum.key for h in (headlines or {}).values() if h.maximum}


def scaling_tables(
    points: list[PointRecord], facts: LevelFacts | None = None,
    headlines: Mapping[str, Headline] | None = None,
) -> list[ReportTable]:  # fmt: skip
    """Per workload run on several host counts: the max per count, and max(n) / (n x max(1))."""
    facts, maxima = facts or LevelFacts(), _maxima(headlines)
    by_workload: OrderedDict[str, dict[int, list[PointRecord]]] = OrderedDict()
    for p in points:
        if p.hosts:
            by_workload.setdefault(p.workload, {}).setdefault(p.hosts, []).append(p)
    rows = []
    for workload, counts in by_workload.items():
        if len(counts) < 2:
            continue
        smallest = min(counts)
        unit = counts[smallest][0].unit
        throughput_of = _in(unit)
        base = throughput_of(_best(counts[smallest], throughput_of, facts, maxima)) / smallest
        for n in sorted(counts):
            best = _best(counts[n], throughput_of, facts, maxima)
            efficiency = throughput_of(best) / (n * base) if base else None
            partial = " (partial)" if any(p.partial for p in counts[n]) else ""
            partial += " (flagged)" if best.key in facts.flagged else ""
            rows.append([
                workload, str(n), format_throughput(throughput_of(best), unit) + partial,
                format_latency(best.metric("total", "lat_mean_us")),
                "–" if efficiency is None else format_pct(efficiency * 100),
            ])  # fmt: skip
    if not rows:
        return []
    return [ReportTable(
        title="Scaling against the number of hosts",
        columns=["workload", "hosts", "max throughput", "latency at max", "efficiency vs linear"],
        rows=rows,
        caption="efficiency = max with n hosts / (n x max per host with the fewest hosts)",
    )]  # fmt: skip


def spread_note(points: list[PointRecord]) -> list[str]:
    spreads = [p.start_spread_ms for p in points if p.start_spread_ms is not None]
    if not spreads:
        return []
    return [
        f"start spread between hosts (first to last host's first I/O, from their Unix-epoch "
        f"interval logs, corrected by the measured clock offsets): median "
        f"{statistics.median(spreads):.1f} ms, max {max(spreads):.1f} ms over {len(spreads)} "
        "multi-host points"
    ]


def scaling_overlay(
    points: list[PointRecord], facts: LevelFacts | None = None,
    headlines: Mapping[str, Headline] | None = None,
) -> list[Overlay]:  # fmt: skip
    """The scaling charts: max throughput and its latency against the number of hosts, one
    chart per unit (IOPS workloads, MB/s workloads)."""
    counts = sorted({p.hosts for p in points if p.hosts})
    if len(counts) < 2:
        return []
    workloads = OrderedDict((p.workload, p.unit) for p in points if p.hosts)
    charts = []
    for unit in dict.fromkeys(workloads.values()):
        chosen = [w for w, u in workloads.items() if u == unit]
        lines = _scaling_lines(points, counts, chosen, unit, facts or LevelFacts(),
                               _maxima(headlines))  # fmt: skip
        title = "Scaling: maximum against hosts" + (
            f" ({unit})" if len(set(workloads.values())) > 1 else ""
        )
        charts.append(Overlay(title, "hosts", [str(n) for n in counts], lines, unit))
    return charts


def _scaling_lines(
    points: list[PointRecord], counts: list[int], workloads: list[str], unit: str,
    facts: LevelFacts, maxima: Collection[str] = (),
) -> list[OverlayLine]:  # fmt: skip
    throughput_of = _in(unit)
    lines = []
    for workload in workloads:
        best = []
        for n in counts:
            candidates = [p for p in points if p.workload == workload and p.hosts == n]
            best.append(_best(candidates, throughput_of, facts, maxima) if candidates else None)
        lines.append(OverlayLine(
            label=workload,
            iops=[p.metric("total", "iops") if p else None for p in best],
            mbps=[p.metric("total", "mbps") if p else None for p in best],
            lat_mean_us=[p.metric("total", "lat_mean_us") if p else None for p in best],
            iops_ci=[_ci(facts, p) if p and p.unit == "IOPS" else None for p in best],
            mbps_ci=[_ci(facts, p) if p and p.unit == "MB/s" else None for p in best],
        ))  # fmt: skip
    return lines


def _ci(facts: LevelFacts, point: PointRecord) -> tuple[float, float] | None:
    """The point's 95 % interval over its repeats, in its series' unit; None measured once."""
    s = facts.throughput.get(point.key)
    return None if s is None or s.low is None or s.high is None else (s.low, s.high)


def section(model: ReportModel, run: RunInputs) -> None:
    """Scaling over hosts: its tables and overlay; the hosts' start spread as a note."""
    model.tables += scaling_tables(run.once, run.facts, run.headlines)
    model.overlays += scaling_overlay(run.once, run.facts, run.headlines)
    model.notes += spread_note(run.points)
