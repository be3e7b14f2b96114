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
from dataclasses import dataclass, field

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
    # the points the figures were chosen among (optimal_impact reads the series there); not
    # a figure: two headlines naming the same figures are equal
    taking_part: tuple[CurvePoint, ...] = field(default=(), compare=False, repr=False)

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
        taking_part=tuple(taking_part),
    )


SAME_LOAD = "same load"  # OptimalImpact.how
SAME_LATENCY = "same latency"


@dataclass(frozen=True)
class OptimalImpact:
    """A series against a baseline's optimal point, like with like (docs/headline.md).

    Each series' own optimal point may sit at another load: a degraded set-up that needs
    16 outstanding I/Os to reach its healthy range's end (14.2k @ 1,114 µs) against a
    baseline that ends it at 1 (7.79k @ 125 µs) would show +82 % for losing a controller.
    So the series is read where the baseline's optimal point is: at the SAME LOAD level
    (its point of the same workers, iodepth, hosts), and when it has none there, at the SAME
    LATENCY (its highest throughput at a mean latency no higher than the baseline's)."""

    how: str  # SAME_LOAD or SAME_LATENCY
    base: CurvePoint  # the baseline's optimal point
    point: CurvePoint | None  # the series' point compared; None: none within the latency
    level: str  # SAME_LOAD: the level's name (`w1-qd1`)
    throughput_pct: float | None  # (point - base) / base x 100
    latency_pct: float | None  # SAME_LOAD: the mean latency's change, %
    flagged: bool  # either point carries flags that would leave it out of a headline

    @property
    def worse(self) -> bool:
        """Less throughput at the same load or latency, or none within the latency."""
        return self.throughput_pct is None or self.throughput_pct < 0


def _same_level(points: Sequence[CurvePoint], base: CurvePoint) -> CurvePoint | None:
    """The point of `points` at `base`'s load level: the same level name (workers, iodepth,
    hosts, devices), or without names the same level on the x axis."""
    if base.level_name:
        return next((p for p in points if p.level_name == base.level_name), None)
    return next((p for p in points if p.level == base.level), None)


def _pct(value: float | None, base: float | None) -> float | None:
    if value is None or not base:
        return None
    return (value - base) / base * 100


def optimal_impact(series: Headline, baseline: Headline) -> OptimalImpact | None:
    """`series` read at `baseline`'s optimal point (OptimalImpact); None when either has no
    optimal point."""
    base = baseline.optimal
    if base is None or series.optimal is None:
        return None
    points = series.taking_part
    same = _same_level(points, base)
    if same is not None:
        return OptimalImpact(
            SAME_LOAD, base, same, same.level_name or f"{same.level:g}",
            _pct(same.throughput, base.throughput), _pct(same.lat_mean_us, base.lat_mean_us),
            same.flagged or base.flagged,
        )  # fmt: skip
    bound = base.lat_mean_us
    within = [p for p in points if bound and p.lat_mean_us is not None and p.lat_mean_us <= bound]
    best = max(within, key=lambda p: p.throughput, default=None)
    return OptimalImpact(
        SAME_LATENCY, base, best, "", _pct(best.throughput, base.throughput) if best else None,
        None, base.flagged or bool(best and best.flagged),
    )  # fmt: skip
