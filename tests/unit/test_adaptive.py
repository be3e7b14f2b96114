"""Adaptive series (analysis/adaptive.py): correctness against the exhaustive ladder.

Synthetic storage curves, never fio and never timing: the search must find the same optimal
point and maximum as curves.py on the whole ladder (exact mode), or within one ladder step
and 3 % (economy mode, the issue's targets), with clearly fewer points than the ladder.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable

import pytest

from arraybench.analysis.adaptive import AdaptiveSearch
from arraybench.analysis.curves import CurvePoint, maximum, optimal_point
from benchmarks.adaptive_sim import AdaptiveOutcome, bounded_estimate, closed_loop_curve, simulate

Curve = Callable[[int], tuple[float, float]]

HUS_VM = [1, 2, 4, 8, 16, 32, 64, 96, 128, 192]
HUS_TEMPLATE = [1, 2, 4, 8, 16, 32, 64, 128, 160, 192]
POW2 = [1, 2, 4, 8, 16, 32, 64, 128, 256]
DBI = [1, 5, 10, 15, 20, 30, 40, 50, 75, 100]
FINE = [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 96, 128]
ECONOMY: dict[str, float] = {"knee_steps": 1, "max_tol_pct": 3.0}


def little(table: Callable[[int], float]) -> Curve:
    """A curve from a throughput function, latency by Little's law (level = outstanding I/Os)."""

    def curve(level: int) -> tuple[float, float]:
        t = table(level)
        return t, level / t * 1e6

    return curve


def exhaustive(curve: Curve, ladder: list[int]) -> tuple[int, int]:
    pts = [CurvePoint(lv, *curve(lv), None) for lv in ladder]
    best, top = optimal_point(pts), maximum(pts)
    assert best is not None and top is not None
    return int(best.level), int(top.level)


def check_ladder_use(outcome: AdaptiveOutcome) -> None:
    assert outcome.tried[0] == outcome.ladder[0]
    assert len(set(outcome.tried)) == len(outcome.tried)
    assert set(outcome.tried) <= set(outcome.ladder)


def random_curve(rng: random.Random, ladder: list[int], noise_pct: float = 0.0) -> Curve:
    """One knee (smooth, from soft to sharp), sometimes a decline past saturation."""
    knee = math.exp(rng.uniform(math.log(1.5), math.log(ladder[-1] * 0.8)))
    decline = knee * rng.uniform(2.0, 12.0) if rng.random() < 0.4 else None
    return closed_loop_curve(
        peak=math.exp(rng.uniform(math.log(2e3), math.log(2e6))),
        knee=knee,
        sharpness=rng.choice([1.0, 1.5, 2.0, 3.0, 4.0, 8.0]),
        decline_at=decline,
        decline_power=rng.choice([1.0, 2.0]),
        noise_pct=noise_pct,
        seed=rng.randrange(1 << 30),
    )


# ------------------------------------------------------------------ hand-made curves


def test_min_of_linear_and_saturation_finds_the_knee_and_stops_on_the_plateau() -> None:
    curve = little(lambda n: min(10_000.0 * n, 150_000.0))
    assert exhaustive(curve, POW2) == (16, 16)
    for mode in ({}, ECONOMY):
        out = simulate(curve, POW2, **mode)
        check_ladder_use(out)
        assert (out.optimal_level, out.max_level) == (16, 16)
        assert out.max_throughput == 150_000.0
        assert out.stopped_by == "flat"
        assert "while latency rose" in out.reason
        assert 256 not in out.tried and 128 not in out.tried
    assert simulate(curve, POW2, **ECONOMY).tried == [1, 4, 64, 16, 32]


def test_smooth_knee_little_law_exact_mode_equals_the_exhaustive_sweep() -> None:
    curve = closed_loop_curve(peak=200_000, knee=12, sharpness=4)
    for ladder in (HUS_VM, POW2, HUS_TEMPLATE, DBI):
        out = simulate(curve, ladder)
        check_ladder_use(out)
        assert out.optimal_level == out.exhaustive_optimal
        assert out.max_shortfall_pct <= 0.5
        assert out.stopped_by in ("flat", "ladder_end")


