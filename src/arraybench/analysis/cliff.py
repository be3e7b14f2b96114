"""Write cliff in a throughput time series (HUS VM "Write Cliff" test, SNIA write saturation).

More: docs/internals.md, `analysis/cliff.py`."""

from __future__ import annotations

import bisect
import itertools
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

RECOVERED_FRACTION = 0.8  # recovery: back to >= 80 % of the level before the cliff


@dataclass(frozen=True)
class CliffResult:
    time_s: float  # timestamp of the first sample of the drop
    level_before: float  # median before the drop (lookback window), series unit
    level_after: float  # median of the post-drop low plateau (the low phase)
    drop_pct: float  # (1 - level_after / level_before) x 100
    gb_written_at_cliff: float | None  # 1e9 bytes written before the first low sample
    recovered: bool
    recovery_time_s: float | None  # timestamp where the level is back >= 80 % of before
    level_recovered: float | None  # median of the recovered phase
    level_min: float | None = None  # lowest sample of the low phase
    low_end_s: float | None = None  # timestamp of the first sample after the low phase;
    # None if the low phase lasts until the end of the series


class _Series:
    """Time-sorted samples with the window helpers used by the cliff search."""

    def __init__(self, times: list[float], values: list[float]) -> None:
        self.t = times
        self.v = values
        self.n = len(times)
        gaps = [b - a for a, b in itertools.pairwise(times) if b > a]
        self.dt = statistics.median(gaps) if gaps else 1.0

    def window(self, i: int, dur: float) -> tuple[list[int], bool]:
        """Indices in [t_i, t_i + dur) and whether the data cover the whole window."""
        limit = dur - self.dt / 2
        idx = [i]
        j = i + 1
        while j < self.n and self.t[j] - self.t[i] < limit:
            idx.append(j)
            j += 1
        covered = (self.t[idx[-1]] - self.t[i]) + self.dt >= dur - self.dt / 2
        return idx, covered

    def before(self, i: int, lookback: float) -> list[float]:
        """Values in [t_i - lookback, t_i) (at least the sample before i)."""
        # t_i - t_j < lookback + dt/2  <=>  t_j > t_i - lookback - dt/2
        first = bisect.bisect_right(self.t, self.t[i] - lookback - self.dt / 2, 0, i)
        return self.v[min(first, i - 1) : i] if i > 0 else []

    def phase_end(self, start: int, dur: float, back: Callable[[float], bool]) -> int:
        """First index after `start` from which the level is `back` for a whole window.

        The first window [u, u + dur) (u > start, fully covered) whose median satisfies
        `back`; returns its first sample that satisfies `back`. `n` if none does.
        """
        for u in range(start + 1, self.n):
            idx, covered = self.window(u, dur)
            if not covered:
                break
            if back(statistics.median(self.v[k] for k in idx)):
                return next(k for k in idx if back(self.v[k]))
        return self.n

    def duration(self, start: int, end: int) -> float:
        """Time covered by the samples start..end-1 (each sample stands for dt)."""
        return self.t[end - 1] - self.t[start] + self.dt


def _at_least(level: float) -> Callable[[float], bool]:
    return lambda m: m >= level


def _below(level: float) -> Callable[[float], bool]:
    return lambda m: m < level


def _sorted_series(
    times_s: Sequence[float], *columns: Sequence[float] | None
) -> tuple[list[float], list[list[float] | None]]:
    n = len(times_s)
    for col in columns:
        if col is not None and len(col) != n:
            raise ValueError(f"time series lengths differ: {n} times, {len(col)} values")
    order = sorted(range(n), key=lambda k: times_s[k])
    times = [float(times_s[k]) for k in order]
    cols = [None if c is None else [float(c[k]) for k in order] for c in columns]
    return times, cols


def _bytes_before(times: list[float], rates: list[float], end: int, dt: float) -> float:
    """Bytes written by samples 0..end-1, each a rate over the interval ending at its time."""
    total = 0.0
    for k in range(end):
        interval = times[k] - times[k - 1] if k > 0 else dt
        total += rates[k] * interval
    return total


