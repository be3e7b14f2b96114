"""Adaptive load ladder: choose a series' next load level from the levels already measured.

A pure decision engine (no fio, no I/O). The caller owns the loop::

    search = AdaptiveSearch([1, 2, 4, 8, 16, 32, 64, 128], latency_bound_us=1000.0)
    while (level := search.next_level()) is not None:
        throughput, lat_mean_us = measure(level)  # one fio point at that level
        search.record(level, throughput, lat_mean_us)
    optimal_level, max_level = search.estimate()

The search only ever proposes levels of the plan's own ladder, so its points are ordinary
points of the exhaustive sweep and "within one ladder step" has a meaning. Its figures are the
definitions of `arraybench.analysis.curves` applied to the points it measured.

More: docs/internals.md, `analysis/adaptive.py`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from arraybench.analysis.curves import CurvePoint, latency_bounded, maximum, optimal_point
from arraybench.analysis.noise import Level, differ, optimal_confidence

StopCause = Literal["flat", "ladder_end", "latency_bound", "max_points"]

_STATS: tuple[str, ...] = ("mean", "p99")


@dataclass(frozen=True)
class _Measure:
    index: int  # position in the ladder
    level: int
    throughput: float
    lat_mean_us: float
    lat_p99_us: float | None
    noise_pct: float | None = None  # 95 % half-width of the throughput, % (None: unknown)

    def as_level(self) -> Level:
        return Level(str(self.level), self.throughput, self.noise_pct)


def _within_noise(a: _Measure, b: _Measure) -> bool:
    """Both levels have a spread and their 95 % intervals overlap."""
    return differ(a.as_level(), b.as_level()) is False


def _gain(before: float, after: float) -> float:
    """Relative throughput gain; a step from nothing to something counts as a big gain."""
    if before <= 0:
        return math.inf if after > 0 else 0.0
    return (after - before) / before


def _latency_rose(a: _Measure, b: _Measure) -> bool:
    """Mean latency went up from a to b; an unknown latency (<= 0) does not block the stop."""
    if a.lat_mean_us <= 0 or b.lat_mean_us <= 0:
        return True
    return b.lat_mean_us > a.lat_mean_us


def _health(a: _Measure, b: _Measure) -> float:
    """(ln throughput ratio - ln latency ratio) / ln level ratio of the step a -> b.

    Positive exactly when curves.py's pair test passes with a rising latency; about 1 when
    throughput scales linearly with load at constant latency; 0 when a closed loop
    (Little's law) gains the square root of the load ratio; -1 when flat.
    """
    if min(a.throughput, b.throughput, a.lat_mean_us, b.lat_mean_us) <= 0 or b.level <= a.level:
        return 0.0
    rise = math.log(b.throughput / a.throughput) - math.log(b.lat_mean_us / a.lat_mean_us)
    return rise / math.log(b.level / a.level)


class AdaptiveSearch:
    """Chooses the load levels of one series; see the module documentation.

    ladder: the plan's levels for this series (ints > 0, e.g. workers, or outstanding I/Os
        when iodepth varies; any increasing ints keep the order, e.g. positions 1..n).
    latency_bound_us: the plan's latency bound, None for none.
    flat_pct: a measured step whose throughput gains less than this (%) is flat (a step
        below a doubling of the level: less than flat_pct x log2 of the level ratio).
    max_points: safety cap on the number of points (default: the ladder's length).
    bound_stat: "mean" or "p99", the statistic compared with the bound.
    stop_at_bound: end the scan at the first level over the bound (the maximum is then the
        maximum below the bound, not the exhaustive sweep's).
    knee_steps: accepted distance (ladder steps) of the optimal point: 0 exact, 1 economy.
    max_tol_pct: accepted shortfall (%) of the maximum: 0 exact, e.g. 3 economy.
    max_stride: the largest jump (ladder positions) of the scan.
    jump_health: a scan step at least this healthy (see `_health`) doubles the stride.
    first_stride: the first jump (ladder positions) after the lowest level.

    `AdaptiveSearch.economy(...)` sets the issue's tolerances (knee_steps=1, max_tol_pct=3).
    """

    def __init__(
        self,
        ladder: Sequence[int],
        latency_bound_us: float | None = None,
        flat_pct: float = 3.0,
        max_points: int | None = None,
        *,
        bound_stat: str = "mean",
        stop_at_bound: bool = False,
        knee_steps: int = 0,
        max_tol_pct: float = 0.0,
        max_stride: int = 4,
        jump_health: float = 0.7,
        first_stride: int = 2,
    ) -> None:
        levels = sorted(set(ladder))
        if not levels:
            raise ValueError("adaptive search: the ladder is empty")
        if levels[0] <= 0:
            raise ValueError(f"adaptive search: ladder levels must be > 0, not {levels[0]}")
        if bound_stat not in _STATS:
            raise ValueError(f"latency statistic must be one of {_STATS}, not {bound_stat!r}")
        if flat_pct < 0 or max_tol_pct < 0 or knee_steps < 0:
            raise ValueError("adaptive search: flat_pct, max_tol_pct, knee_steps must be >= 0")
        if max_stride < 1:
            raise ValueError("adaptive search: max_stride must be >= 1")
        self.ladder: list[int] = levels
        self.latency_bound_us = latency_bound_us
        self.bound_stat = bound_stat
        self.flat_pct = flat_pct
        self.max_points = len(levels) if max_points is None else max(1, max_points)
        self.stop_at_bound = stop_at_bound
        self.knee_steps = knee_steps
        self.max_tol_pct = max_tol_pct
        self.max_stride = max_stride
        self.jump_health = jump_health
        self.tried: list[int] = []  # levels in the order they were recorded
        self.reason: str = ""  # why the scan stopped ("" while it runs)
        self.noise_notes: list[str] = []  # gaps left unrefined: their ends are within noise
        self.stopped_by: StopCause | None = None
        self._position = {level: i for i, level in enumerate(levels)}
        self._measured: dict[int, _Measure] = {}  # ladder position -> measure
        self._stride = max(1, min(first_stride, max_stride))
        self._base_stride = min(2, max_stride)
        self._scanning = True
        self._done = False

    @classmethod
    def economy(
        cls, ladder: Sequence[int], latency_bound_us: float | None = None, **kw: Any
    ) -> AdaptiveSearch:
        """Fewer points for the issue's targets: optimal within one step, maximum within 3 %."""
        return cls(ladder, latency_bound_us, knee_steps=1, max_tol_pct=3.0, **kw)

    # ----------------------------------------------------------------- the loop

    def next_level(self) -> int | None:
        """The next level to measure, or None when the series is complete.

        Asking again before recording gives the same level.
        """
        if self._done:
            return None
        if not self._measured:
            return self.ladder[0]
        if len(self._measured) >= self.max_points:
            if self._scanning and max(self._measured) == len(self.ladder) - 1:
                self._stop("ladder_end", f"reached the top of the ladder ({self.ladder[-1]})")
            elif self._scanning:
                self._stop("max_points", f"reached the cap of {self.max_points} points")
            elif self._refine_next(final=True) is not None:
                self.reason += f"; refinement cut at the cap of {self.max_points} points"
            self._scanning = False
            self._done = True
            return None
        # Brackets already closed below the top are refined first: their points may end the
        # series (the stop rule looks at the top three measured levels, whoever chose them).
        position = self._refine_next(final=not self._scanning)
        if position is None and self._scanning:
            position = self._scan_next()
            if position is None:
                self._scanning = False
                position = self._refine_next(final=True)
        if position is None:
            self._done = True
            return None
        return self.ladder[position]

    def record(
        self,
        level: int,
        throughput: float,
        latency_us: float,
        lat_p99_us: float | None = None,
        noise_pct: float | None = None,
    ) -> None:
        """One measured point: throughput (IOPS or MB/s), mean latency (µs), optional p99,
        optional 95 % half-width of the throughput in % (its noise; see the module doc).

        A failed point can be recorded with throughput 0 (it counts as a fall). Any ladder
        level may be recorded, proposed or not (e.g. points already stored when resuming).
        """
        if level not in self._position:
            raise ValueError(f"adaptive search: level {level} is not on the ladder {self.ladder}")
        position = self._position[level]
        if position in self._measured:
            raise ValueError(f"adaptive search: level {level} was already recorded")
        self._measured[position] = _Measure(
            position, level, float(throughput), float(latency_us), lat_p99_us, noise_pct
        )
        self.tried.append(level)
        if position == max(self._measured):
            self._update_stride()

    # ----------------------------------------------------------------- results

    @property
    def done(self) -> bool:
        return self._done

    def points(self) -> list[CurvePoint]:
        """The measured points as curves.py points, by level."""
        return [
            CurvePoint(
                level=float(m.level),
                throughput=m.throughput,
                lat_mean_us=m.lat_mean_us,
                lat_p99_us=m.lat_p99_us,
                key=str(m.level),
            )
            for _, m in sorted(self._measured.items())
        ]

    def estimate(self) -> tuple[int, int]:
        """(optimal level, maximum level) by curves.py on the measured points."""
        pts = self.points()
        best = optimal_point(pts)
        top = maximum(pts)
        if best is None or top is None:
            raise ValueError("adaptive search: no point recorded yet")
        return int(best.level), int(top.level)

    def confidence(self, names: Mapping[int, str] | None = None) -> str:
        """How sure the optimal level is: `optimal 8; 16 is within noise of it`; "" when the
        levels were recorded without a spread. `names`: level -> the name to say."""
        best = optimal_point(self.points())
        if best is None:
            return ""
        said = names or {}
        levels = [Level(said.get(m.level, str(m.level)), m.throughput, m.noise_pct)
                  for _, m in sorted(self._measured.items())]  # fmt: skip
        return optimal_confidence(levels, said.get(int(best.level), str(int(best.level))))

    @property
    def explanation(self) -> str:
        """Why the scan stopped, and which gaps were left unrefined for noise."""
        return "; ".join([self.reason, *self.noise_notes]) if self.noise_notes else self.reason

    # ----------------------------------------------------------------- scan phase

    def _stop(self, cause: StopCause, text: str) -> None:
        self.stopped_by = cause
        self.reason = text

    def _scan_next(self) -> int | None:
        last = len(self.ladder) - 1
        ordered = [self._measured[i] for i in sorted(self._measured)]
        top = ordered[-1]
        if len(ordered) >= 3:
            a, b, c = ordered[-3:]
            if self._flat(a, b) and self._flat(b, c):
                noisy = " or within noise" if _within_noise(a, b) or _within_noise(b, c) else ""
                self._stop(
                    "flat",
                    f"throughput gained less than {self.flat_pct:g} %{noisy} (or fell) on two "
                    f"steps, {a.level} -> {b.level} -> {c.level}, while latency rose",
                )
                return None
        if self.stop_at_bound and self._over_bound(top):
            self._stop("latency_bound", f"latency over the bound at level {top.level}")
            return None
        if top.index >= last:
            self._stop("ladder_end", f"reached the top of the ladder ({self.ladder[last]})")
            return None
        return min(top.index + self._stride, last)

    def _flat(self, a: _Measure, b: _Measure) -> bool:
        """Step a -> b gained less than flat_pct (or fell) while latency rose.

        Steps under a doubling of the level get a proportionally smaller allowance
        (flat_pct x log2 of the level ratio), so fine ladders (20 -> 24) do not end early.
        """
        allowance = self.flat_pct / 100 * min(1.0, math.log2(b.level / a.level))
        gained = _gain(a.throughput, b.throughput) >= allowance and not _within_noise(a, b)
        return not gained and _latency_rose(a, b)

    def _update_stride(self) -> None:
        """After a new top level: jump further while the top step scaled near-linearly."""
        top = sorted(self._measured)[-2:]
        if len(top) < 2:
            return
        a, b = (self._measured[i] for i in top)
        if _health(a, b) >= self.jump_health:
            self._stride = min(self._stride * 2, self.max_stride)
        else:
            self._stride = self._base_stride

    def _stat(self, m: _Measure) -> float | None:
        return m.lat_mean_us if self.bound_stat == "mean" else m.lat_p99_us

    def _over_bound(self, m: _Measure) -> bool:
        value = self._stat(m)
        return (
            self.latency_bound_us is not None
            and value is not None
            and value > (self.latency_bound_us)
        )

    # ----------------------------------------------------------------- refine phase

    def _refine_next(self, final: bool) -> int | None:
        """The next level to close a bracket around a figure, or None.

        While scanning (`final` False) only brackets that the scan has passed are refined:
        the optimal point and the maximum when they are below the top measured level.
        """
        measured = sorted(self._measured)
        if len(measured) < 2:
            return None
        top_position = measured[-1]
        pts = self.points()
        wanted: list[int] = []
        best = optimal_point(pts)
        if best is not None:
            position = self._position[int(best.level)]
            if final or position < top_position:
                wanted += self._close_gaps(measured, position, self.knee_steps + 1)
        peak = maximum(pts)
        if peak is not None:
            position = self._position[int(peak.level)]
            if final or position < top_position:
                wanted += self._max_gaps(measured, position)
        if self.latency_bound_us is not None:
            wanted += self._bound_gaps(measured)
        wanted = [w for w in wanted if w not in self._measured]  # e.g. a point without p99
        return wanted[0] if wanted else None

    @staticmethod
    def _neighbours(measured: list[int], position: int) -> tuple[int | None, int | None]:
        at = measured.index(position)
        before = measured[at - 1] if at > 0 else None
        after = measured[at + 1] if at + 1 < len(measured) else None
        return before, after

    def _close_gaps(self, measured: list[int], position: int, widest: int) -> list[int]:
        """Midpoints (rounded towards `position`) of the gaps around it wider than `widest`.

        The gap above first: a point there can move the estimate up (a passing step extends
        the healthy range), which often makes the gap below irrelevant.
        """
        before, after = self._neighbours(measured, position)
        out: list[int] = []
        if after is not None and after - position > widest and self._apart(position, after):
            out.append((position + after) // 2)
        if before is not None and position - before > widest and self._apart(before, position):
            out.append((before + position + 1) // 2)
        return out

    def _apart(self, low: int, high: int) -> bool:
        """Whether the gap between two measured positions is worth refining: not when their
        levels are within noise of each other (noted once, for the reason)."""
        a, b = self._measured[low], self._measured[high]
        if not _within_noise(a, b):
            return True
        note = (f"{a.level} and {b.level} are within noise of each other (95 % intervals "
                "overlap): not refined between them")  # fmt: skip
        if note not in self.noise_notes:
            self.noise_notes.append(note)
        return False

    def _max_gaps(self, measured: list[int], position: int) -> list[int]:
        if self.max_tol_pct <= 0:
            return self._close_gaps(measured, position, 1)
        before, after = self._neighbours(measured, position)
        tol = self.max_tol_pct / 100
        peak = self._measured[position]
        x = [float(level) for level in self.ladder]
        out: list[int] = []
        if before is not None and position - before > 1 and self._apart(before, position):
            # Concave throughput: left of the peak it stays under the chord peak->after,
            # extended; at the top of the scan (no point after), under the chord of the
            # step before the gap, extended (no such step: the gap is refined).
            if after is None:
                excess = self._top_excess(measured, before, position)
            else:
                drop = (peak.throughput - self._measured[after].throughput) / peak.throughput
                excess = drop * (x[position] - x[before + 1]) / (x[after] - x[position])
            if excess > tol:
                out.append((before + position + 1) // 2)
        if after is not None and after - position > 1 and self._apart(position, after):
            if before is None:
                excess = math.inf
            else:
                rise = (peak.throughput - self._measured[before].throughput) / peak.throughput
                excess = rise * (x[after - 1] - x[position]) / (x[position] - x[before])
            if excess > tol:
                out.append((position + after) // 2)
        return out

    def _top_excess(self, measured: list[int], before: int, position: int) -> float:
        """What a level inside (before, position) could add over the top level, relative."""
        at = measured.index(before)
        if at == 0:
            return math.inf
        x = [float(level) for level in self.ladder]
        earlier, low, peak = (self._measured[i] for i in (measured[at - 1], before, position))
        slope = max(0.0, (low.throughput - earlier.throughput) / (x[before] - x[earlier.index]))
        reach = low.throughput + slope * (x[position - 1] - x[before])
        return (reach - peak.throughput) / peak.throughput

    def _bound_gaps(self, measured: list[int]) -> list[int]:
        """The last level within the bound and the first over it must be neighbours."""
        bound = self.latency_bound_us
        out: list[int] = []
        known = [(i, self._stat(self._measured[i])) for i in measured]
        within = [i for i, v in known if v is not None and bound is not None and v <= bound]
        if not within:
            return out
        last_in = within[-1]
        over = [i for i, v in known if i > last_in and v is not None]
        if not over:  # the bound has not been crossed (yet)
            return out
        if over[0] - last_in > 1:
            out.append((last_in + over[0]) // 2)
        pts = [p for p in self.points() if p.level <= self.ladder[last_in]]
        found = latency_bounded(pts, bound or 0.0, self.bound_stat)
        if found is not None:
            position = self._position[int(found.level)]
            before, _ = self._neighbours(measured, position)
            if before is not None and position - before > 1:
                out.append((before + position + 1) // 2)
        return out
