"""Repeated points (`repeat: N`): the repetitions of one level grouped, their spread, and one
median point per level for the curves and tables.

Pure: stored points in, groups and numbers out. A repetition's key is its level's key with
`#N` (the first keeps the plain key); the parts are typed in point_identity.PointIdentity.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.headline import headline
from arraybench.analysis.statistics import Spread, median, spread, wins, within_noise
from arraybench.records import PointRecord


@dataclass(frozen=True)
class RepeatGroup:
    key: str  # the level's key (the first repetition's)
    points: tuple[PointRecord, ...]  # in campaign order

    @property
    def repeats(self) -> int:
        return len(self.points)

    def throughput(self) -> Spread:
        return spread([p.throughput() for p in self.points])

    def latency(self, name: str = "lat_mean_us") -> Spread | None:
        values = [v for p in self.points if (v := p.metric("total", name)) is not None]
        return spread(values) if values else None


def groups(points: Sequence[PointRecord]) -> list[RepeatGroup]:
    """The points grouped by level, in the order their first repetition ran."""
    found: OrderedDict[str, list[PointRecord]] = OrderedDict()
    for p in sorted(points, key=lambda p: p.seq):
        found.setdefault(p.identity.level_key, []).append(p)
    return [RepeatGroup(key, tuple(pts)) for key, pts in found.items()]


def median_point(group: RepeatGroup) -> PointRecord:
    """One point standing for the level: every metric the median over the repetitions (each
    column on its own: a median point, not one measured run), identity of the first."""
    first = group.points[0]
    if group.repeats == 1:
        return first
    metrics: dict[str, float | None] = {}
    for name in first.metrics:
        values = [v for p in group.points if (v := p.metrics.get(name)) is not None]
        metrics[name] = median(values) if values else None
    return replace(first, key=group.key, metrics=metrics)


def collapse(points: Sequence[PointRecord]) -> list[PointRecord]:
    """Each level once: its median point (unchanged points when nothing was repeated)."""
    return [median_point(g) for g in groups(points)]


@dataclass(frozen=True)
class PointSpread:
    """What `show --format json` adds to each stored point."""

    repetition: int
    repeats: int
    throughput_median: float
    throughput_ci95_pct: float | None
    lat_mean_us_median: float | None
    lat_mean_us_ci95_pct: float | None


def point_spreads(points: Sequence[PointRecord]) -> dict[int, PointSpread]:
    """Point id -> its level's spread over the stored repetitions."""
    out: dict[int, PointSpread] = {}
    for g in groups(points):
        tp, lat = g.throughput(), g.latency()
        for p in g.points:
            out[p.id] = PointSpread(
                p.identity.repetition, g.repeats, tp.median, tp.half_width_pct,
                lat.median if lat else None, lat.half_width_pct if lat else None,
            )  # fmt: skip
    return out


def level_throughputs(points: Sequence[PointRecord], key: str) -> list[float]:
    """Every repetition's throughput of the level `key` (a level key, without `#N`)."""
    return [p.throughput() for p in points if p.identity.level_key == key]


def noise_mark(a: Sequence[float], b: Sequence[float]) -> str:
    """`within noise` when the two levels' 95 % intervals overlap, `beyond noise` when they do
    not, "" when either was measured once (nothing can be said)."""
    found = within_noise(a, b)
    return "" if found is None else ("within noise" if found else "beyond noise")


def throughput_spread_pct(points: Sequence[PointRecord]) -> dict[str, float]:
    """Level key -> the 95 % half-width of its throughput in % of the mean, for every level
    measured more than once (the `±2.1 %` the tables show beside the median)."""
    out: dict[str, float] = {}
    for g in groups(points):
        pct = g.throughput().half_width_pct
        if g.repeats > 1 and pct is not None:
            out[g.key] = pct
    return out


@dataclass(frozen=True)
class SeriesWins:
    """How often each level was the series' maximum, and its optimal point, across the
    repetitions (the definitions of analysis.curves on each repetition's curve)."""

    series: str
    repetitions: int
    maximum: list[tuple[str, int]]  # level key, times it won; most often first
    optimal: list[tuple[str, int]]


def level_wins(points: Sequence[PointRecord], flagged: Collection[str] = ()) -> list[SeriesWins]:
    """Per series (workload, device count, hosts) measured more than once. Levels in
    `flagged` (level keys whose flags leave the headline) cannot win while the repetition
    has others (analysis.headline)."""
    by_series: OrderedDict[tuple[str, int | None, int | None], dict[int, list[CurvePoint]]]
    by_series = OrderedDict()
    for p in sorted(points, key=lambda p: p.seq):
        level, repetition = p.identity.level_key, p.identity.repetition
        curve = by_series.setdefault((p.workload, p.devices, p.hosts), {})
        curve.setdefault(repetition, []).append(CurvePoint(
            float(p.workers * p.iodepth), p.throughput(), p.metric("total", "lat_mean_us"),
            p.metric("total", "lat_p99_us"), level, level in flagged))  # fmt: skip
    found = []
    for (workload, devices, hosts), reps in by_series.items():
        if len(reps) < 2:
            continue
        name = workload + (f" ({devices} dev)" if devices else "") + (
            f" ({hosts} hosts)" if hosts else "")  # fmt: skip
        figures = [headline(c) for c in reps.values()]  # each repetition's own curve
        maxima = [f.maximum.key if f.maximum else None for f in figures]
        optima = [f.optimal.key if f.optimal else None for f in figures]
        found.append(SeriesWins(name, len(reps), wins(maxima), wins(optima)))
    return found
