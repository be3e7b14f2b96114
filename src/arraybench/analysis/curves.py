"""Figures of one series (one curve: throughput and latency across load levels).

More: docs/internals.md, `analysis/curves.py`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from arraybench.analysis.noise import Level, differ

_STATS: tuple[str, ...] = ("mean", "p99")


@dataclass(frozen=True)
class CurvePoint:
    """One measured point of a series."""

    level: float  # x: load level, ascending order within a series
    throughput: float  # IOPS or MB/s, the series' own unit
    lat_mean_us: float | None
    lat_p99_us: float | None
    key: str = ""  # identifier of the stored point
    flagged: bool = False  # its validity flags leave the headline (validity.leaves_headline)
    noise_pct: float | None = None  # 95 % half-width of the throughput, % (its repeats)
    # its level's label (`w4-qd1`: PointIdentity.level_label), the same level's in another
    # scenario or run; "" when unknown
    level_name: str = ""


def _sorted(points: Iterable[CurvePoint]) -> list[CurvePoint]:
    # sorted() is stable, so points with equal levels keep their input order.
    return sorted(points, key=lambda p: p.level)


def _usable_for_optimal(point: CurvePoint) -> bool:
    return point.lat_mean_us is not None and point.lat_mean_us > 0 and point.throughput > 0


def _within_noise(a: CurvePoint, b: CurvePoint) -> bool:
    """Both levels have a spread and their 95 % throughput intervals overlap."""
    return differ(Level(a.key, a.throughput, a.noise_pct),
                  Level(b.key, b.throughput, b.noise_pct)) is False  # fmt: skip


def healthy(end: CurvePoint, cur: CurvePoint) -> bool:
    """The step from the healthy range's last level `end` to `cur` extends the range: the
    throughput grew, and by more (relatively) than the mean latency rose. Both usable."""
    assert end.lat_mean_us is not None and cur.lat_mean_us is not None
    gain = (cur.throughput - end.throughput) / end.throughput
    lat_rise = (cur.lat_mean_us - end.lat_mean_us) / end.lat_mean_us
    return gain > 0 and gain > lat_rise


def optimal_point(points: Iterable[CurvePoint]) -> CurvePoint | None:
    """The last level of the healthy range counted from the lowest level (see module doc)."""
    ordered = _sorted(points)
    if not ordered:
        return None
    usable = [p for p in ordered if _usable_for_optimal(p)]
    if not usable:
        return ordered[0]
    end = usable[0]
    for cur in usable[1:]:
        if _within_noise(end, cur):
            continue  # inside the noise: neither ends nor extends the range
        if not healthy(end, cur):
            break  # the first step that fails ends the healthy range
        end = cur
    return end


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
