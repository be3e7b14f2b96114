"""Normalised fio results: what the parser produces, whatever the fio version.

Units are fixed here once: bytes, bytes/s, milliseconds of runtime, nanoseconds of latency.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IntervalSample:
    """One row of a fio bw/iops/lat/clat/slat log."""

    time_ms: int  # as written: ms since job start, or Unix epoch ms with log_unix_epoch
    value: float  # bw: KiB/s; iops: I/Os per interval-second; lat: ns (us for fio < 3)
    ddir: int  # 0 read, 1 write, 2 trim
    bs: int
    prio: int | None = None  # 5th column (fio >= 3.x), absent in old 4-column logs
