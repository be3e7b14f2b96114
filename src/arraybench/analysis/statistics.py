"""Spread of repeated measurements: median, 95 % confidence interval, wins.

Pure: numbers in, numbers out. The interval is Student's t interval of the mean (the right
one for the handful of repeats a benchmark can afford; it assumes the repeats scatter
roughly normally around the true value). The median is the figure shown, the interval its
margin. Overlapping 95 % intervals are the cautious rule the tables use to say "within
noise".
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

# the t table lives below, in plan.confidence: the plan's steady limit is derived from it too
from arraybench.plan.confidence import t95 as t95

METHOD = "Student t, 95 %"

K = TypeVar("K", bound=Hashable)


def median(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def mean(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("mean of no values")
    return sum(values) / len(values)


def stdev(values: Sequence[float]) -> float:
    """Sample standard deviation (n - 1); 0 for a single value."""
    if len(values) < 2:
        return 0.0
    m = mean(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


@dataclass(frozen=True)
class Spread:
    """Repeats of one figure. `half_width` is None with one value: it has no spread."""

    n: int
    median: float
    mean: float
    low: float | None  # 95 % interval of the mean (Student t)
    high: float | None
    half_width: float | None
    method: str = METHOD

    @property
    def half_width_pct(self) -> float | None:
        """The interval's half-width relative to the mean, in %."""
        if self.half_width is None or self.mean == 0:
            return None
        return abs(self.half_width / self.mean) * 100


def spread(values: Sequence[float]) -> Spread:
    """Median and the 95 % Student t interval of the mean of `values` (at least one)."""
    m = mean(values)
    if len(values) < 2:
        return Spread(len(values), median(values), m, None, None, None)
    half = t95(len(values) - 1) * stdev(values) / math.sqrt(len(values))
    return Spread(len(values), median(values), m, m - half, m + half, half)


def overlap(a: Spread, b: Spread) -> bool | None:
    """Whether the two 95 % intervals overlap; None when either has no spread."""
    if a.low is None or a.high is None or b.low is None or b.high is None:
        return None
    return a.low <= b.high and b.low <= a.high


def within_noise(a: Sequence[float], b: Sequence[float]) -> bool | None:
    """A difference of the medians is noise when the 95 % intervals overlap; None when
    either side was measured once (no spread: nothing can be said)."""
    if len(a) < 2 or len(b) < 2:
        return None
    return overlap(spread(a), spread(b))


def bound_decidable(values: Sequence[float], bound: float) -> bool | None:
    """Whether a criterion `figure <op> bound` can be decided at this noise: the bound lies
    outside the 95 % interval. None when measured once."""
    s = spread(values)
    if s.low is None or s.high is None:
        return None
    return not (s.low <= bound <= s.high)


def wins(winners: Sequence[K | None]) -> list[tuple[K, int]]:
    """How often each level won across repetitions, most often first (ties: first seen)."""
    counts = Counter(w for w in winners if w is not None)
    return counts.most_common()