def test_curve_with_a_maximum_then_a_decline_finds_the_peak_and_stops_early() -> None:
    curve = closed_loop_curve(peak=300_000, knee=16, sharpness=3, decline_at=64, decline_power=1.5)
    assert exhaustive(curve, HUS_VM) == (16, 32)
    out = simulate(curve, HUS_VM)
    assert (out.optimal_level, out.max_level) == (16, 32)
    assert out.max_shortfall_pct == 0.0
    assert out.stopped_by == "flat"  # fell twice while latency rose
    assert max(out.tried) == 64  # nothing of the falling tail above 64
    assert {16, 32, 64} <= set(out.tried) and 8 in out.tried  # both neighbours of both


def test_soft_knee_economy_mode_is_within_one_step() -> None:
    curve = closed_loop_curve(peak=200_000, knee=24, sharpness=1.5)
    out = simulate(curve, HUS_VM, **ECONOMY)
    assert out.exhaustive_optimal == 32
    assert out.optimal_steps_off <= 1 and out.meets()
    assert simulate(curve, HUS_VM).optimal_level == 32  # exact mode: the same level


def test_curve_that_never_saturates_runs_to_the_top_with_few_points() -> None:
    curve = closed_loop_curve(peak=1e6, knee=5000, sharpness=2)  # linear over the ladder
    out = simulate(curve, HUS_VM)
    assert out.stopped_by == "ladder_end"
    assert out.reason == "reached the top of the ladder (192)"
    assert (out.optimal_level, out.max_level) == (192, 192) == exhaustive(curve, HUS_VM)
    assert out.tried == [1, 4, 64, 192, 128]


def test_saturated_from_the_first_level() -> None:
    curve = closed_loop_curve(peak=200_000, knee=0.5, sharpness=4)
    out = simulate(curve, HUS_VM)
    assert out.optimal_level == out.exhaustive_optimal == 1
    assert out.stopped_by == "flat" and len(out.tried) == 3
    assert abs(out.max_shortfall_pct) < 0.1


def test_latency_bound_crossing_is_bracketed_by_ladder_neighbours() -> None:
    curve = closed_loop_curve(peak=200_000, knee=40, sharpness=2)
    # Mean latency: 256 us at 32, 377 at 64, 520 at 96, 671 at 128.
    out = simulate(curve, HUS_VM, latency_bound_us=400.0)
    assert out.bounded_level == out.exhaustive_bounded_level == 64
    assert {64, 96} <= set(out.tried)  # last within the bound, first over it
    assert out.optimal_level == out.exhaustive_optimal and out.max_shortfall_pct <= 0.5
    assert out.stopped_by != "latency_bound"  # the bound alone does not end the series


def test_stop_at_bound_ends_the_scan_at_the_first_level_over_the_bound() -> None:
    curve = closed_loop_curve(peak=200_000, knee=40, sharpness=2)
    out = simulate(curve, HUS_VM, latency_bound_us=400.0, stop_at_bound=True)
    assert out.stopped_by == "latency_bound"
    assert out.reason == "latency over the bound at level 128"
    assert max(out.tried) == 128
    assert out.bounded_level == out.exhaustive_bounded_level == 64
    assert out.optimal_level == out.exhaustive_optimal


def test_bound_on_p99_uses_the_recorded_p99() -> None:
    curve = closed_loop_curve(peak=200_000, knee=40, sharpness=2)
    search = AdaptiveSearch(HUS_VM, latency_bound_us=1000.0, bound_stat="p99")
    while (level := search.next_level()) is not None:
        t, mean = curve(level)
        search.record(level, t, mean, lat_p99_us=3 * mean)  # p99 768 us at 32, 1131 at 64
    assert bounded_estimate(search) == 32
    assert {32, 64} <= set(search.tried)
    mean_bounded = AdaptiveSearch(HUS_VM, latency_bound_us=1000.0)
    for level in search.tried:
        mean_bounded.record(level, *curve(level))
    assert bounded_estimate(mean_bounded) == 192  # the mean stays under 1 ms everywhere


# ------------------------------------------------------------------ the stop rule


def test_two_flat_steps_with_rising_latency_stop_the_scan() -> None:
    search = AdaptiveSearch([1, 2, 4, 8, 16])
    search.record(1, 100.0, 10.0)
    search.record(2, 101.0, 19.8)  # +1 %: flat
    assert search.next_level() is not None and search.stopped_by is None  # one flat step
    search.record(4, 100.5, 39.8)  # fell: second flat step
    nxt = search.next_level()
    assert search.stopped_by == "flat"
    assert search.reason == (
        "throughput gained less than 3 % (or fell) on two steps, 1 -> 2 -> 4, while latency rose"
    )
    assert nxt is None or nxt < 4  # refinement only below the top, never above


