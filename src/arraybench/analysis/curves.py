"""Figures of one series (one curve: throughput and latency across load levels).

Definitions (DESIGN.md, "Core definitions"; pinned in tests/unit/test_curves.py):

- **Optimal point**: the last level at which the relative throughput gain from the previous
  level, (T_i - T_{i-1}) / T_{i-1}, is positive and larger than the relative mean-latency
  increase, (L_i - L_{i-1}) / L_{i-1}. Points without a mean latency (or with a latency
  <= 0) or without throughput (<= 0) take no part in this test: each remaining point is
  compared with the remaining point before it. If no point after the first qualifies, the
  optimal point is the first level of the series.
- **Maximum**: the highest throughput; on a tie the lower level.
- **Minimum latency**: the lowest mean latency; on a tie the lower level.
- **Latency-bounded throughput**: the highest throughput among the points whose chosen
  latency statistic ("mean" or "p99") is <= the bound; None if no point qualifies.

Flagged points (validity flags: the load generator, not the storage, may have set the pace)
take no part in `summarize`'s figures unless `include_flagged` is set: a headline figure must
not rest on a measurement that cannot be trusted. When every point is flagged they all take
part (there is nothing else to name) and `SeriesSummary.left_out` is empty.

All functions accept the points in any order and sort them by level. They never mutate
their input and never raise on missing latencies; an empty input gives None.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

_STATS: tuple[str, ...] = ("mean", "p99")


@dataclass(frozen=True)
class CurvePoint:
    """One measured point of a series."""

    level: float  # x: load level, ascending order within a series
    throughput: float  # IOPS or MB/s, the series' own unit
    lat_mean_us: float | None
    lat_p99_us: float | None
    key: str = ""  # identifier of the stored point
    flagged: bool = False  # has validity flags (see analysis.validity)


@dataclass(frozen=True)
class SeriesSummary:
    """The figures a report shows for one series."""

    optimal: CurvePoint | None
    maximum: CurvePoint | None
    min_latency: CurvePoint | None
    bounded: CurvePoint | None  # latency-bounded throughput
    bound_us: float
    bound_stat: str  # "mean" or "p99"
    at_first: CurvePoint | None  # the lowest level (e.g. jobs=1)
    left_out: tuple[CurvePoint, ...] = ()  # flagged points the figures did not consider


def _sorted(points: Iterable[CurvePoint]) -> list[CurvePoint]:
    # sorted() is stable, so points with equal levels keep their input order.
    return sorted(points, key=lambda p: p.level)


def _usable_for_optimal(point: CurvePoint) -> bool:
    return point.lat_mean_us is not None and point.lat_mean_us > 0 and point.throughput > 0


def optimal_point(points: Iterable[CurvePoint]) -> CurvePoint | None:
    """The last level where throughput still grows faster than mean latency (see module doc)."""
    ordered = _sorted(points)
    if not ordered:
        return None
    usable = [p for p in ordered if _usable_for_optimal(p)]
    best = ordered[0]
    for prev, cur in itertools.pairwise(usable):
        # Both latencies are known and > 0, both throughputs > 0 (filtered above).
        assert prev.lat_mean_us is not None and cur.lat_mean_us is not None
        gain = (cur.throughput - prev.throughput) / prev.throughput
        lat_rise = (cur.lat_mean_us - prev.lat_mean_us) / prev.lat_mean_us
        if gain > 0 and gain > lat_rise:
            best = cur
    return best


def maximum(points: Iterable[CurvePoint]) -> CurvePoint | None:
    """The point with the highest throughput; on a tie the lower level."""
    best: CurvePoint | None = None
    for p in _sorted(points):
        if best is None or p.throughput > best.throughput:
            best = p
    return best


def min_latency(points: Iterable[CurvePoint]) -> CurvePoint | None:
    """The point with the lowest mean latency; on a tie the lower level. None if none known."""
    best: CurvePoint | None = None
    best_lat = 0.0
    for p in _sorted(points):
        if p.lat_mean_us is None:
            continue
        if best is None or p.lat_mean_us < best_lat:
            best, best_lat = p, p.lat_mean_us
    return best


def _stat_value(point: CurvePoint, stat: str) -> float | None:
    return point.lat_mean_us if stat == "mean" else point.lat_p99_us


def latency_bounded(
    points: Iterable[CurvePoint], bound_us: float = 1000.0, stat: str = "mean"
) -> CurvePoint | None:
    """Highest throughput among points whose `stat` latency is <= `bound_us`.

    `stat` is "mean" or "p99" (ValueError otherwise). Points without that statistic do not
    qualify. On a throughput tie the lower level wins. None if no point qualifies.
    """
    if stat not in _STATS:
        raise ValueError(f"latency statistic must be one of {_STATS}, not {stat!r}")
    best: CurvePoint | None = None
    for p in _sorted(points):
        value = _stat_value(p, stat)
        if value is None or value > bound_us:
            continue
        if best is None or p.throughput > best.throughput:
            best = p
    return best


def summarize(
    points: Iterable[CurvePoint],
    bound_us: float = 1000.0,
    stat: str = "mean",
    *,
    include_flagged: bool = False,
) -> SeriesSummary:
    """All figures of one series at once; every figure is None for an empty series. Flagged
    points are left out of them unless `include_flagged` (or every point is flagged)."""
    ordered = _sorted(points)
    trusted = ordered if include_flagged else [p for p in ordered if not p.flagged]
    if not trusted:
        trusted = ordered
    return SeriesSummary(
        optimal=optimal_point(trusted),
        maximum=maximum(trusted),
        min_latency=min_latency(trusted),
        bounded=latency_bounded(trusted, bound_us=bound_us, stat=stat),
        bound_us=bound_us,
        bound_stat=stat,
        at_first=trusted[0] if trusted else None,
        left_out=tuple(p for p in ordered if p.flagged and trusted is not ordered),
    )
