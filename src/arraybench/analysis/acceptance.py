"""Acceptance criteria: PASS when some measured point of the workload meets every bound.

The evidence is the point that proves it (the passing point with the highest throughput) or,
on FAIL, the nearest miss: the highest throughput among the points within the latency bounds,
else the point with the lowest latency. Partial points (a host failed) never prove anything.
A criterion with no measured point is NO DATA, which is not a pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from arraybench.plan.model import Expectation
from arraybench.store.records import PointRecord
from arraybench.units import format_latency, format_throughput

PASS, FAIL, NO_DATA = "PASS", "FAIL", "NO DATA"


@dataclass(frozen=True)
class Verdict:
    criterion: str
    verdict: str
    evidence: str
    point: str | None  # the key of the point that proves it (or the nearest miss)

    @property
    def passed(self) -> bool:
        return self.verdict == PASS


def _us(seconds: float) -> str:
    return format_latency(seconds * 1e6)


def describe(e: Expectation) -> str:
    if e.name:
        return e.name
    parts = []
    if e.min_iops:
        parts.append(f"≥ {format_throughput(e.min_iops, 'IOPS')}")
    if e.min_mbps:
        parts.append(f"≥ {format_throughput(e.min_mbps, 'MB/s')}")
    if e.max_lat_mean:
        parts.append(f"mean latency ≤ {_us(e.max_lat_mean)}")
    if e.max_lat_p99:
        parts.append(f"p99 ≤ {_us(e.max_lat_p99)}")
    hosts = f" on {e.hosts} hosts" if e.hosts else ""
    return f"{e.workload}{hosts}: " + " with ".join(parts)


def _latency_ok(e: Expectation, p: PointRecord) -> bool:
    mean, p99 = p.metric("total", "lat_mean_us"), p.metric("total", "lat_p99_us")
    if e.max_lat_mean and (mean is None or mean > e.max_lat_mean * 1e6):
        return False
    return not (e.max_lat_p99 and (p99 is None or p99 > e.max_lat_p99 * 1e6))


def _throughput_ok(e: Expectation, p: PointRecord) -> bool:
    if e.min_iops and (p.metric("total", "iops") or 0.0) < e.min_iops:
        return False
    return not (e.min_mbps and (p.metric("total", "mbps") or 0.0) < e.min_mbps)


def _measured(p: PointRecord) -> str:
    iops, mbps = p.metric("total", "iops"), p.metric("total", "mbps")
    mean, p99 = p.metric("total", "lat_mean_us"), p.metric("total", "lat_p99_us")
    return (
        f"{format_throughput(iops, 'IOPS')}, {format_throughput(mbps, 'MB/s')}, "
        f"mean {format_latency(mean)}, p99 {format_latency(p99)}"
    )


def _rank(e: Expectation, p: PointRecord) -> float:
    if e.min_iops:
        return p.metric("total", "iops") or 0.0
    if e.min_mbps:
        return p.metric("total", "mbps") or 0.0
    return -(p.metric("total", "lat_mean_us") or float("inf"))  # latency-only: lowest wins


def judge(e: Expectation, points: Sequence[PointRecord]) -> Verdict:
    mine = [
        p for p in points
        if fnmatchcase(p.workload, e.workload) and not p.partial
        and (e.hosts is None or (p.hosts or 1) == e.hosts)
    ]  # fmt: skip
    if not mine:
        return Verdict(describe(e), NO_DATA, "no complete measured point of this workload", None)
    passing = [p for p in mine if _latency_ok(e, p) and _throughput_ok(e, p)]
    if passing:
        best = max(passing, key=lambda p: _rank(e, p))
        return Verdict(describe(e), PASS, _measured(best), best.key)
    within = [p for p in mine if _latency_ok(e, p)]
    if within:
        near = max(within, key=lambda p: _rank(e, p))
        why = "best within the latency bound"
    else:
        near = min(mine, key=lambda p: p.metric("total", "lat_mean_us") or float("inf"))
        why = "no point within the latency bound; lowest latency"
    return Verdict(describe(e), FAIL, f"{why}: {_measured(near)}", near.key)


def judge_all(expectations: Sequence[Expectation], points: Sequence[PointRecord]) -> list[Verdict]:
    return [judge(e, points) for e in expectations]
