"""The headline of one series: the figures every section and format of a report states.

One computation per series, read by the summary, the scenario (impact) tables, the maximum
recorded, compare, the terminal table, Markdown, xlsx and the PDF: no section computes its
own maximum. The rules are stated once, in docs/headline.md; the figures themselves are
analysis.curves' (optimal point, maximum, minimum latency, latency-bounded throughput).

Which points take part: a point whose validity flags leave the headline
(analysis.validity.leaves_headline, marked `CurvePoint.flagged`) is left out, unless the
plan's `report.headline_includes_flagged` keeps every point in. When every point of the
series is left out by its flags they all take part (there is nothing else to name) and the
headline says so (`rule == ALL_FLAGGED`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from arraybench.analysis.curves import (
    CurvePoint,
    latency_bounded,
    maximum,
    min_latency,
    optimal_point,
)

# the rule applied to the flagged points (Headline.rule)
NONE_FLAGGED = "no point's flags leave the headline"
LEFT_OUT = "points whose validity flags leave the headline are left out"
KEPT = "flagged points kept in (the plan's report.headline_includes_flagged)"
ALL_FLAGGED = "every point is flagged: the figures are named from flagged points"


@dataclass(frozen=True)
class LeftOut:
    """A point the headline did not consider, and why (its validity flags' kinds)."""

    point: CurvePoint
    why: str


@dataclass(frozen=True)
class Headline:
    """The figures a report states for one series, and the rule that chose its points."""

    optimal: CurvePoint | None
    maximum: CurvePoint | None
    min_latency: CurvePoint | None
    bounded: CurvePoint | None  # latency-bounded throughput
    bound_us: float
    bound_stat: str  # "mean" or "p99"
    at_first: CurvePoint | None  # the lowest level taking part (e.g. jobs=1)
    left_out: tuple[LeftOut, ...] = ()
    rule: str = NONE_FLAGGED

    @property
    def named_from_flagged(self) -> bool:
        """Every point was flagged: the figures rest on flagged points."""
        return self.rule == ALL_FLAGGED


def _rule(ordered: Sequence[CurvePoint], include_flagged: bool) -> tuple[str, list[CurvePoint]]:
    """The rule applied and the points that take part."""
    flagged = [p for p in ordered if p.flagged]
    if not flagged:
        return NONE_FLAGGED, list(ordered)
    if include_flagged:
        return KEPT, list(ordered)
    kept = [p for p in ordered if not p.flagged]
    return (LEFT_OUT, kept) if kept else (ALL_FLAGGED, list(ordered))


def headline(
    points: Iterable[CurvePoint],
    bound_us: float = 1000.0,
    stat: str = "mean",
    *,
    include_flagged: bool = False,
    why: Mapping[str, Sequence[str]] | None = None,
) -> Headline:
    """Every headline figure of one series at once (all None for an empty series).
    `why`: point key -> its flags' kinds, said for the points left out."""
    ordered = sorted(points, key=lambda p: p.level)
    rule, taking_part = _rule(ordered, include_flagged)
    said = why or {}
    left = tuple(LeftOut(p, ", ".join(said.get(p.key, ["flagged"])))
                 for p in ordered if rule == LEFT_OUT and p.flagged)  # fmt: skip
    return Headline(
        optimal=optimal_point(taking_part),
        maximum=maximum(taking_part),
        min_latency=min_latency(taking_part),
        bounded=latency_bounded(taking_part, bound_us=bound_us, stat=stat),
        bound_us=bound_us,
        bound_stat=stat,
        at_first=taking_part[0] if taking_part else None,
        left_out=left,
        rule=rule,
    )
