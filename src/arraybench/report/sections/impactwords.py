"""The words of an impact against a baseline (the scenario tables, compare's table and
summary): the optimal point's impact read like with like (analysis/headline.py
optimal_impact) and the mark of a figure from flagged points. Its own module, light: `show`
imports the scenario tables' module for every run, and a run without scenarios must not load
the plan model (pydantic) that report/sections/headlines.py brings in."""

from __future__ import annotations

from arraybench.analysis.headline import SAME_LOAD, OptimalImpact
from arraybench.units import format_latency, format_pct, format_throughput

# an impact % that rests on a point whose validity flags would leave it out of a headline
# (kept by the plan's report.headline_includes_flagged, or a series with nothing else)
FLAGGED_MARK = " (flagged)"
# what the optimal point's impact compares, in the captions (the rule: docs/headline.md)
OPTIMAL_IMPACT_RULE = (
    "the optimal point's impact compares like with like: each scenario's throughput at the "
    'baseline\'s optimal load level ("at w1-qd1", with its latency change), or where it '
    "has no point at that level, its highest throughput at no more than the baseline's "
    'optimal latency ("at ≤ 125 µs"); never its own optimal point, which may sit at '
    "another load"
)


def optimal_impact_text(impact: OptimalImpact | None, unit: str, noise: str = "") -> str:
    """`-87.2 % at w1-qd1 (1 kIOPS @ 1,000 µs, latency +700 %)`, `-12 % at ≤ 125 µs
    (6.85 kIOPS @ 120 µs)` or `none at ≤ 125 µs`; `noise`: a mark after the % (`(within
    noise)`); FLAGGED_MARK when either point is flagged."""
    if impact is None:
        return "–"
    flag = FLAGGED_MARK if impact.flagged else ""
    point = impact.point
    if impact.how == SAME_LOAD:
        where = f"at {impact.level}"
    else:
        where = f"at ≤ {format_latency(impact.base.lat_mean_us)}"
    if point is None:
        return f"none {where}{flag}"
    lat = (f", latency {format_pct(impact.latency_pct, signed=True)}"
           if impact.latency_pct is not None else "")  # fmt: skip
    pct = format_pct(impact.throughput_pct, signed=True) + (f" {noise}" if noise else "")
    return (f"{pct} {where} ({format_throughput(point.throughput, unit)} @ "
            f"{format_latency(point.lat_mean_us)}{lat}){flag}")  # fmt: skip
