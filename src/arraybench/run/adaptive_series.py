"""Run a series adaptively: the search picks the next level from the points measured so far.

Every level it runs is an ordinary stored point; a resumed run replays the stored points
through the search in the same order, so it takes the same decisions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arraybench.analysis.adaptive import AdaptiveSearch
from arraybench.analysis.findings import series as per_second
from arraybench.analysis.noise import samples_spread_pct
from arraybench.finding_kinds import AdaptiveFinding
from arraybench.plan.expand import Point
from arraybench.store.db import PointRecord, Sample

Measure = Callable[[Point], PointRecord | None]  # runs (or finds) a point; None: no result
Samples = Callable[[int], list[Sample]]  # a stored point's 1-second samples, by point id
NOISE_SOURCE = "the 95 % interval of each point's 1-second throughput samples"


def point_noise(record: PointRecord, samples: Sequence[Sample]) -> float | None:
    """The point's noise: the 95 % half-width of its mean throughput over its 1-second
    samples, in % (in the series' unit: MB/s or IOPS)."""
    _, iops, bytes_per_s = per_second(samples)
    return samples_spread_pct(bytes_per_s if record.unit == "MB/s" else iops)


def ladder_of(points: Sequence[Point]) -> tuple[list[int], dict[int, Point]]:
    """The series' ladder as the search's levels: outstanding I/Os (workers x iodepth) when
    they are distinct, else positions 1..n; and the point at each level."""
    ordered = sorted(points, key=lambda p: (p.level.workers * p.level.iodepth, p.level.workers))
    loads = [p.level.workers * p.level.iodepth for p in ordered]
    levels = loads if len(set(loads)) == len(loads) else list(range(1, len(ordered) + 1))
    return levels, dict(zip(levels, ordered, strict=True))


@dataclass
class SeriesOutcome:
    tried: list[Point]
    skipped: list[Point]
    finding: AdaptiveFinding


def run_adaptive(
    points: Sequence[Point], mode: str, bound_us: float, bound_stat: str, measure: Measure,
    samples: Samples | None = None,
) -> SeriesOutcome:  # fmt: skip
    """The series' levels the search picks; with `samples`, each level's noise (its 1-second
    samples' spread) tells the search which levels differ (see analysis.adaptive)."""
    levels, at = ladder_of(points)
    kind = AdaptiveSearch.economy if mode == "economy" else AdaptiveSearch
    search = kind(levels, latency_bound_us=bound_us, bound_stat=bound_stat)
    tried: list[Point] = []
    while (level := search.next_level()) is not None:
        point = at[level]
        record = measure(point)
        tried.append(point)
        if record is None:
            search.record(level, 0.0, 0.0)
            continue
        noise = point_noise(record, samples(record.id)) if samples else None
        search.record(level, record.throughput(), record.metric("total", "lat_mean_us") or 0.0,
                      record.metric("total", "lat_p99_us"), noise)  # fmt: skip
    optimal, maximum = search.estimate()
    skipped = [p for p in points if p not in tried]
    first = points[0]
    finding: AdaptiveFinding = {
        "series": first.identity.series_key.replace("/", " · "),
        "devices": first.level.devices,
        "hosts": list(first.level.hosts), "mode": mode, "reason": search.explanation,
        "confidence": search.confidence({v: at[v].identity.label for v in levels}),
        "noise": NOISE_SOURCE if samples else "",
        "tried": [p.key for p in tried], "skipped": [p.key for p in skipped],
        "ladder": [at[v].key for v in levels],
        "optimal": at[optimal].key if optimal is not None else None,
        "maximum": at[maximum].key if maximum is not None else None,
    }  # fmt: skip
    return SeriesOutcome(tried, skipped, finding)
