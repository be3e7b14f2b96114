"""Each series' headline (analysis.headline), computed once per series of a run or of a
compared scenario, with the run's latency bound, its plan's report.headline_includes_flagged
and its levels' flags and spreads. Every section reads these; none computes its own.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.headline import Headline, headline
from arraybench.analysis.repeats import collapse
from arraybench.report.build import curve_points, series_of
from arraybench.report.sections.inputs import run_plan
from arraybench.report.sections.rounds import round_of
from arraybench.report.sections.special import GRID_PATTERNS
from arraybench.report.sections.spread import LevelFacts, level_facts
from arraybench.store.db import Finding, PointRecord, RunRecord

if TYPE_CHECKING:
    from arraybench.plan.model import Plan

# the optimal point in the words every caption uses (the rule itself: docs/headline.md)
OPTIMAL_RULE = ("the end of the healthy range: the last level before the first step whose "
                "throughput gain is not larger than its latency rise")  # fmt: skip
# the summary's caption says where the rules are (HTML, PDF, Markdown, Excel)
SUMMARY_LINK = "How these are computed, and which points they leave out: docs/headline.md."
HOW_COMPUTED = ("how the optimal point, maximum and minimum latency are computed, and which "
                "points they leave out: docs/headline.md")  # fmt: skip


def summary_link(audience: str) -> str:
    """The summary caption's pointer to the rules: a customer has no copy of the docs."""
    return SUMMARY_LINK if audience == "engineer" else ""


def curve_levels(points: list[PointRecord]) -> list[PointRecord]:
    """The points the curves and headlines are drawn from: grid points (not SNIA rounds, not
    interference or metadata), each level once (its repetitions' median point)."""
    return collapse([p for p in points if round_of(p) is None and p.pattern in GRID_PATTERNS])


def headline_includes_flagged(run: RunRecord) -> bool:
    """The run's plan keeps flagged points in its headline figures (its plan parsed here)."""
    return includes_flagged(run_plan(run))


def includes_flagged(plan: Plan | None) -> bool:
    """The plan keeps flagged points in its headline figures."""
    return bool(plan and plan.report.headline_includes_flagged)


def series_headline(points: list[PointRecord], run: RunRecord, facts: LevelFacts) -> Headline:
    """One series' headline: `points` one per level (repeats collapsed to their medians)."""
    noise = {key: s.half_width_pct for key, s in facts.throughput.items()}
    curve = curve_points(points, facts.flagged.keys(), noise)
    return headline(curve, bound_us=run.latency_bound_us, stat=run.latency_stat,
                    include_flagged=facts.include_flagged, why=facts.flagged)  # fmt: skip


def run_headlines(
    points: list[PointRecord], run: RunRecord, facts: LevelFacts
) -> OrderedDict[str, Headline]:
    """Series name (report.build.series_name) -> its headline, for every series of `points`."""
    return OrderedDict((name, series_headline(pts, run, facts))
                       for name, pts in series_of(points).items())  # fmt: skip


def stored_headlines(
    run: RunRecord, points: list[PointRecord], findings: list[Finding]
) -> OrderedDict[str, Headline]:
    """Every series' headline from a run's stored points (repetitions included) and
    findings, as its report states them."""
    facts = level_facts(points, findings, headline_includes_flagged(run))
    return run_headlines(curve_levels(points), run, facts)


def _figure(point: CurvePoint | None) -> dict[str, Any] | None:
    if point is None:
        return None
    return {"key": point.key, "throughput": point.throughput, "lat_mean_us": point.lat_mean_us,
            "lat_p99_us": point.lat_p99_us}  # fmt: skip


def headline_dict(h: Headline) -> dict[str, Any]:
    """A headline as `show --format json` gives it: each figure's point, the rule applied, the
    points left out with why, and the top step when the maximum may not be saturated."""
    return {
        "optimal": _figure(h.optimal), "maximum": _figure(h.maximum),
        "min_latency": _figure(h.min_latency), "bounded": _figure(h.bounded),
        "bound_us": h.bound_us, "bound_stat": h.bound_stat, "lowest_level": _figure(h.at_first),
        "rule": h.rule, "left_out": [{"key": x.point.key, "why": x.why} for x in h.left_out],
        # the maximum on the ladder's top, still rising (docs/headline.md): may not be saturated
        "unsaturated": None if h.unsaturated is None else {
            "from": h.unsaturated.start, "to": h.unsaturated.to,
            "gain_pct": h.unsaturated.gain_pct, "lat_rise_pct": h.unsaturated.lat_rise_pct},
    }  # fmt: skip
