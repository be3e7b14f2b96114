"""SNIA PTS steady state: max - min <= 20 % of the window average and
|least-squares slope x (window - 1)| <= 10 % of it, on the LAST `window` values."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from arraybench.analysis.steady import SteadyResult, steady_state

DATA = Path(__file__).resolve().parents[1] / "data"


def first_steady_window(values: Sequence[float], window: int = 5) -> int | None:
    """Scanning forward: the first index i whose trailing window is steady (the round after
    which a point could stop); None if no window is."""
    ends = range(window - 1, len(values))
    return next((i for i in ends if steady_state(values[: i + 1], window).steady), None)


def read_log_values(name: str) -> list[float]:
    """Column 2 of a fio per-interval log (time_ms, value, ddir, bs, prio)."""
    lines = (DATA / name).read_text().splitlines()
    return [float(line.split(",")[1]) for line in lines if line.strip()]


def test_constant_series_is_steady() -> None:
    r = steady_state([100.0] * 5)
    assert r == SteadyResult(True, 0, 5, 100.0, 0.0, 0.0, 0.0, 100.0)


def test_range_criterion_is_inclusive_at_20_percent() -> None:
    # avg = 500/5 = 100, max - min = 110 - 90 = 20 -> 20 % (allowed: <=).
    # slope over x = 0..4 (x - 2 = -2..2, sum (x-2)^2 = 10):
    #   (-2*90 - 1*110 + 0*100 + 1*100 + 2*100) / 10 = 10/10 = 1 -> |1 * 4| / 100 = 4 %
    r = steady_state([90, 110, 100, 100, 100])
    assert r.steady
    assert r.average == 100
    assert r.range_excursion == pytest.approx(0.20)
    assert r.slope == pytest.approx(1.0)
    assert r.slope_excursion == pytest.approx(0.04)
    # intercept = avg - slope * mean(x) = 100 - 1 * 2 = 98
    assert r.intercept == pytest.approx(98.0)
    # max - min = 22 -> 22 % > 20 %: not steady.
    r = steady_state([89, 111, 100, 100, 100])
    assert not r.steady
    assert r.range_excursion == pytest.approx(0.22)


def test_range_fails_while_slope_is_flat() -> None:
    # Symmetric zig-zag: slope (-2*100 - 80 + 0 + 80 + 2*100) / 10 = 0,
    # avg = 485/5 = 97, range = 125 - 80 = 45 -> 45/97 = 46.4 % > 20 %.
    r = steady_state([100, 80, 125, 80, 100])
    assert not r.steady
    assert r.slope == pytest.approx(0.0)
    assert r.slope_excursion == pytest.approx(0.0)
    assert r.range_excursion == pytest.approx(45 / 97)


def test_slope_criterion() -> None:
    # Ramp 95, 97.5, ..., 105: avg 100, range 10 %, slope 2.5/round -> 2.5 * 4 = 10 % (allowed).
    r = steady_state([95, 97.5, 100, 102.5, 105])
    assert r.steady
    assert r.slope == pytest.approx(2.5)
    assert r.slope_excursion == pytest.approx(0.10)
    # Ramp 94, 97, ..., 106: range 12 % passes, slope 3 -> 3 * 4 = 12 % > 10 %: not steady.
    r = steady_state([94, 97, 100, 103, 106])
    assert not r.steady
    assert r.range_excursion == pytest.approx(0.12)
    assert r.slope_excursion == pytest.approx(0.12)
    # A falling ramp counts the same (absolute value).
    r = steady_state([106, 103, 100, 97, 94])
    assert not r.steady
    assert r.slope == pytest.approx(-3.0)
    assert r.slope_excursion == pytest.approx(0.12)


def test_only_the_last_window_counts() -> None:
    r = steady_state([10, 500, 1, 100, 100, 100, 100, 100])
    assert r.steady
    assert (r.window_start, r.window_end) == (3, 8)
    # The fitted line uses the index of the input: flat line at 100 -> intercept 100.
    assert r.intercept == pytest.approx(100.0)
    # ... and a good start does not make a bad end steady.
    assert not steady_state([100, 100, 100, 100, 100, 10]).steady


def test_window_size_and_limits_are_parameters() -> None:
    # Window 3 on the last three values 100, 101, 102: range 2/101, slope 1 -> 2/101.
    r = steady_state([1, 100, 101, 102], window=3)
    assert r.steady and (r.window_start, r.window_end) == (1, 4)
    assert r.slope_excursion == pytest.approx(2 / 101)
    # The same window with a 1 % slope limit is not steady (1.98 % > 1 %).
    assert not steady_state([1, 100, 101, 102], window=3, max_slope_excursion=0.01).steady
    with pytest.raises(ValueError):
        steady_state([1, 2, 3], window=1)


def test_too_few_values() -> None:
    r = steady_state([100, 100, 100, 100])
    assert r == SteadyResult(False, None, None, None, None, None, None, None)
    assert first_steady_window([100, 100, 100, 100]) is None
    assert steady_state([]).steady is False


def test_zero_average_and_nan_are_never_steady() -> None:
    r = steady_state([0, 0, 0, 0, 0])
    assert not r.steady
    assert r.range_excursion == math.inf
    assert not steady_state([100, 100, math.nan, 100, 100]).steady


def test_first_steady_window() -> None:
    values = [10, 50, 90, 100, 101, 99, 100, 100, 100]
    # window 0..4  [10, 50, 90, 100, 101]  range 91/70.2          no
    # window 1..5  [50, 90, 100, 101, 99]  range 51/88 = 58 %     no
    # window 2..6  [90, 100, 101, 99, 100] avg 98, range 11/98 = 11.2 %,
    #              slope (-2*90 - 100 + 0 + 99 + 2*100)/10 = 1.9 -> 7.6/98 = 7.8 %   yes
    # -> the point may stop after index 6.
    assert first_steady_window(values) == 6
    r = steady_state(values[:7])
    assert r.steady and (r.window_start, r.window_end) == (2, 7)
    assert r.slope == pytest.approx(1.9)
    assert first_steady_window([1, 2, 4, 8, 16, 32, 64]) is None
    # Already steady at the first full window.
    assert first_steady_window([100] * 7) == 4


def test_real_write_cliff_series() -> None:
    """Sample 12b: 54 one-second IOPS samples, 370k -> cliff to ~14k-40k -> ~400k."""
    iops = read_log_values("12_samyaple_fio3.33_iops.1.log")
    assert len(iops) == 54
    # The start (370139, 401155, 156837, 33740, 26214) is the cliff itself: not steady.
    start = steady_state(iops[:5])
    assert not start.steady
    assert start.range_excursion is not None and start.range_excursion > 1.5
    # The recovered tail: 401481, 402613, 401710, 398647, 399943 (indices 49..53):
    #   avg = 2004394 / 5 = 400878.8, range = 402613 - 398647 = 3966 -> 0.99 %
    #   slope = (-2*401481 - 402613 + 0 + 398647 + 2*399943) / 10 = -7042/10 = -704.2
    #   -> |-704.2 * 4| / 400878.8 = 0.70 %; intercept = 400878.8 + 704.2 * 51 = 436793
    tail = steady_state(iops)
    assert tail.steady
    assert (tail.window_start, tail.window_end) == (49, 54)
    assert tail.average == pytest.approx(400878.8)
    assert tail.range_excursion == pytest.approx(3966 / 400878.8)
    assert tail.slope == pytest.approx(-704.2)
    assert tail.slope_excursion == pytest.approx(704.2 * 4 / 400878.8)
    assert tail.intercept == pytest.approx(436793.0)
    # Caveat the scan shows: a 5-sample window is already "steady" at the bottom of the cliff.
    # Indices 9..13 = 17447, 18646, 16980, 17351, 16464: avg 17377.6,
    # range 2182 -> 12.6 %, slope -3261/10 = -326.1 -> 1304.4/17377.6 = 7.5 %.
    assert first_steady_window(iops) == 13
    trough = steady_state(iops[:14])
    assert trough.steady and trough.average == pytest.approx(17377.6)
    assert trough.slope == pytest.approx(-326.1)


def test_agrees_with_fio_steadystate_block() -> None:
    """Sample 11: fio's own `steadystate` data (10 one-second IOPS values, attained)."""
    doc = json.loads(
        (DATA / "11_samyaple_fio3.33_json_steadystate_randwrite_qd32.json").read_text()
    )
    ss = doc["jobs"][0]["steadystate"]
    assert ss["attained"] == 1
    iops = ss["data"]["iops"]
    r = steady_state(iops, window=len(iops))
    assert r.steady
    assert r.average is not None
    assert int(r.average) == ss["data"]["iops_mean"]  # 400699.6 -> fio prints 400699
    # fio's criterion is max |y - mean| (6442.4); ours is the full range 407142 - 394602.
    assert max(abs(v - r.average) for v in iops) == pytest.approx(ss["max_deviation"])
    assert r.range_excursion == pytest.approx((407142 - 394602) / 400699.6)