def test_flat_throughput_without_rising_latency_does_not_stop() -> None:
    ladder = [1, 2, 4, 8, 16, 32]
    out = simulate(lambda lv: (1000.0, 50.0), ladder)
    assert out.stopped_by == "ladder_end"
    assert 32 in out.tried


def test_small_steps_need_a_smaller_gain_to_count_as_flat() -> None:
    # 20 -> 24 -> 28 with +2.5 % each: flat for a doubling, not for a x1.2 step.
    search = AdaptiveSearch([20, 24, 28, 40])
    for level, t in [(20, 1000.0), (24, 1025.0), (28, 1050.0)]:
        search.record(level, t, level / t * 1e6)
    assert search.next_level() == 40 and search.stopped_by is None


# ------------------------------------------------------------------ the API


def test_next_level_is_stable_until_recorded_and_replay_reproduces_the_run() -> None:
    curve = closed_loop_curve(peak=200_000, knee=12, sharpness=4)
    first = AdaptiveSearch(HUS_VM)
    while (level := first.next_level()) is not None:
        assert first.next_level() == level
        first.record(level, *curve(level))
    assert first.done and first.next_level() is None
    # Resume: the stored points fed back in their order give the same decisions.
    again = AdaptiveSearch(HUS_VM)
    for level in first.tried[:4]:
        again.record(level, *curve(level))
    while (level := again.next_level()) is not None:
        again.record(level, *curve(level))
    assert again.tried == first.tried
    assert again.estimate() == first.estimate()
    assert again.reason == first.reason


def test_max_points_caps_the_series() -> None:
    curve = closed_loop_curve(peak=1e6, knee=5000, sharpness=2)
    out = simulate(curve, HUS_VM, max_points=3)
    assert out.tried == [1, 4, 64]
    assert out.stopped_by == "max_points"
    assert out.reason == "reached the cap of 3 points"


def test_max_points_during_refinement_is_said_in_the_reason() -> None:
    curve = little(lambda n: min(10_000.0 * n, 150_000.0))
    out = simulate(curve, POW2, max_points=4)
    assert len(out.tried) == 4
    assert out.stopped_by in ("flat", "max_points")
    assert "cap of 4 points" in out.reason


def test_failed_points_count_as_falls() -> None:
    def curve(level: int) -> tuple[float, float]:  # fio fails from 8 workers on
        return (1000.0 * level, 100.0) if level < 8 else (0.0, 0.0)

    out = simulate(curve, [1, 2, 4, 8, 16, 32, 64])
    assert out.stopped_by == "flat"
    assert (out.optimal_level, out.max_level) == (4, 4)
    assert {2, 4, 8} <= set(out.tried) and 32 not in out.tried


def test_invalid_uses_are_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        AdaptiveSearch([])
    with pytest.raises(ValueError, match="> 0"):
        AdaptiveSearch([0, 1, 2])
    with pytest.raises(ValueError, match="statistic"):
        AdaptiveSearch([1, 2], bound_stat="p95")
    search = AdaptiveSearch([1, 2, 4])
    with pytest.raises(ValueError, match="no point"):
        search.estimate()
    with pytest.raises(ValueError, match="not on the ladder"):
        search.record(3, 1.0, 1.0)
    search.record(1, 1.0, 1.0)
    with pytest.raises(ValueError, match="already recorded"):
        search.record(1, 1.0, 1.0)


def test_one_level_ladder_and_unsorted_ladder() -> None:
    out = simulate(lambda lv: (10.0, 5.0), [8])
    assert out.tried == [8] and out.stopped_by == "ladder_end"
    search = AdaptiveSearch([16, 1, 4, 4, 2, 8])
    assert search.ladder == [1, 2, 4, 8, 16]
    assert search.next_level() == 1


# ------------------------------------------------------------------ many curves


@pytest.mark.parametrize("ladder", [HUS_VM, HUS_TEMPLATE, POW2, DBI, FINE])
def test_many_clean_curves_exact_mode_matches_the_exhaustive_sweep(ladder: list[int]) -> None:
    rng = random.Random(f"exact:{ladder}")
    for _ in range(150):
        out = simulate(random_curve(rng, ladder), ladder)
        check_ladder_use(out)
        assert out.optimal_level == out.exhaustive_optimal
        # Exact on the peak; only a curve still creeping up above the stop may be short.
        assert 0.0 <= out.max_shortfall_pct <= 1.0
        if out.exhaustive_max_level <= max(out.tried):
            assert out.max_level == out.exhaustive_max_level


