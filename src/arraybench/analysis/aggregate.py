"""Combine fio jobs (and hosts) into one point's figures.

Throughput is summed, latency means are weighted by I/O count, percentiles come from merged
histogram bins; percentiles are never averaged. Without bins, a single job's own percentiles
are used and several jobs' are left unknown (None) rather than invented.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arraybench.engines.fio.parse import percentile_from_bins
from arraybench.engines.measurement import DirStats, Measurement

PERCENTILES = {"p50": 50.0, "p99": 99.0, "p999": 99.9}
METRIC_NAMES = ("ios", "bytes", "iops", "mbps", "lat_mean_us", "lat_p50_us", "lat_p99_us",
                "lat_p999_us", "lat_max_us")  # fmt: skip
SCOPES = ("read", "write", "total")


@dataclass(frozen=True)
class DirMetrics:
    """One direction (or the total) of one point, in report units: MB/s = 10^6 B/s, µs."""

    ios: int
    bytes: int
    iops: float
    mbps: float
    lat_mean_us: float | None
    lat_p50_us: float | None
    lat_p99_us: float | None
    lat_p999_us: float | None
    lat_max_us: float | None

    def as_dict(self, prefix: str) -> dict[str, float | int | None]:
        return {f"{prefix}_{name}": getattr(self, name) for name in METRIC_NAMES}


@dataclass(frozen=True)
class PointMetrics:
    read: DirMetrics
    write: DirMetrics
    total: DirMetrics

    def as_dict(self) -> dict[str, float | int | None]:
        out: dict[str, float | int | None] = {}
        for scope in SCOPES:
            out.update(getattr(self, scope).as_dict(scope))
        return out


def merge_bins(parts: Iterable[dict[int, int] | None]) -> dict[int, int] | None:
    merged: dict[int, int] = {}
    for bins in parts:
        if bins is None:
            return None
        for value, count in bins.items():
            merged[value] = merged.get(value, 0) + count
    return merged


def job_bins(jobs: Iterable[Measurement]) -> dict[int, int] | None:
    """A point's latency histogram: latency (ns) -> count over every job and direction that
    did I/O (its histograms and percentile charts draw it); None when one of them has no
    json+ bins."""
    return merge_bins(d.bins_ns for job in jobs for d in (job.read, job.write) if d.ios)


def _percentiles(stats: Sequence[DirStats]) -> dict[str, float | None]:
    bins = merge_bins(s.bins_ns for s in stats)
    if bins:
        return {k: _us(percentile_from_bins(bins, p)) for k, p in PERCENTILES.items()}
    if len(stats) == 1:
        return {k: _us(stats[0].percentiles_ns.get(p)) for k, p in PERCENTILES.items()}
    return dict.fromkeys(PERCENTILES)


def _us(ns: float | None) -> float | None:
    return None if ns is None else ns / 1000.0


def combine(stats: Sequence[DirStats]) -> DirMetrics:
    """Figures of several jobs' (or directions') stats taken together."""
    active = [s for s in stats if s.ios > 0]
    ios = sum(s.ios for s in active)
    weighted = [(s.lat_mean_ns, s.ios) for s in active if s.lat_mean_ns is not None]
    weight = sum(n for _, n in weighted)
    mean = sum(v * n for v, n in weighted) / weight if weight else None
    maxima = [s.lat_max_ns for s in active if s.lat_max_ns is not None]
    pct = _percentiles(active) if active else dict.fromkeys(PERCENTILES)
    return DirMetrics(
        ios=ios,
        bytes=sum(s.io_bytes for s in active),
        iops=sum(s.iops for s in active),
        mbps=sum(s.bw_bytes for s in active) / 1e6,
        lat_mean_us=_us(mean),
        lat_p50_us=pct["p50"],
        lat_p99_us=pct["p99"],
        lat_p999_us=pct["p999"],
        lat_max_us=_us(max(maxima)) if maxima else None,
    )


def point_metrics(jobs: Sequence[Measurement]) -> PointMetrics:
    """Read, write and total over every job (of every host) of one point."""
    reads = [j.read for j in jobs]
    writes = [j.write for j in jobs]
    return PointMetrics(read=combine(reads), write=combine(writes), total=combine(reads + writes))
