"""Pins the series definitions of docs/headline.md with hand-computed curves.

Optimal point: the end of the healthy range from the lowest level: the FIRST step whose
relative throughput gain over the range's last (usable) level is not > 0 and larger than the
relative mean-latency increase ends it; the last level before that step is the optimal point.
"""

from __future__ import annotations

import random

import pytest

from arraybench.analysis.curves import (
    CurvePoint,
    latency_bounded,
    maximum,
    min_latency,
    optimal_point,
)
from arraybench.analysis.headline import Headline as SeriesSummary
from arraybench.analysis.headline import headline as summarize


def series(
    levels: list[float],
    throughput: list[float],
    lat_mean: list[float | None],
    lat_p99: list[float | None] | None = None,
) -> list[CurvePoint]:
    p99 = lat_p99 if lat_p99 is not None else [None] * len(levels)
    return [
        CurvePoint(level=lv, throughput=t, lat_mean_us=lm, lat_p99_us=lp, key=f"L{lv:g}")
        for lv, t, lm, lp in zip(levels, throughput, lat_mean, p99, strict=True)
    ]


# Classic saturating curve, levels 1, 2, 4, ..., 64.
SAT_LEVELS: list[float] = [1, 2, 4, 8, 16, 32, 64]
SAT_T: list[float] = [10, 19, 35, 60, 70, 72, 71]
SAT_L: list[float | None] = [100, 105, 114, 133, 228, 444, 900]
# level  dT/T_prev          dL/L_prev            qualifies?
#   2    9/10  = 0.900  >   5/100  = 0.050      yes
#   4    16/19 = 0.842  >   9/105  = 0.086      yes
#   8    25/35 = 0.714  >  19/114  = 0.167      yes   <- last one that qualifies
#  16    10/60 = 0.167  <  95/133  = 0.714      no
#  32     2/70 = 0.029  < 216/228  = 0.947      no
#  64    -1/72 < 0                              no (throughput falls)
# optimal = level 8 (60 @ 133 us); max = 72 at level 32; min latency = 100 us at level 1.


def test_saturating_curve() -> None:
    pts = series(SAT_LEVELS, SAT_T, SAT_L)
    opt = optimal_point(pts)
    assert opt is not None
    assert (opt.level, opt.throughput, opt.lat_mean_us, opt.key) == (8, 60, 133, "L8")
    top = maximum(pts)
    assert top is not None and (top.level, top.throughput) == (32, 72)
    fast = min_latency(pts)
    assert fast is not None and (fast.level, fast.lat_mean_us) == (1, 100)
    # Every mean latency is <= 1000 us, so the bounded throughput is the max (72 @ level 32).
    bounded = latency_bounded(pts)
    assert bounded is not None and bounded.level == 32
    # With a 200 us bound only levels 1..8 (100..133 us) qualify: the best of them is 60.
    bounded = latency_bounded(pts, bound_us=200)
    assert bounded is not None and (bounded.level, bounded.throughput) == (8, 60)
    # The bound is inclusive: 133 us <= 133 us.
    bounded = latency_bounded(pts, bound_us=133)
    assert bounded is not None and bounded.level == 8
    # Below the lowest latency nothing qualifies.
    assert latency_bounded(pts, bound_us=99.9) is None


def test_linear_curve_every_level_optimal_last_wins() -> None:
    # Throughput grows with the level, latency stays flat: gains 1.0, 0.5, 0.333 > 0 = dL/L,
    # so every level qualifies and the last (level 4) is the optimal point.
    pts = series([1, 2, 3, 4], [100, 200, 300, 400], [50, 50, 50, 50])
    opt = optimal_point(pts)
    assert opt is not None and opt.level == 4
    top = maximum(pts)
    assert top is not None and top.level == 4
    # Equal latencies everywhere: the tie goes to the lower level.
    fast = min_latency(pts)
    assert fast is not None and fast.level == 1


def test_curve_falling_after_its_maximum() -> None:
    # level  dT/T_prev            dL/L_prev
    #   2    80/100 = 0.800  >    10/100 = 0.100   yes  <- last
    #   3    20/180 = 0.111  <    40/110 = 0.364   no
    #   4   -50/200 < 0                            no
    #   5   -30/150 < 0                            no
    pts = series([1, 2, 3, 4, 5], [100, 180, 200, 150, 120], [100, 110, 150, 300, 600])
    opt = optimal_point(pts)
    assert opt is not None and (opt.level, opt.throughput) == (2, 180)
    top = maximum(pts)
    assert top is not None and (top.level, top.throughput) == (3, 200)


