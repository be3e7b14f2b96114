"""The spread of repeated points and the points' validity flags, as report tables and notes.

Every writer renders ReportTables and notes already: nothing here draws.
"""

from __future__ import annotations

from collections.abc import Sequence

from arraybench.analysis.repeats import groups, level_wins
from arraybench.analysis.statistics import METHOD
from arraybench.analysis.validity import KIND, flags_by_point
from arraybench.report.model import ReportTable
from arraybench.store.db import Finding, PointRecord
from arraybench.units import format_latency, format_pct, format_throughput

SPREAD_CAPTION = (f"median of the repeats ± half-width of the 95 % interval of the mean "
                  f"({METHOD}), in % of the mean")  # fmt: skip
NO_SPREAD = ("each point was measured once: its figures have no spread "
             "(repeat: N in the plan, or run --repeat N, gives them one)")  # fmt: skip


def with_spread(value: str, pct: float | None) -> str:
    """`304 kIOPS ±2.1 %`; the value alone when it has no spread."""
    return f"{value} ±{format_pct(pct)}" if pct is not None else value


def spread_tables(points: Sequence[PointRecord]) -> list[ReportTable]:
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
    wins = level_wins(points)
    if wins:

        def said(counts: list[tuple[str, int]], n: int) -> str:
            return ", ".join(f"{key} {won} of {n}" for key, won in counts) or "–"

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
