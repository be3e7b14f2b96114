"""Steady state after the SNIA Solid State Storage Performance Test Specification (PTS).

The tracked variable (IOPS, MB/s or latency per round, or per second) is steady when, within
a measurement window of `window` consecutive values (SNIA: 5 rounds):

- range excursion: max - min <= `max_excursion` (20 %) of the window average, and
- slope excursion: |least-squares slope x (window - 1)| <= `max_slope_excursion` (10 %) of
  the window average. slope x (window - 1) is the change of the fitted line across the
  window (METHODOLOGY.md: "slope times 4" for 5 rounds).

A window whose average is <= 0 (or that holds NaN) is never steady.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

SNIA_ROUNDS = 5  # SNIA PTS: steady over a window of 5 rounds
# a point's 1-second series is judged over its last fifth, cut into SNIA_ROUNDS rounds: the
# last 5 seconds of a 1-hour point say nothing of the hour (a point of 25 s or less: the last
# 5 seconds, one a round, as before)
LONG_SHARE = 0.2


@dataclass(frozen=True)
class SteadyResult:
    """Verdict and figures of one measurement window.

    `window_start`/`window_end` index the input (end exclusive). The fitted line is
    value = intercept + slope * index, with the index of the input sequence (0-based), so it
    can be drawn over the whole series. Excursions are fractions (0.2 = 20 %) of `average`.
    All figures are None when there are fewer values than the window.
    """

    steady: bool
    window_start: int | None
    window_end: int | None  # exclusive
    average: float | None
    range_excursion: float | None  # (max - min) / average
    slope: float | None  # least-squares slope per round (per value)
    slope_excursion: float | None  # |slope * (window - 1)| / average
    intercept: float | None


def _not_enough() -> SteadyResult:
    return SteadyResult(False, None, None, None, None, None, None, None)


def _check_args(window: int, max_excursion: float, max_slope_excursion: float) -> None:
    if window < 2:
        raise ValueError(f"a steady-state window needs at least 2 values, not {window}")
    if max_excursion < 0 or max_slope_excursion < 0:
        raise ValueError("excursion limits must be >= 0")


def _window_result(
    values: Sequence[float],
    start: int,
    window: int,
    max_excursion: float,
    max_slope_excursion: float,
) -> SteadyResult:
    ys = [float(v) for v in values[start : start + window]]
    n = len(ys)
    xs = [float(start + i) for i in range(n)]
    average = sum(ys) / n
    x_mean = sum(xs) / n
    sxx = sum((x - x_mean) ** 2 for x in xs)
    sxy = sum((x - x_mean) * (y - average) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx
    intercept = average - slope * x_mean
    if average > 0:
        range_excursion = (max(ys) - min(ys)) / average
        slope_excursion = abs(slope * (n - 1)) / average
    else:
        range_excursion = slope_excursion = math.inf
    # NaN compares False, so a window holding NaN is not steady.
    steady = range_excursion <= max_excursion and slope_excursion <= max_slope_excursion
    return SteadyResult(
        steady=steady,
        window_start=start,
        window_end=start + n,
        average=average,
        range_excursion=range_excursion,
        slope=slope,
        slope_excursion=slope_excursion,
        intercept=intercept,
    )


def steady_state(
    values: Sequence[float],
    window: int = 5,
    max_excursion: float = 0.20,
    max_slope_excursion: float = 0.10,
) -> SteadyResult:
    """Check the LAST `window` values (SNIA: the measurement window is the latest rounds).

    Fewer values than `window` -> steady=False with every figure None.
    """
    _check_args(window, max_excursion, max_slope_excursion)
    if len(values) < window:
        return _not_enough()
    return _window_result(values, len(values) - window, window, max_excursion, max_slope_excursion)


def scaled_steady(
    values: Sequence[float], rounds: int = SNIA_ROUNDS, share: float = LONG_SHARE
) -> tuple[SteadyResult, int]:
    """SNIA's criteria on a window that scales with the point: its last `share` (at least
    `rounds` values), averaged into `rounds` equal rounds. Returns the verdict, its window
    indexing `values` (end exclusive), and the values per round."""
    per = max(1, int(len(values) * share) // rounds)
    span = per * rounds
    if len(values) < span:
        return _not_enough(), per
    tail = [float(v) for v in values[len(values) - span :]]
    means = [statistics.fmean(tail[i * per : (i + 1) * per]) for i in range(rounds)]
    found = steady_state(means, rounds)
    return replace(found, window_start=len(values) - span, window_end=len(values)), per
