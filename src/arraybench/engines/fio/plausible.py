"""Plausibility of imported fio figures: what no real run can produce.

An archive can hold a figure fio itself got wrong (fio 2.1.11 printed a mean latency of
756,537,530 msec, 8.7 days, for a 60-second run), a hand-edited or corrupted number, or a
unit misread. Such a point is imported and marked with the reasons, never dropped silently
and never the cause of refusing the whole file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from arraybench.engines.measurement import DIRECTIONS, DirStats, Measurement

# IOPS x block size against bandwidth: fio derives both from one count, so beyond rounding
# they agree; 10 % leaves room for a block size that is a range or was inferred.
BW_TOLERANCE = 0.10


def _numbers(d: DirStats) -> dict[str, float | None]:
    return {"I/Os": d.ios, "bytes": d.io_bytes, "runtime": d.runtime_ms, "IOPS": d.iops,
            "bandwidth": d.bw_bytes, "mean latency": d.lat_mean_ns,
            "min latency": d.lat_min_ns, "max latency": d.lat_max_ns}  # fmt: skip


def _direction(where: str, d: DirStats, bs: int | None) -> list[str]:
    reasons = []
    for name, value in _numbers(d).items():
        if value is not None and (math.isnan(value) or math.isinf(value) or value < 0):
            reasons.append(f"{where}: {name} is {value}")
    if reasons or d.empty:
        return reasons
    runtime_ns = d.runtime_ms * 1e6
    if d.lat_mean_ns is not None and runtime_ns and d.lat_mean_ns > runtime_ns:
        reasons.append(
            f"{where}: mean latency {d.lat_mean_ns / 1e6:,.0f} ms is longer than the "
            f"runtime {d.runtime_ms:,} ms"
        )
    if bs and d.bw_bytes > 0 and d.iops > 0:
        implied = d.iops * bs
        if abs(implied - d.bw_bytes) > BW_TOLERANCE * d.bw_bytes:
            reasons.append(
                f"{where}: IOPS x block size = {implied / 1e6:,.1f} MB/s, but the bandwidth "
                f"is {d.bw_bytes / 1e6:,.1f} MB/s"
            )
    return reasons


def implausible(jobs: Sequence[Measurement], block_sizes: Sequence[int | None]) -> list[str]:
    """Reasons (one line each) why these jobs' figures cannot all be true; [] when none.

    ``block_sizes`` is the fixed block size per direction (read, write, trim), None where
    it is a range or unknown (then IOPS x bs is not checked).
    """
    reasons = []
    for job in jobs:
        host = f"<{job.hostname}> " if job.hostname else ""
        for ddir, bs in zip(DIRECTIONS, block_sizes, strict=True):
            reasons += _direction(f"{host}{job.name} {ddir}", job.direction(ddir), bs)
    return reasons
