"""Per-point findings from the 1-second series: write cliff, GC rate, SNIA steady state.

Pure: stored samples in, plain dicts out (stored as JSON beside the point).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from arraybench.analysis.cliff import find_write_cliff, gc_throughput_estimate
from arraybench.analysis.steady import steady_state
from arraybench.store.db import Sample

SNIA_WINDOW = 5


def _total(values: Sequence[float | None]) -> float:
    return sum(v or 0.0 for v in values)


def series(samples: Sequence[Sample]) -> tuple[list[float], list[float], list[float]]:
    """Seconds since the first sample, total IOPS, total bytes/s."""
    if not samples:
        return [], [], []
    t0 = samples[0].t
    times = [float(s.t - t0) for s in samples]
    iops = [_total((s.read_iops, s.write_iops)) for s in samples]
    bw = [_total((s.read_mbps, s.write_mbps)) * 1e6 for s in samples]
    return times, iops, bw


def cliff_finding(samples: Sequence[Sample], block_size: int) -> dict[str, Any]:
    """The write cliff of a point, or {"found": False}, with the GC throughput estimate."""
    times, iops, bw = series(samples)
    if not any(bw):  # no bandwidth log: bytes follow from the I/O count
        bw = [v * block_size for v in iops]
    cliff = find_write_cliff(times, iops, bytes_per_io=block_size, bw_bytes=bw)
    if cliff is None:
        return {"found": False, "seconds": len(times)}
    gc = gc_throughput_estimate(times, bw, cliff)
    return {"found": True, "seconds": len(times), **asdict(cliff), "gc_bytes_per_s": gc}


def steady_finding(samples: Sequence[Sample], window: int = SNIA_WINDOW) -> dict[str, Any]:
    """SNIA PTS criteria on the last `window` 1-second total IOPS values of a point."""
    _, iops, _ = series(samples)
    result = steady_state(iops, window=window)
    return {"window": window, "samples": len(iops), **asdict(result)}
