"""Whether two levels differ beyond their noise, and how sure the named optimal point is.

Pure: numbers in, verdicts out. The noise of a level is the 95 % interval of its throughput:
over its repeats when it was measured more than once (analysis.repeats), else over its own
1-second samples (`samples_spread_pct`). The second is the weaker figure: seconds of one run
are not independent and do not see a drift between runs, so it understates the noise between
runs; it is what a single run knows, and it is said as such where it is used.

Two levels differ only when their intervals do not overlap (the cautious rule of
analysis.statistics.within_noise); a level measured without a spread differs from nothing
and from everything: nothing can be said (None). The optimal point's walk (analysis.curves,
docs/headline.md) skips a step whose two levels do not differ: it neither ends nor extends
the healthy range.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arraybench.analysis.statistics import spread

MIN_SECONDS = 5  # fewer 1-second samples: no spread worth a decision (t(2) = 4.3)
SKIP_SECONDS = 1  # the first second is often a partial one (fio starting its jobs)


def samples_spread_pct(values: Sequence[float]) -> float | None:
    """The 95 % half-width (% of the mean) of a point's mean throughput from its 1-second
    totals; None with too few seconds or no throughput."""
    kept = [v for v in values[SKIP_SECONDS:] if v is not None]
    if len(kept) < MIN_SECONDS:
        return None
    return spread(kept).half_width_pct


@dataclass(frozen=True)
class Level:
    """One measured level of a series: its throughput and its 95 % half-width in %."""

    key: str
    throughput: float
    noise_pct: float | None  # None: measured without a spread

    def interval(self) -> tuple[float, float] | None:
        if self.noise_pct is None:
            return None
        half = abs(self.throughput) * self.noise_pct / 100
        return self.throughput - half, self.throughput + half


def differ(a: Level, b: Level) -> bool | None:
    """True when the intervals do not overlap, False when they do, None without spread."""
    ia, ib = a.interval(), b.interval()
    if ia is None or ib is None:
        return None
    return not (ia[0] <= ib[1] and ib[0] <= ia[1])


def _neighbours(levels: Sequence[Level], chosen: str) -> tuple[Level | None, list[Level]]:
    keys = [lv.key for lv in levels]
    if chosen not in keys:
        return None, []
    at = keys.index(chosen)
    return levels[at], [levels[i] for i in (at - 1, at + 1) if 0 <= i < len(levels)]


def _wins(won: int | None, of: int | None) -> str:
    """How often the level was the optimal point of one repetition's own curve."""
    if won is None or not of:
        return ""
    if won == 0:  # the medians' optimum, which no repetition alone had
        return f" (on the medians; none of the {of} repetitions alone had it)"
    return f" (in all {of} repetitions)" if won == of else f" (in {won} of {of} repetitions)"


def optimal_confidence(
    levels: Sequence[Level], optimal: str, won: int | None = None, of: int | None = None
) -> str:
    """`optimal 8; 16 is within noise of it`, `optimal 8 (in 2 of 3 repetitions); its
    neighbours differ from it beyond noise`, or "" when nothing can be said (no spread, no
    repetitions)."""
    it, near = _neighbours(levels, optimal)
    verdicts = [differ(it, lv) for lv in near] if it is not None else []
    times = _wins(won, of)
    if all(v is None for v in verdicts) and not times:
        return ""
    same = [lv.key for lv, v in zip(near, verdicts, strict=True) if v is False]
    if same:
        verb = "is" if len(same) == 1 else "are"
        return f"optimal {optimal}{times}; {' and '.join(same)} {verb} within noise of it"
    if verdicts and all(v is True for v in verdicts):
        return f"optimal {optimal}{times}; its neighbours differ from it beyond noise"
    return f"optimal {optimal}{times}"