def find_write_cliff(
    times_s: Sequence[float],
    iops: Sequence[float],
    bytes_per_io: float | None = None,
    bw_bytes: Sequence[float] | None = None,
    drop: float = 0.5,
    min_duration_s: float = 3,
    *,
    lookback_s: float | None = None,
) -> CliffResult | None:
    """The first write cliff in an IOPS time series, or None (see the module doc).

    `times_s`: sample timestamps in seconds (fio log time / 1000). `bw_bytes`: bytes/s per
    sample (fio bw log KiB/s x 1024), used for `gb_written_at_cliff`; without it
    iops x `bytes_per_io`; with neither that figure is None. Input in any time order.
    """
    if not 0 < drop < 1:
        raise ValueError(f"drop must be between 0 and 1 (exclusive), not {drop}")
    if min_duration_s <= 0:
        raise ValueError(f"min_duration_s must be > 0, not {min_duration_s}")
    times, (values, bw) = _sorted_series(times_s, iops, bw_bytes)
    assert values is not None
    s = _Series(times, values)
    lookback = 10 * min_duration_s if lookback_s is None else lookback_s
    w = float(min_duration_s)

    for i in range(1, s.n):
        level_before = statistics.median(s.before(i, lookback))
        threshold = (1 - drop) * level_before
        if level_before <= 0 or not s.v[i] < threshold:
            continue
        idx, covered = s.window(i, w)
        if not covered:
            break  # later samples have even less data after them
        if not statistics.median(s.v[k] for k in idx) < threshold:
            continue
        low_end = s.phase_end(i, w, _at_least(threshold))
        if s.duration(i, low_end) < w - s.dt / 2:
            continue  # a short stall, not a sustained drop
        return _describe(s, i, low_end, level_before, w, bytes_per_io, bw)
    return None


def _describe(
    s: _Series,
    i: int,
    low_end: int,
    level_before: float,
    w: float,
    bytes_per_io: float | None,
    bw: list[float] | None,
) -> CliffResult:
    low = s.v[i:low_end]
    level_after = statistics.median(low)

    gb: float | None = None
    if bw is not None:
        gb = _bytes_before(s.t, bw, i, s.dt) / 1e9
    elif bytes_per_io is not None:
        gb = _bytes_before(s.t, [v * bytes_per_io for v in s.v], i, s.dt) / 1e9

    recovered_at: int | None = None
    level_recovered: float | None = None
    target = RECOVERED_FRACTION * level_before
    if low_end < s.n:
        # phase_end looks after its start index; start one before so low_end itself counts.
        k = s.phase_end(low_end - 1, w, _at_least(target))
        if k < s.n:
            recovered_at = k
            leave = s.phase_end(k, w, _below(target))
            level_recovered = statistics.median(s.v[k:leave])

    return CliffResult(
        time_s=s.t[i],
        level_before=level_before,
        level_after=level_after,
        drop_pct=(1 - level_after / level_before) * 100,
        gb_written_at_cliff=gb,
        recovered=recovered_at is not None,
        recovery_time_s=s.t[recovered_at] if recovered_at is not None else None,
        level_recovered=level_recovered,
        level_min=min(low),
        low_end_s=s.t[low_end] if low_end < s.n else None,
    )


def gc_throughput_estimate(
    times_s: Sequence[float], bw_bytes: Sequence[float], cliff: CliffResult | None
) -> float | None:
    """Sustained post-cliff write rate in bytes/s: the median of `bw_bytes` over the low phase
    [cliff.time_s, cliff.low_end_s) (to the end of the series if the low phase never ended).

    The HUS VM methodology takes it as the array's garbage-collection throughput for the
    pause between tests. None without a cliff or without samples in the low phase.
    """
    if cliff is None:
        return None
    times, (bw,) = _sorted_series(times_s, bw_bytes)
    assert bw is not None
    end = math.inf if cliff.low_end_s is None else cliff.low_end_s
    low = [b for t, b in zip(times, bw, strict=True) if cliff.time_s <= t < end]
    return statistics.median(low) if low else None


def pause_after(bytes_written: float, gc_bytes_per_s: float) -> float:
    """Seconds to pause after a test: bytes written by it / garbage-collection throughput.

    0 for nothing written; ValueError for a GC throughput that is not > 0.
    """
    if not gc_bytes_per_s > 0:
        raise ValueError(f"garbage-collection throughput must be > 0 bytes/s, not {gc_bytes_per_s}")
    return max(bytes_written, 0.0) / gc_bytes_per_s


def no_gc_rate_why(cliffs: Sequence[Mapping[str, object]]) -> str:
    """Why no GC rate is known for `pause_after: gc`, truthfully (`cliffs`: the run's stored
    cliff findings): the cliff test ran and found no cliff to measure it from, or found one
    without a rate, or none ran before."""
    if cliffs and not any(c.get("found") for c in cliffs):
        return (f"no GC throughput is known: the write-cliff test ran ({len(cliffs)} point(s)) "
                "and found no write cliff to measure it from; set gc_throughput in the plan "
                "to pause by it")  # fmt: skip
    if cliffs:
        return ("no GC throughput is known: the write cliff found gave no GC rate; set "
                "gc_throughput in the plan to pause by it")  # fmt: skip
    return ("no GC throughput is known: set gc_throughput in the plan, or run a workload "
            "with analysis: [cliff] before it")  # fmt: skip
