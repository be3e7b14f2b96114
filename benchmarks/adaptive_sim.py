"""The adaptive search (arraybench.analysis.adaptive) run against synthetic curves, beside
the exhaustive answer: what tests/unit/test_adaptive.py checks the search with and what
benchmarks/adaptive_simulated.py measures. Not part of arraybench: nothing of a run calls it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from arraybench.analysis.adaptive import AdaptiveSearch, StopCause
from arraybench.analysis.curves import CurvePoint, latency_bounded, maximum, optimal_point


def bounded_estimate(search: AdaptiveSearch) -> int | None:
    """The latency-bounded level by curves.py on the measured points (None: none/no bound)."""
    if search.latency_bound_us is None:
        return None
    found = latency_bounded(search.points(), search.latency_bound_us, search.bound_stat)
    return None if found is None else int(found.level)


def _shortfall_pct(reference: float | None, found: float | None) -> float:
    """How far (%) `found` is below `reference` (< 0: above); 0 when both are missing."""
    if reference is None or found is None:
        return 0.0 if reference is found else math.inf
    return 0.0 if reference <= 0 else (reference - found) / reference * 100


@dataclass(frozen=True)
class AdaptiveOutcome:
    """An adaptive search run against a known curve, beside the exhaustive answer."""

    ladder: list[int]
    tried: list[int]  # in measurement order
    reason: str
    stopped_by: StopCause | None
    optimal_level: int
    max_level: int
    max_throughput: float
    exhaustive_optimal: int
    exhaustive_max_level: int
    exhaustive_max_throughput: float
    bounded_level: int | None = None  # latency-bounded point, with a bound
    bounded_throughput: float | None = None
    exhaustive_bounded_level: int | None = None
    exhaustive_bounded_throughput: float | None = None

    @property
    def ratio(self) -> float:
        """Points tried / ladder length."""
        return len(self.tried) / len(self.ladder)

    @property
    def max_shortfall_pct(self) -> float:
        """How far (%) the adaptive maximum is below the exhaustive one (< 0: above)."""
        return _shortfall_pct(self.exhaustive_max_throughput, self.max_throughput)

    @property
    def optimal_steps_off(self) -> int:
        """Ladder steps between the adaptive and the exhaustive optimal point."""
        where = {level: i for i, level in enumerate(self.ladder)}
        return abs(where[self.optimal_level] - where[self.exhaustive_optimal])

    def meets(self, max_pct: float = 3.0, optimal_steps: int = 1) -> bool:
        """The issue's targets: maximum within max_pct %, optimal within optimal_steps."""
        return abs(self.max_shortfall_pct) <= max_pct and self.optimal_steps_off <= optimal_steps


def simulate(
    curve: Callable[[int], tuple[float, float]],
    ladder: Sequence[int],
    reference: Callable[[int], tuple[float, float]] | None = None,
    *,
    spread_pct: float | None = None,
    **kw: Any,
) -> AdaptiveOutcome:
    """Run an AdaptiveSearch against `curve` (level -> (throughput, mean latency µs)).

    The exhaustive answer is curves.py on every ladder level of `reference` (default: the
    same curve, read once per level, so both see the same measurements; pass a second noisy
    draw to model two separate runs). `kw` goes to AdaptiveSearch; a latency bound is
    compared with the mean latency (the curve gives no p99). `spread_pct`: every level's
    throughput recorded with this 95 % half-width (its noise), in %.
    """
    search = AdaptiveSearch(ladder, **kw)
    measured: dict[int, tuple[float, float]] = {}

    def read(level: int) -> tuple[float, float]:
        if level not in measured:
            measured[level] = curve(level)
        return measured[level]

    while (level := search.next_level()) is not None:
        search.record(level, *read(level), noise_pct=spread_pct)
    full = reference or read
    everything = [
        CurvePoint(level=float(lv), throughput=t, lat_mean_us=lat, lat_p99_us=None)
        for lv in search.ladder
        for t, lat in [full(lv)]
    ]
    best, top = optimal_point(everything), maximum(everything)
    assert best is not None and top is not None  # the ladder is never empty
    optimal_level, max_level = search.estimate()
    found = ref_found = None
    if search.latency_bound_us is not None:
        found = latency_bounded(search.points(), search.latency_bound_us, "mean")
        ref_found = latency_bounded(everything, search.latency_bound_us, "mean")
    return AdaptiveOutcome(
        ladder=list(search.ladder),
        tried=list(search.tried),
        reason=search.reason,
        stopped_by=search.stopped_by,
        optimal_level=optimal_level,
        max_level=max_level,
        max_throughput=read(max_level)[0],
        exhaustive_optimal=int(best.level),
        exhaustive_max_level=int(top.level),
        exhaustive_max_throughput=top.throughput,
        bounded_level=None if found is None else int(found.level),
        bounded_throughput=None if found is None else found.throughput,
        exhaustive_bounded_level=None if ref_found is None else int(ref_found.level),
        exhaustive_bounded_throughput=None if ref_found is None else ref_found.throughput,
    )


def closed_loop_curve(
    peak: float,
    knee: float,
    sharpness: float = 2.0,
    decline_at: float | None = None,
    decline_power: float = 1.0,
    noise_pct: float = 0.0,
    seed: int = 0,
) -> Callable[[int], tuple[float, float]]:
    """A synthetic storage curve, level -> (throughput, mean latency µs), for `simulate`.

    The level is the number of outstanding I/Os N. Throughput rises linearly, bends around
    `knee` (sharper for a larger `sharpness`) towards `peak`:
    T = peak * N / (N^s + knee^s)^(1/s), divided by 1 + (N / decline_at)^decline_power when
    it falls again past saturation. Latency follows Little's law, N / T. `noise_pct` adds a
    deterministic uniform +-noise to each figure, drawn from (seed, level): the same level
    always gives the same values, another seed another run.
    """

    def curve(level: int) -> tuple[float, float]:
        n = float(level)
        t = peak * n / (n**sharpness + knee**sharpness) ** (1 / sharpness)
        if decline_at is not None:
            t /= 1 + (n / decline_at) ** decline_power
        latency_us = n / t * 1e6
        if noise_pct:
            draw = random.Random(f"{seed}:{level}")
            t *= 1 + draw.uniform(-noise_pct, noise_pct) / 100
            latency_us *= 1 + draw.uniform(-noise_pct, noise_pct) / 100
        return t, latency_us

    return curve
