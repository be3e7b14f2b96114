"""What a time chart draws of its series, before any drawing: the records a caller passes
(`TimeSeries`, `ChartEvent`), the samples sorted by x and cut into buckets above `max_points`
(each keeping its mean, minimum and maximum: `envelope`), the axis unit (µs to ms), the
logarithmic values of a `log_y` chart, each series' peak and its per-level marks.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from arraybench.report.charts.parts import MS_THRESHOLD_US


@dataclass(frozen=True)
class TimeSeries:
    """One line: `values[i]` belongs to the chart's `x[i]` (None = no sample, breaks the line)."""

    label: str
    values: Sequence[float | None]
    unit: str
    dashed: bool = False
    color: str | None = None  # default: the next colour of the axis' palette
    # per value its 95 % interval over repeats (None: measured once), drawn as a band; only
    # where every sample is its own bucket (a curve of load levels, never a long time series)
    interval: Sequence[tuple[float, float] | None] = ()
    # per value whether its point carries validity flags (its figures may not be the
    # storage's), drawn as a red cross; only where every sample is its own bucket, as above
    flagged: Sequence[bool] = ()
    # per value "optimal", "max", both ("optimal max") or "": the headline points of a curve
    # (analysis.curves), a ring and a triangle in the line's colour; as `flagged`, one each
    marks: Sequence[str] = ()
    # the word before its highest value's mark: one sample is one second's peak, not the
    # maximum a summary names beside it; None: no mark (a band or guide line)
    peak_word: str | None = "1-s peak"


@dataclass(frozen=True)
class ChartEvent:
    """A vertical line with a label at `t_s` seconds. On a `gb_chart` the line sits at `gb`
    when given, else at the GB written by `t_s` (interpolated from the chart's `t_s`)."""

    t_s: float
    label: str
    gb: float | None = None


# ---------------------------------------------------------------- buckets


@dataclass(frozen=True)
class Bucket:
    """Consecutive samples drawn as one: at `x` (the middle of their x range), their mean on
    the line, their exact minimum and maximum on the band."""

    x: float
    mean: float
    lo: float
    hi: float


@dataclass(frozen=True)
class _Prepared:
    label: str
    unit: str
    dashed: bool
    color: str
    cls: str
    buckets: list[Bucket | None]
    peak: tuple[float, float] | None  # (x, value) of the global maximum
    intervals: bool = False  # the buckets' lo and hi are 95 % intervals: draw them as a band
    flagged: tuple[bool, ...] = ()  # per bucket: a red cross on its value
    marks: tuple[str, ...] = ()  # per bucket: "optimal", "max" or both
    peak_word: str | None = "1-s peak"


def _clean(values: Sequence[float | None], order: list[int], div: float) -> list[float | None]:
    out: list[float | None] = []
    for i in order:
        v = values[i] if i < len(values) else None
        out.append(v / div if v is not None and math.isfinite(v) else None)
    return out


