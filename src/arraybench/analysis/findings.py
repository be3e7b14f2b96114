"""Per-point findings from the 1-second series: write cliff, GC rate, SNIA steady state.

Pure: stored samples in, the findings' TypedDicts out (stored as JSON beside the point).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from arraybench.analysis.cliff import find_write_cliff, gc_throughput_estimate
from arraybench.analysis.steady import SteadyResult, scaled_steady
from arraybench.finding_kinds import CliffFinding, SteadyFields, SteadyFinding
from arraybench.records import Sample

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


def cliff_finding(samples: Sequence[Sample], block_size: int) -> CliffFinding:
    """The write cliff of a point, or {"found": False}, with the GC throughput estimate."""
    times, iops, bw = series(samples)
    if not any(bw):  # no bandwidth log: bytes follow from the I/O count
        bw = [v * block_size for v in iops]
    cliff = find_write_cliff(times, iops, bytes_per_io=block_size, bw_bytes=bw)
    if cliff is None:
        return {"found": False, "seconds": len(times)}
    gc = gc_throughput_estimate(times, bw, cliff)
    return {
        "found": True, "seconds": len(times), "time_s": cliff.time_s,
        "level_before": cliff.level_before, "level_after": cliff.level_after,
        "drop_pct": cliff.drop_pct, "gb_written_at_cliff": cliff.gb_written_at_cliff,
        "recovered": cliff.recovered, "recovery_time_s": cliff.recovery_time_s,
        "level_recovered": cliff.level_recovered, "level_min": cliff.level_min,
        "low_end_s": cliff.low_end_s, "gc_bytes_per_s": gc,
    }  # fmt: skip


def steady_fields(result: SteadyResult) -> SteadyFields:
    """A SteadyResult as the `steady` and `rounds` findings store it."""
    return {
        "steady": result.steady, "window_start": result.window_start,
        "window_end": result.window_end, "average": result.average,
        "range_excursion": result.range_excursion, "slope": result.slope,
        "slope_excursion": result.slope_excursion, "intercept": result.intercept,
    }  # fmt: skip


def steady_finding(samples: Sequence[Sample], rounds: int = SNIA_WINDOW) -> SteadyFinding:
    """SNIA PTS criteria on a point's 1-second total IOPS, over a window that scales with the
    point (analysis.steady.scaled_steady: its last fifth as `rounds` rounds, at least the
    last `rounds` seconds)."""
    _, iops, _ = series(samples)
    result, per = scaled_steady(iops, rounds)
    return {"window": per * rounds, "samples": len(iops), "rounds": rounds,
            **steady_fields(result)}  # fmt: skip


def kernel_drop_pct(
    times: Sequence[float], kernel: Sequence[float | None], at: float, window: float = 5.0
) -> float | None:
    """How much the kernel's own counters fell at `at`: the mean of its samples in the
    `window` seconds after, against the `window` before, in % (positive = a drop). None when
    either side has no kernel sample. A write cliff that the kernel does not see was likely
    other I/O on the device, or a fio artefact, not the array."""
    before = [
        k for t, k in zip(times, kernel, strict=False) if k is not None and at - window <= t < at
    ]
    after = [
        k for t, k in zip(times, kernel, strict=False) if k is not None and at <= t < at + window
    ]
    if not before or not after:
        return None
    level = sum(before) / len(before)
    if level <= 0:
        return None
    return (1 - (sum(after) / len(after)) / level) * 100


DISAGREEMENT = re.compile(
    r"kernel saw (\d+(?:\.\d+)?) % (fewer|more) (\S+) than fio(?: on (\S+))?"
    r"(?: \((.*?)(?:; [^;()]*\d+ s compared)?\))?"
)


@dataclass(frozen=True)
class Disagreements:
    """fio against the kernel over a run, said once: how many points, the worst, the cause."""

    points: int  # points with at least one flag
    of: int  # points compared
    worst_point: str
    worst: str  # the worst flag's own words
    likely_cause: str  # the hint given most often
    same_bytes: int = 0  # points whose every line is a remark: merged or split I/O, fs journal


def summarize_disagreements(
    flags: Sequence[tuple[str, str]], compared: int
) -> Disagreements | None:
    """`flags`: (point key, flag text) pairs, as the monitor wrote them."""
    if not flags:
        return None

    def size(flag: str) -> float:
        found = DISAGREEMENT.search(flag)
        return float(found.group(1)) if found else float("inf")  # "where fio reported none"

    def remark(flag: str) -> bool:  # the remarks' words (analysis.validity)
        return "same bytes" in flag or "a file in a filesystem" in flag

    # the worst and the likely cause among the real disagreements, the remarks' when none
    real = [(k, f) for k, f in flags if not remark(f)] or list(flags)
    key, worst = max(real, key=lambda kf: size(kf[1]))
    hints = Counter(m.group(5) for _, f in real if (m := DISAGREEMENT.search(f)) and m.group(5))
    cause = hints.most_common(1)[0][0] if hints else "see the points' notes"
    points = {k for k, _ in flags}
    other = {k for k, f in flags if not remark(f)}
    return Disagreements(len(points), compared, key, worst, cause, len(points - other))
