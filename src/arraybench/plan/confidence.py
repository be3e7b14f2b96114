"""Student t's 95 % quantiles, and what they make of the plan's `timing.steady.interval`.

Here, below the analysis, because the plan speaks them too: fio's steady-state limit is
derived from the interval the plan asks for (analysis.statistics uses the same table).
"""

from __future__ import annotations

import math

# two-sided 95 % critical values of Student's t, by degrees of freedom
T95 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
    9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
    17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064,
    25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000,
    120: 1.980,
}  # fmt: skip
Z95 = 1.960


def t95(df: float) -> float:
    """The two-sided 95 % critical value of Student's t with `df` degrees of freedom.

    Between tabulated values the next smaller df is taken (a slightly wider, cautious
    interval); above 120 the normal value 1.96."""
    if df < 1:
        raise ValueError("Student t needs at least one degree of freedom")
    if df > 120:
        return Z95
    return T95[max(d for d in T95 if d <= df)]


def steady_limit(interval_pct: float, window_s: float) -> float:
    """fio's steady-state limit (% deviation from the window mean) that makes a window which
    passes it carry a 95 % interval of its mean no wider than ±`interval_pct`.

    fio ends a point when every one of the window's n 1-second samples is within L % of
    their mean. Then their standard deviation is at most L·sqrt(n / (n - 1)) % of the mean
    (half the samples at +L, half at -L), and the t interval's half-width at most
    t·L / sqrt(n - 1) %. So L = interval·sqrt(n - 1) / t guarantees the interval."""
    n = int(window_s)
    if n < 2:
        raise ValueError("a steady window of one second has no spread")
    return interval_pct * math.sqrt(n - 1) / t95(n - 1)
