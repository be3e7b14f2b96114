"""A rate on a mixed workload: the total of one job (worker) at the planned mix, split into
the two values fio takes, one per direction.

fio caps each direction of a job on its own: `rate_iops=500` on a 70/30 job lets 500 reads
AND 500 writes a second through, and fio issues whichever direction is not waiting for its
rate, so the job runs 1,000 IOPS at 50 % reads (measured on fio 3.33 and 3.42: 2 jobs x
`rate_iops=500` ran 2,000 IOPS at 50.0 % reads). A plan's rate is the TOTAL of a job at the
planned mix: 500 IOPS at 70 % reads is `rate_iops=350,150`, which fio keeps at 70.0 % reads
(measured on both versions). Every rate that reaches a job file goes through `job_rate`
(the plan's `rate_iops`, the curve's steps, the interference test's base and background).

More: docs/internals.md, `plan/rate.py`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RateUnit = Literal["iops", "bytes"]  # fio's rate_iops= (I/Os a second) or rate= (bytes a second)
IOPS: RateUnit = "iops"
BYTES: RateUnit = "bytes"
# whole IOPS may move the mix by at most this many percentage points; beyond, bytes a second
MIX_SLACK_PCT = 1.0


@dataclass(frozen=True)
class JobRate:
    """One job's rate per direction, in `unit` a second; 0: the direction has no I/O (fio
    reads a 0 as "no limit", so a direction with I/O never gets one)."""

    read: int
    write: int
    unit: RateUnit
    bs: int  # bytes per I/O: a byte rate's IOPS

    def _iops(self, value: int) -> float:
        return float(value) if self.unit == IOPS else value / self.bs

    @property
    def read_iops(self) -> float:
        return self._iops(self.read)

    @property
    def write_iops(self) -> float:
        return self._iops(self.write)

    @property
    def total_iops(self) -> float:
        return self.read_iops + self.write_iops

    @property
    def read_pct(self) -> float:
        """The mix the job file asks for: reads in % of the job's I/Os."""
        total = self.total_iops
        return 100.0 * self.read_iops / total if total > 0 else 0.0


def _split(total: int, read_pct: int) -> tuple[int, int]:
    """(read, write) of a whole total: the read side rounded, the write side the rest, each
    direction with I/O at least 1."""
    if read_pct >= 100:
        return total, 0
    if read_pct <= 0:
        return 0, total
    read = min(total - 1, max(1, round(total * read_pct / 100)))
    return read, total - read


def job_rate(total_iops: int, read_pct: int, bs: int) -> JobRate:
    """A job's rate of `total_iops` I/Os a second at `read_pct` % reads (module doc)."""
    if total_iops < 1:
        raise ValueError(f"a rate must be at least 1 IOPS per job, got {total_iops}")
    if bs < 1:
        raise ValueError(f"a rate needs a block size of at least 1 byte, got {bs}")
    if total_iops >= 2 or read_pct in (0, 100):
        read, write = _split(total_iops, read_pct)
        whole = JobRate(read, write, IOPS, bs)
        if abs(whole.read_pct - read_pct) <= MIX_SLACK_PCT:
            return whole
    return job_bandwidth(total_iops * bs, read_pct, bs)


def job_bandwidth(total_bytes: int, read_pct: int, bs: int) -> JobRate:
    """A job's rate of `total_bytes` bytes a second at `read_pct` % reads (of the bytes, as
    of the I/Os: one block size), as fio's `rate=R,W`."""
    if total_bytes < 2:
        raise ValueError(f"a byte rate must be at least 2 bytes a second, got {total_bytes}")
    read, write = _split(total_bytes, read_pct)
    return JobRate(read, write, BYTES, bs)
