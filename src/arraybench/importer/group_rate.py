"""Jobs that ran together, in one rate: fio's own group total.

fio's "Run status group" line (and its "All clients" block) gives a group's rate as the bytes
and I/Os of all its jobs over the LONGEST job's runtime (stat.c: io_kb * 1000 / max_run). A
point's figures summed from each job's own rate (analysis/aggregate.combine) are the same
when the jobs ran equally long, as a time-based run's do; jobs that each move a fixed size
without group_reporting end at different times, and the sum overstates the group: three jobs
reading 4 MiB each at 4, 2 and 1 MiB/s moved 12 MiB in 4 s, 3 MiB/s together, not 7. So an
imported point's jobs are first given the group's runtime, direction by direction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from arraybench.engines.measurement import DIRECTIONS, DirStats, Measurement


def as_one_group(jobs: Sequence[Measurement], client: bool) -> list[Measurement]:
    """`jobs` of one machine with each direction's rates over its longest runtime (fio's
    group total once summed). Jobs of fio servers (`client`: a `fio --client` output, or
    jobs that name a host) are left as they are: a point on many hosts is the sum of its
    hosts' rates, as arraybench's own runs (analysis/hosts.py) and the authors of
    client/server outputs add them, and the servers' names do not always tell them apart
    (cloned servers share one; a text output may print none)."""
    if client or any(job.hostname for job in jobs):
        return list(jobs)
    return _one_host(jobs)


def _one_host(jobs: Sequence[Measurement]) -> list[Measurement]:
    """One host's jobs, each direction over its longest runtime; unchanged where fewer than
    two jobs moved data in it."""
    out = list(jobs)
    for ddir in DIRECTIONS:
        timed = [j.direction(ddir) for j in out if _timed(j.direction(ddir))]
        if len(timed) < 2:
            continue
        longest = max(s.runtime_ms for s in timed)
        out = [_with(j, ddir, _over(j.direction(ddir), longest)) for j in out]
    return out


def _with(job: Measurement, ddir: str, stats: DirStats) -> Measurement:
    if ddir == "read":
        return replace(job, read=stats)
    if ddir == "write":
        return replace(job, write=stats)
    return replace(job, trim=stats)


def _timed(stats: DirStats) -> bool:
    return stats.ios > 0 and stats.runtime_ms > 0


def _over(stats: DirStats, runtime_ms: int) -> DirStats:
    if not _timed(stats) or stats.runtime_ms == runtime_ms:
        return stats
    return replace(stats, runtime_ms=runtime_ms, iops=stats.ios * 1000 / runtime_ms,
                   bw_bytes=stats.io_bytes * 1000 / runtime_ms)  # fmt: skip
