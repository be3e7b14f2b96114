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
    healthy,
    latency_bounded,
    maximum,
    min_latency,
    optimal_point,
)
from arraybench.analysis.noise import Level, differ

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


# the top step of the ladder, holding the maximum, gaining more than this share of what its load
# added (x2 the outstanding I/Os: +10 % throughput): the curve has not flattened, so the device
# may not be saturated (docs/headline.md). By Little's law an unsaturated device turns twice the
# outstanding I/Os into twice the throughput at the same latency, a saturated one into twice
# the latency at the same throughput.
SATURATED_SHARE = 0.10
SATURATED_GAIN_PCT = 5.0  # levels without a load ratio (level <= 0): the gain alone


@dataclass(frozen=True)
class Step:
    """One step of a series from level `start` to level `to` (point keys): its relative
    throughput gain and mean-latency rise, in %."""

    start: str
    to: str
    gain_pct: float
    lat_rise_pct: float | None = None


def _step(a: CurvePoint, b: CurvePoint) -> Step:
    rise = None
    if a.lat_mean_us and b.lat_mean_us is not None:
        rise = (b.lat_mean_us - a.lat_mean_us) / a.lat_mean_us * 100
    return Step(a.key, b.key, (b.throughput - a.throughput) / a.throughput * 100, rise)


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
    # the maximum on the ladder's top level, still gaining: the device may not be saturated
    unsaturated: Step | None = None

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


def _usable(points: Iterable[CurvePoint]) -> list[CurvePoint]:
    return sorted((p for p in points if p.throughput > 0 and p.lat_mean_us is not None
                   and p.lat_mean_us > 0), key=lambda p: p.level)  # fmt: skip


def unsaturated(taking_part: Sequence[CurvePoint], top: CurvePoint | None) -> Step | None:
    """The ladder's last step when the maximum `top` sits on its top level and the step still
    gained more than SATURATED_SHARE of the load it added: a higher level might give more, so
    the maximum may not be the device's. None when the curve flattened (or fell) before its
    top, or has one level."""
    ordered = sorted((p for p in taking_part if p.throughput > 0), key=lambda p: p.level)
    if len(ordered) < 2 or top is None or ordered[-1].key != top.key:
        return None
    below, top_level = ordered[-2], ordered[-1]
    step = _step(below, top_level)
    if below.level > 0 and top_level.level > below.level:
        added_pct = (top_level.level / below.level - 1) * 100  # the load the step added
        return step if step.gain_pct > SATURATED_SHARE * added_pct else None
    return step if step.gain_pct > SATURATED_GAIN_PCT else None


def _skipped(a: CurvePoint, b: CurvePoint) -> bool:
    """The walk's noise rule (analysis.curves): both levels repeated, intervals overlapping."""
    return differ(Level(a.key, a.throughput, a.noise_pct),
                  Level(b.key, b.throughput, b.noise_pct)) is False  # fmt: skip


@dataclass(frozen=True)
class Deciding:
    """The step that ended the healthy range of a series, when its verdict is fragile: the step
    after it was healthy again, to more throughput than the optimal point's (`after`), or its
    two levels' throughput intervals overlap (`within_noise`: True; None when either has no
    spread)."""

    ending: Step
    after: Step | None
    within_noise: bool | None

    @property
    def fragile(self) -> bool:
        return self.after is not None or self.within_noise is True


def deciding_step(
    taking_part: Sequence[CurvePoint], optimal: CurvePoint | None,
    noise: Mapping[str, float | None] | None = None,
) -> Deciding | None:  # fmt: skip
    """The step from the optimal point to the next usable level (which ended the healthy
    range), judged for fragility: is the step after it healthy again (a single noisy level
    decided), and do the two levels' throughput intervals overlap (`noise`: key -> 95 %
    half-width %, e.g. from a single run's 1-second samples: the weaker figure,
    analysis/noise.py)? None when the optimal point is the last level or the verdict is not
    fragile. The optimal point itself is analysis.curves' (this says how sure it is)."""
    usable = _usable(taking_part)
    keys = [p.key for p in usable]
    if optimal is None or optimal.key not in keys:
        return None
    at = keys.index(optimal.key)
    end = usable[at]
    # the level that ended the walk: the first after the optimal point whose step is not
    # within the repeats' noise (analysis.curves skips those steps)
    beyond = [i for i in range(at + 1, len(usable)) if not _skipped(end, usable[i])]
    if not beyond:
        return None
    failed, nxt = usable[beyond[0]], beyond[0] + 1
    after = None  # healthy again, and beyond the optimal point: not a collapse recovering
    if (
        nxt < len(usable)
        and healthy(failed, usable[nxt])
        and (usable[nxt].throughput > end.throughput)
    ):
        after = _step(failed, usable[nxt])
    spread = noise or {}
    within = differ(Level(end.key, end.throughput, spread.get(end.key)),
                    Level(failed.key, failed.throughput, spread.get(failed.key)))  # fmt: skip
    found = Deciding(_step(end, failed), after, None if within is None else not within)
    return found if found.fragile else None


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
    top = maximum(taking_part)
    return Headline(
        optimal=optimal_point(taking_part),
        maximum=top,
        min_latency=min_latency(taking_part),
        bounded=latency_bounded(taking_part, bound_us=bound_us, stat=stat),
        bound_us=bound_us,
        bound_stat=stat,
        at_first=taking_part[0] if taking_part else None,
        left_out=left,
        rule=rule,
        taking_part=tuple(taking_part),
        unsaturated=unsaturated(taking_part, top),
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