@pytest.mark.parametrize("ladder", [HUS_VM, HUS_TEMPLATE, POW2, DBI, FINE])
def test_many_clean_curves_economy_mode_meets_the_targets(ladder: list[int]) -> None:
    rng = random.Random(f"economy:{ladder}")
    for _ in range(150):
        out = simulate(random_curve(rng, ladder), ladder, **ECONOMY)
        check_ladder_use(out)
        assert out.meets(max_pct=3.0, optimal_steps=1)


@pytest.mark.parametrize("ladder", [HUS_VM, POW2, FINE])
def test_noisy_curves_meet_the_targets_at_a_high_rate(ladder: list[int]) -> None:
    """+-2 % noise on both figures; the exhaustive answer from the same measurements."""
    rng = random.Random(f"noisy:{ladder}")
    for mode, floor in (({}, 0.95), (ECONOMY, 0.93)):
        outcomes = [
            simulate(random_curve(rng, ladder, noise_pct=2.0), ladder, **mode) for _ in range(200)
        ]
        rate = statistics.fmean(o.meets() for o in outcomes)
        assert rate >= floor, (mode, rate)


def test_two_noisy_runs_agree_about_as_often_as_two_exhaustive_sweeps() -> None:
    """Adaptive run vs an exhaustive run with other noise, against sweep vs sweep."""
    rng = random.Random("two-runs")
    adaptive_ok = sweeps_ok = 0
    n = 300
    for _ in range(n):
        knee = math.exp(rng.uniform(math.log(1.5), math.log(150)))
        shape = {"peak": 1e5, "knee": knee, "sharpness": rng.choice([1.5, 2.0, 4.0])}
        seed = rng.randrange(1 << 30)
        run_a = closed_loop_curve(**shape, noise_pct=2.0, seed=seed)
        run_b = closed_loop_curve(**shape, noise_pct=2.0, seed=seed + 1)
        adaptive_ok += simulate(run_a, HUS_VM, reference=run_b).meets()
        (oa, ma), (ob, mb) = exhaustive(run_a, HUS_VM), exhaustive(run_b, HUS_VM)
        step = abs(HUS_VM.index(oa) - HUS_VM.index(ob))
        sweeps_ok += step <= 1 and abs(run_a(ma)[0] - run_b(mb)[0]) / run_b(mb)[0] <= 0.03
    assert adaptive_ok / n >= 0.9
    assert adaptive_ok >= sweeps_ok - 0.03 * n


# ------------------------------------------------------------------ how many points


@pytest.mark.parametrize(
    ("ladder", "exact_ceiling", "economy_ceiling"),
    [(HUS_VM, 0.80, 0.62), (POW2, 0.82, 0.66), (FINE, 0.60, 0.47)],
)
def test_clearly_fewer_points_than_the_ladder(
    ladder: list[int], exact_ceiling: float, economy_ceiling: float
) -> None:
    """Mean points tried / ladder length over a family of curves.

    Measured with these seeds: HUS VM [1..192] 0.70 exact, 0.56 economy; [1..256] 0.74,
    0.62; the 19-level ladder 0.50, 0.40.
    """
    for mode, ceiling in (({}, exact_ceiling), (ECONOMY, economy_ceiling)):
        rng = random.Random(f"ratio:{ladder}")
        ratios = [simulate(random_curve(rng, ladder), ladder, **mode).ratio for _ in range(200)]
        assert statistics.fmean(ratios) <= ceiling
        assert max(ratios) <= 1.0


def test_economy_constructor_sets_the_issue_tolerances() -> None:
    search = AdaptiveSearch.economy(HUS_VM, 1000.0, flat_pct=2.0)
    assert (search.knee_steps, search.max_tol_pct, search.flat_pct) == (1, 3.0, 2.0)
    assert search.latency_bound_us == 1000.0


def test_points_without_p99_are_never_proposed_again() -> None:
    search = AdaptiveSearch([1, 2, 4, 8, 16], latency_bound_us=1000.0, bound_stat="p99")
    search.record(1, 100.0, 10.0, lat_p99_us=100.0)
    search.record(2, 190.0, 10.5, lat_p99_us=None)  # no p99 (e.g. an old result)
    search.record(4, 300.0, 13.3, lat_p99_us=5000.0)
    seen = set(search.tried)
    while (level := search.next_level()) is not None:
        assert level not in seen
        seen.add(level)
        search.record(level, 300.0, 13.3 * level / 4, lat_p99_us=5000.0)
    assert bounded_estimate(search) == 1
