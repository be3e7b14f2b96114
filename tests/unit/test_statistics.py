"""Spread, intervals and significance: pinned against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from arraybench.analysis.statistics import (
    bound_decidable,
    median,
    overlap,
    spread,
    t95,
    wins,
    within_noise,
)


def test_median_odd_and_even() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    with pytest.raises(ValueError):
        median([])


def test_t_table_small_and_large_samples() -> None:
    assert t95(1) == pytest.approx(12.706)
    assert t95(4) == pytest.approx(2.776)
    assert t95(35) == pytest.approx(2.042)  # between 30 and 40: the wider (df 30)
    assert t95(1000) == pytest.approx(1.96)


def test_student_interval_by_hand() -> None:
    # mean 100, s = sqrt(10/4), se = s / sqrt(5), t(4) = 2.776
    s = spread([100.0, 102.0, 98.0, 101.0, 99.0])
    half = 2.776 * math.sqrt(2.5) / math.sqrt(5)
    assert s.n == 5 and s.median == 100.0
    assert s.half_width == pytest.approx(half)
    assert s.low == pytest.approx(100 - half) and s.high == pytest.approx(100 + half)
    assert s.half_width_pct == pytest.approx(half)  # of a mean of 100
    assert "Student t" in s.method


def test_one_value_has_no_spread() -> None:
    s = spread([42.0])
    assert s.half_width is None and s.half_width_pct is None and s.median == 42.0
    assert within_noise([1.0], [1.0, 2.0]) is None
    assert bound_decidable([5.0], 3.0) is None


def test_overlap_on_clear_cases() -> None:
    same_a, same_b = [100.0, 103.0, 98.0], [101.0, 99.0, 102.0]
    far = [80.0, 81.0, 79.0]
    assert within_noise(same_a, same_b) is True
    assert within_noise(same_a, far) is False
    assert overlap(spread(same_a), spread(far)) is False


def test_bound_inside_interval_is_not_decidable() -> None:
    values = [95.0, 105.0, 100.0]
    assert bound_decidable(values, 100.0) is False
    assert bound_decidable(values, 150.0) is True


def test_wins_counts_levels_across_repetitions() -> None:
    reps = [{"qd1": 10.0, "qd8": 30.0}, {"qd1": 10.0, "qd8": 29.0}, {"qd1": 31.0, "qd8": 30.0}]
    winners = [max(r, key=lambda level: r[level]) for r in reps]
    assert wins([*winners, None]) == [("qd8", 2), ("qd1", 1)]  # None: no level that time