def _bounds(n: int, max_points: int) -> list[tuple[int, int]]:
    """Index ranges of the buckets: one per sample, or max_points / 2 equal runs above that."""
    if n <= max_points:
        return [(i, i + 1) for i in range(n)]
    count = max(2, max_points // 2)
    return [(k * n // count, (k + 1) * n // count) for k in range(count)]


def _bucketize(
    xs: list[float], vals: list[float | None], bounds: list[tuple[int, int]]
) -> list[Bucket | None]:
    out: list[Bucket | None] = []
    for a, b in bounds:
        got = [v for v in vals[a:b] if v is not None]
        if not got:
            out.append(None)
            continue
        x = (xs[a] + xs[b - 1]) / 2
        out.append(Bucket(x, sum(got) / len(got), min(got), max(got)))
    return out


def _peak(
    xs: list[float], vals: list[float | None], after: float | None = None
) -> tuple[float, float] | None:
    """The highest value (at x > `after` when given: a shaded warm-up is not the figures')."""
    best: tuple[float, float] | None = None
    for x, v in zip(xs, vals, strict=True):
        if after is not None and x <= after:
            continue
        if v is not None and (best is None or v > best[1]):
            best = (x, v)
    return best


def _range(series: list[_Prepared]) -> tuple[float, float]:
    got = [b for s in series for b in s.buckets if b is not None]
    return min((b.lo for b in got), default=0.0), max((b.hi for b in got), default=0.0)


def _layout(
    x: Sequence[float | None], max_points: int
) -> tuple[list[int], list[float], list[tuple[int, int]]]:
    """The samples a chart keeps (finite x, sorted by x) and its buckets' index ranges."""
    xs_raw = [float(v) if v is not None and math.isfinite(v) else None for v in x]
    order = [i for i, v in sorted(enumerate(xs_raw), key=lambda e: e[1] or 0.0) if v is not None]
    xs = [xs_raw[i] or 0.0 for i in order]
    return order, xs, _bounds(len(xs), max_points)


def envelope(
    x: Sequence[float | None], values: Sequence[float | None], max_points: int = 2000
) -> list[Bucket | None]:
    """What a chart of `max_points` draws of one series: every sample as its own bucket up to
    `max_points` samples; above, `max_points // 2` buckets of consecutive samples, each keeping
    its exact minimum and maximum (the band's lower and upper edges: `max_points` vertices) and
    its mean (the line), so a one-second dip is drawn at its true depth. None: no sample."""
    order, xs, bounds = _layout(x, max(4, max_points))
    return _bucketize(xs, _clean(values, order, 1.0), bounds)


# ---------------------------------------------------------------- units


def _unit_and_div(series: Sequence[TimeSeries]) -> tuple[str, float]:
    """The axis unit; µs switches to ms above 10,000 µs (as in `curve.py`)."""
    units = list(dict.fromkeys(s.unit for s in series))
    if units and all(u in ("µs", "us") for u in units):
        top = max(
            (abs(v) for s in series for v in s.values if v is not None and math.isfinite(v)),
            default=0.0,
        )
        return ("ms", 1000.0) if top > MS_THRESHOLD_US else ("µs", 1.0)
    return " / ".join(units), 1.0


LOG = "log10 "  # unit prefix of a series drawn on a logarithmic axis (values are log10)


def _log_series(series: Sequence[TimeSeries]) -> list[TimeSeries]:
    return [
        replace(s, values=[math.log10(v) if v is not None and v > 0 else None for v in s.values],
                unit=LOG + s.unit)
        for s in series
    ]  # fmt: skip


# ---------------------------------------------------------------- series prepared for drawing


def _prepare(
    specs: Sequence[TimeSeries],
    colors: Sequence[str],
    prefix: str,
    xs: list[float],
    order: list[int],
    bounds: list[tuple[int, int]],
    peak_after: float | None = None,
) -> tuple[list[_Prepared], str]:
    unit, div = _unit_and_div(specs)
    out = []
    for k, s in enumerate(specs):
        vals = _clean(s.values, order, div)
        buckets = _bucketize(xs, vals, bounds)
        intervals = bool(s.interval) and any(s.interval) and len(bounds) == len(xs)
        if intervals:
            buckets = _with_intervals(buckets, [_get(s.interval, i) for i in order], div)
        one_each = len(bounds) == len(xs)
        flagged = tuple(i < len(s.flagged) and s.flagged[i] for i in order) if one_each else ()
        marks = tuple(s.marks[i] if i < len(s.marks) else "" for i in order) if one_each else ()
        out.append(
            _Prepared(
                s.label,
                unit if div > 1 else s.unit,
                s.dashed,
                s.color or colors[k % len(colors)],
                f"{prefix}{k}",
                buckets,
                _peak(xs, vals, peak_after),
                intervals,
                flagged,
                marks,
                s.peak_word,
            )
        )
    return out, unit


def _get(seq: Sequence[tuple[float, float] | None], i: int) -> tuple[float, float] | None:
    return seq[i] if 0 <= i < len(seq) else None


def _with_intervals(
    buckets: list[Bucket | None], cis: list[tuple[float, float] | None], div: float
) -> list[Bucket | None]:
    """One-sample buckets whose band is the sample's 95 % interval (none: the value alone)."""
    out: list[Bucket | None] = []
    for b, ci in zip(buckets, cis, strict=True):
        if b is None or ci is None:
            out.append(b)
        else:
            out.append(Bucket(b.x, b.mean, min(ci[0] / div, b.mean), max(ci[1] / div, b.mean)))
    return out


def _interp(t: float, ts: list[float], xs: list[float]) -> float:
    i = bisect.bisect_left(ts, t)
    if i <= 0:
        return xs[0]
    if i >= len(ts):
        return xs[-1]
    t0, t1, x0, x1 = ts[i - 1], ts[i], xs[i - 1], xs[i]
    return x0 if t1 == t0 else x0 + (x1 - x0) * (t - t0) / (t1 - t0)
