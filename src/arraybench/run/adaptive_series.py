"""Run a series adaptively: the search picks the next level from the points measured so far.

Every level it runs is an ordinary stored point; a resumed run replays the stored points
through the search in the same order, so it takes the same decisions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from arraybench.analysis.adaptive import AdaptiveSearch
from arraybench.plan.expand import Point
from arraybench.plan.scenarios import scenario_key
from arraybench.store.db import PointRecord

Measure = Callable[[Point], PointRecord | None]  # runs (or finds) a point; None: no result


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
    finding: dict[str, Any]


def run_adaptive(
    points: Sequence[Point], mode: str, bound_us: float, bound_stat: str, measure: Measure
) -> SeriesOutcome:
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
        search.record(level, record.throughput(), record.metric("total", "lat_mean_us") or 0.0,
                      record.metric("total", "lat_p99_us"))  # fmt: skip
    optimal, maximum = search.estimate()
    skipped = [p for p in points if p not in tried]
    first = points[0]
    finding = {
        "series": scenario_key(first.scenario, first.workload.name).replace("/", " · "),
        "devices": first.level.devices,
        "hosts": list(first.level.hosts), "mode": mode, "reason": search.reason,
        "tried": [p.key for p in tried], "skipped": [p.key for p in skipped],
        "ladder": [at[v].key for v in levels],
        "optimal": at[optimal].key if optimal is not None else None,
        "maximum": at[maximum].key if maximum is not None else None,
    }  # fmt: skip
    return SeriesOutcome(tried, skipped, finding)
