"""The spread of repeated points and the points' validity flags, as report tables and notes.

Every writer renders ReportTables and notes already: nothing here draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arraybench.analysis.curves import SeriesSummary
from arraybench.analysis.noise import Level, optimal_confidence
from arraybench.analysis.repeats import groups, level_wins
from arraybench.analysis.statistics import METHOD, Spread
from arraybench.analysis.validity import KIND, flags_by_point
from arraybench.plan.pointkeys import repetition_in_key
from arraybench.report.model import ReportTable
from arraybench.store.db import Finding, PointRecord
from arraybench.units import format_latency, format_pct, format_throughput

SPREAD_CAPTION = (f"median of the repeats ± half-width of the 95 % interval of the mean "
                  f"({METHOD}), in % of the mean")  # fmt: skip
NO_SPREAD = ("each point was measured once: its figures have no spread "
             "(repeat: N in the plan, or run --repeat N, gives them one)")  # fmt: skip


@dataclass(frozen=True)
class LevelFacts:
    """What the curves and the headline figures need to know of each level (its key without
    `#N`) beyond its median point: its spread over the repeats and its validity flags."""

    throughput: dict[str, Spread] = field(default_factory=dict)  # repeated levels only
    latency: dict[str, Spread] = field(default_factory=dict)
    repeats: dict[str, int] = field(default_factory=dict)
    flagged: dict[str, list[str]] = field(default_factory=dict)  # kinds, of any repetition
    include_flagged: bool = False  # the plan's report.headline_includes_flagged
    # series name -> (level key -> repetitions in which it was the optimal point, repetitions)
    optimal_wins: dict[str, tuple[dict[str, int], int]] = field(default_factory=dict)


def level_facts(
    points: Sequence[PointRecord], findings: Sequence[Finding], include_flagged: bool = False
) -> LevelFacts:
    facts = LevelFacts(include_flagged=include_flagged)
    for g in groups(points):
        facts.repeats[g.key] = g.repeats
        if g.repeats > 1:
            facts.throughput[g.key] = g.throughput()
            if (lat := g.latency()) is not None:
                facts.latency[g.key] = lat
    by_id = flags_by_point([f for f in findings if f.kind == KIND])
    for p in points:
        if kinds := [f.kind for f in by_id.get(p.id, [])]:
            level = facts.flagged.setdefault(repetition_in_key(p.key)[0], [])
            level += [k for k in kinds if k not in level]
    for w in level_wins(points, () if include_flagged else facts.flagged.keys()):
        facts.optimal_wins[w.series] = (dict(w.optimal), w.repetitions)
    return facts


def headline_notes(series: str, summary: SeriesSummary, facts: LevelFacts) -> list[str]:
    """Which flagged points the series' headline figures left out, and why."""
    if not summary.left_out:
        if facts.include_flagged or not summary.optimal or not summary.optimal.flagged:
            return []
        return [
            f"{series}: every point is flagged (see 'Measurements that may not be "
            "trusted'): its optimal point and maximum are named from flagged points"
        ]
    said = "; ".join(f"{p.key.split('/', 1)[-1]} ("  # the series is named already
                     f"{', '.join(facts.flagged.get(p.key, ['flagged']))})"
                     for p in summary.left_out)  # fmt: skip
    return [f"{series}: {said} left out of the optimal point, maximum and summary: flagged, "
            "its figures may not be the storage's (see 'Measurements that may not be "
            "trusted'); the plan's report: {headline_includes_flagged: true} keeps flagged "
            "points in"]  # fmt: skip


def confidence_note(series: str, levels: Sequence[tuple[str, float]], optimal: str | None,
                    facts: LevelFacts) -> list[str]:  # fmt: skip
    """How sure the optimal point the report names is: its repetitions' wins and its
    neighbours within noise (only for repeated levels: one measurement has no spread)."""
    if optimal is None:
        return []
    noise = [Level(key, value, facts.throughput[key].half_width_pct if key in facts.throughput
                   else None) for key, value in levels]  # fmt: skip
    won, of = facts.optimal_wins.get(series, ({}, 0))
    text = optimal_confidence(noise, optimal, won.get(optimal, 0) if of else None, of or None)
    # keys read `workload/w8-qd1`; the series is named already
    text = text.replace(f"{levels[0][0].split('/', 1)[0]}/", "") if levels else text
    return [f"{series}: {text}"] if text else []


def with_spread(value: str, pct: float | None) -> str:
    """`304 kIOPS ±2.1 %`; the value alone when it has no spread."""
    return f"{value} ±{format_pct(pct)}" if pct is not None else value


def spread_tables(
    points: Sequence[PointRecord], facts: LevelFacts | None = None
) -> list[ReportTable]:
    """The spread of each repeated level, and which level won per repetition (flagged levels,
    left out of the headline figures, win nothing unless the plan keeps them)."""
    facts = facts or LevelFacts()
    repeated = [g for g in groups(points) if g.repeats > 1]
    if not repeated:
        return []
    rows = []
    for g in repeated:
        tp, lat = g.throughput(), g.latency()
        unit = g.points[0].unit
        latency = with_spread(format_latency(lat.median), lat.half_width_pct) if lat else "–"
        rows.append([g.key, str(g.repeats),
                     with_spread(format_throughput(tp.median, unit), tp.half_width_pct),
                     latency])  # fmt: skip
    tables = [ReportTable("Spread over repeats", ["Point", "Repeats", "Throughput",
                          "Mean latency"], rows, SPREAD_CAPTION)]  # fmt: skip
    wins = level_wins(points, () if facts.include_flagged else facts.flagged.keys())
    if wins:

        def said(counts: list[tuple[str, int]], n: int) -> str:  # the level, not its series
            return ", ".join(f"{key.rsplit('/', 1)[-1]}: {won} of {n}"
                             for key, won in counts) or "–"  # fmt: skip

        rows = [[w.series, str(w.repetitions), said(w.maximum, w.repetitions),
                 said(w.optimal, w.repetitions)] for w in wins]  # fmt: skip
        tables.append(ReportTable("Which level won, per repetition", ["Series", "Repeats",
                                  "Maximum", "Optimal point"], rows,
                                  "how often each level was the maximum and the optimal "
                                  "point of its repetition's curve"))  # fmt: skip
    return tables


def repeat_notes(points: Sequence[PointRecord]) -> list[str]:
    if not points or any(g.repeats > 1 for g in groups(points)):
        return []
    return [NO_SPREAD]


def flag_table(points: Sequence[PointRecord], findings: Sequence[Finding]) -> list[ReportTable]:
    """Every validity flag of the run: the point, what is wrong, what to change."""
    flags = flags_by_point([f for f in findings if f.kind == KIND])
    rows = [[p.key, f.kind, f.why, f.change] for p in sorted(points, key=lambda p: p.seq)
            for f in flags.get(p.id, [])]  # fmt: skip
    if not rows:
        return []
    caption = f"{len({r[0] for r in rows})} of {len(points)} points flagged"
    columns = ["Point", "Flag", "Why", "What to change"]
    return [ReportTable("Measurements that may not be trusted", columns, rows, caption)]
