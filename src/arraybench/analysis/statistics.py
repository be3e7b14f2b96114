"""Spread of repeated measurements: median, 95 % confidence interval, significance, wins.

Pure: numbers in, numbers out. The interval is Student's t interval of the mean (the right
one for the handful of repeats a benchmark can afford; it assumes the repeats scatter
roughly normally around the true value). The median is the figure shown, the interval its
margin. Two groups differ when Welch's t test at 5 % (two-sided) says so; overlapping 95 %
intervals are the cruder, more cautious rule the tables use to say "within noise".
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

# the t table lives below, in plan.confidence: the plan's steady limit is derived from it too
from arraybench.plan.confidence import Z95 as _Z95
from arraybench.plan.confidence import t95 as t95

METHOD = "Student t, 95 %"
TEST = "Welch t test, 5 %, two-sided"

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

    @property
    def has_spread(self) -> bool:
        return self.half_width is not None


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


@dataclass(frozen=True)
class Difference:
    """Two groups of repeats compared by Welch's t test."""

    t: float  # the statistic
    df: float  # Welch-Satterthwaite degrees of freedom
    critical: float  # |t| above this: a real difference at 5 %
    significant: bool
    method: str = TEST


def welch(a: Sequence[float], b: Sequence[float]) -> Difference | None:
    """Welch's two-sided t test at 5 %; None when a group has fewer than two values."""
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = stdev(a) ** 2 / len(a), stdev(b) ** 2 / len(b)
    delta = mean(a) - mean(b)
    if va + vb == 0:  # no scatter at all: any difference is real, none is noise
        return Difference(math.inf if delta else 0.0, math.inf, _Z95, delta != 0)
    t = delta / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    critical = t95(max(1.0, df))
    return Difference(t, df, critical, abs(t) > critical)


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


def winner(values: Mapping[K, float], highest: bool = True) -> K | None:
    """The key of the highest (or lowest) value; None for an empty mapping."""
    if not values:
        return None
    pick = max if highest else min
    return pick(values, key=lambda k: values[k])


def wins(winners: Sequence[K | None]) -> list[tuple[K, int]]:
    """How often each level won across repetitions, most often first (ties: first seen)."""
    counts = Counter(w for w in winners if w is not None)
    return counts.most_common()