def test_noisy_curve_where_latency_decreases() -> None:
    # level  dT/T_prev             dL/L_prev
    #   2    50/100 = 0.500  >   50/200 = 0.250            yes
    #   3     5/150 = 0.033  <  150/250 = 0.600            no   <- ends the healthy range
    #   4     5/155 = 0.032  >  -20/400 = -0.050           (yes, but after the end)
    # The old rule (the last passing step anywhere) named level 4, past a step that failed;
    # the healthy range ends at the first failing step: level 2.
    pts = series([1, 2, 3, 4, 5], [100, 150, 155, 160, 158], [200, 250, 400, 380, 390])
    opt = optimal_point(pts)
    assert opt is not None and (opt.level, opt.throughput, opt.lat_mean_us) == (2, 150, 250)
    # A throughput that does not grow never qualifies, even when latency falls:
    # level 2: 0/100 = 0 (not > 0) although dL/L = -0.5 -> the first level.
    flat = series([1, 2], [100, 100], [200, 100])
    opt = optimal_point(flat)
    assert opt is not None and opt.level == 1
    # Min latency need not be at the first level (cold start): 90 us at level 2.
    cold = series([1, 2, 3], [10, 20, 25], [120, 90, 150])
    fast = min_latency(cold)
    assert fast is not None and fast.level == 2


def test_unsorted_input_gives_the_same_answers() -> None:
    pts = series(SAT_LEVELS, SAT_T, SAT_L)
    shuffled = pts[:]
    random.Random(7).shuffle(shuffled)
    assert shuffled != pts
    assert summarize(shuffled) == summarize(pts)
    s = summarize(shuffled)
    assert s.optimal is not None and s.optimal.level == 8
    assert s.at_first is not None and s.at_first.level == 1
    assert s.maximum is not None and s.maximum.level == 32


def test_single_point() -> None:
    (only,) = series([4], [1234], [321], [654])
    s = summarize([only])
    assert s == SeriesSummary(
        optimal=only,
        maximum=only,
        min_latency=only,
        bounded=only,
        bound_us=1000.0,
        bound_stat="mean",
        at_first=only,
    )


def test_all_latencies_missing() -> None:
    # No point can take part in the optimal test -> the first level. No latency -> no min
    # latency and nothing under a latency bound; the maximum needs no latency.
    pts = series([1, 2, 4], [10, 30, 20], [None, None, None])
    s = summarize(pts)
    assert s.optimal is not None and s.optimal.level == 1
    assert s.maximum is not None and s.maximum.level == 2
    assert s.min_latency is None
    assert s.bounded is None
    assert s.at_first is not None and s.at_first.level == 1


def test_points_without_latency_or_throughput_are_skipped_not_fatal() -> None:
    # Level 2 failed (throughput 0) and level 3 lost its latency: the test compares each
    # usable point with the usable point before it.
    #   level 4 vs level 1:  150/100 = 1.5   >  50/100  = 0.5    yes
    #   level 5 vs level 4:   10/250 = 0.04  < 250/150  = 1.667  no
    # -> optimal = level 4 (a naive neighbour comparison would divide by zero at level 3).
    pts = series([1, 2, 3, 4, 5], [100, 0, 200, 250, 260], [100, 120, None, 150, 400])
    opt = optimal_point(pts)
    assert opt is not None and opt.level == 4
    # Zero latency cannot be a divisor either: it is skipped the same way.
    pts = series([1, 2, 3], [100, 150, 200], [0, 100, 105])
    # usable: levels 2, 3: 50/150 = 0.333 > 5/100 = 0.05 -> level 3
    opt = optimal_point(pts)
    assert opt is not None and opt.level == 3


def test_max_tie_goes_to_the_lower_level() -> None:
    pts = series([8, 1, 4], [80, 50, 80], [300, 100, 200])
    top = maximum(pts)
    assert top is not None and top.level == 4


def test_p99_bound() -> None:
    # mean:  100  110  130  180  400
    # p99:   300  450  900 1500 4000
    # mean bound 1000 us: all qualify -> best throughput = level 16 (90).
    # p99 bound 1000 us: levels 1, 2, 4 (p99 300, 450, 900) -> best = level 4 (60).
    # p99 bound 200 us: none.
    pts = series(
        [1, 2, 4, 8, 16],
        [20, 40, 60, 80, 90],
        [100, 110, 130, 180, 400],
        [300, 450, 900, 1500, 4000],
    )
    mean_bounded = latency_bounded(pts, 1000, "mean")
    assert mean_bounded is not None and mean_bounded.level == 16
    p99_bounded = latency_bounded(pts, 1000, "p99")
    assert p99_bounded is not None and p99_bounded.level == 4
    assert latency_bounded(pts, 200, "p99") is None
    s = summarize(pts, bound_us=1000, stat="p99")
    assert s.bounded == p99_bounded
    assert (s.bound_us, s.bound_stat) == (1000, "p99")
    # A point without p99 does not qualify for a p99 bound.
    no_p99 = series([1, 2], [10, 20], [100, 100], [100, None])
    bounded = latency_bounded(no_p99, 1000, "p99")
    assert bounded is not None and bounded.level == 1
    with pytest.raises(ValueError):
        latency_bounded(pts, 1000, "p95")


def test_empty_input() -> None:
    assert optimal_point([]) is None
    assert maximum([]) is None
    assert min_latency([]) is None
    assert latency_bounded([]) is None
    assert summarize([]) == SeriesSummary(None, None, None, None, 1000.0, "mean", None)


def test_accepts_any_iterable_once() -> None:
    # A generator is consumed once by summarize and still gives every figure.
    s = summarize(p for p in series(SAT_LEVELS, SAT_T, SAT_L))
    assert s.optimal is not None and s.optimal.level == 8
    assert s.maximum is not None and s.maximum.level == 32
