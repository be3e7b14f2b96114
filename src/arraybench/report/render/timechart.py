"""Charts against time and against data written, as inline SVG in the style of `svg.py`.

`time_chart` draws what AERODISK and the HUS VM write-cliff test show: IOPS or MB/s on the left
axis and latency (or controller CPU) on the right, against seconds since the start, with
vertical event lines ("controller B pulled", "cliff at 3 s"). `gb_chart` draws the SNIA write
saturation view: the same series against cumulative GB written. Both are one renderer
(`xy_chart`) with a different x axis.

Long runs are downsampled: above `max_points` samples the series are cut into
`max_points / 2` buckets of consecutive samples (the same buckets for every series); each
bucket contributes its mean to the line and its minimum and maximum to a light band around it,
so a 5-hour run at 1 s (18,000 samples) or a 10-hour run (36,000) stays a few tens of KB and a
one-second spike or dip is still drawn at its true height. Each series' global maximum is marked
and labelled. Missing values (None, NaN) break the line instead of being bridged.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from html import escape

from arraybench.report.render.interact import clip_id, hover_rect
from arraybench.report.render.svg import (
    C_AXIS,
    C_GRID,
    C_LAT,
    C_TEXT,
    C_TPUT,
    FONT,
    HEADROOM,
    MS_THRESHOLD_US,
    Box,
    Sample,
    _circle,
    _cross,
    _empty,
    _f,
    _halo_label,
    _hline,
    _label_box,
    _overlaps,
    _polygon,
    _polyline,
    _segments,
    _text,
    _text_width,
    _trim,
    _vline,
    compact,
    legend_header,
    nice_step,
    nice_ticks,
    runs,
    ticks_with_count,
)
from arraybench.units import format_quantity, format_tick, significant

LEFT_COLORS = (C_TPUT, "#0f8a6c", "#5b2a86", "#4b5563")
RIGHT_COLORS = (C_LAT, "#8c564b", "#b8860b", "#6b7280")
C_EVENT = "#b42318"
BAND_OPACITY = "0.2"
LATENCY_UNITS = ("µs", "us", "ms")
THROUGHPUT_UNITS = ("IOPS", "kIOPS", "MB/s", "MiB/s", "GB/s", "KiB/s")

# steps for a time axis, in seconds: round numbers of seconds, minutes and hours
_TIME_STEPS = (
    *(1, 2, 5, 10, 15, 20, 30),
    *(60 * m for m in (1, 2, 5, 10, 15, 20, 30)),
    *(3600 * h for h in (1, 2, 3, 4, 6, 12, 24, 48)),
)


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


# ---------------------------------------------------------------- x axes


@dataclass(frozen=True)
class XAxis:
    """Ticks (in x units), their labels and the axis title for a range of x values."""

    ticks: list[float]
    labels: list[str]
    title: str


XAxisFormatter = Callable[[float, float, int, str], XAxis]


def _ticks_between(lo: float, hi: float, step: float) -> list[float]:
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    return [k * step for k in range(first, last + 1)]


def _retitle(title: str, old: str, new: str) -> str:
    suffix = f"({old})"
    return title[: -len(suffix)] + f"({new})" if title.endswith(suffix) else title


def time_axis(lo: float, hi: float, target: int, title: str) -> XAxis:
    """Seconds, shown in s, min or h by the size of the step; a title ending in "(s)" follows."""
    span = max(hi - lo, 1e-9)
    step = next((float(s) for s in _TIME_STEPS if span / s <= target), None)
    if step is None:
        step = 86400 * nice_step(span / 86400 / target)
    unit, div = ("s", 1.0) if step < 60 else ("min", 60.0) if step < 3600 else ("h", 3600.0)
    ticks = _ticks_between(lo, hi, step)
    return XAxis(ticks, [_trim(t / div, 2) for t in ticks], _retitle(title, "s", unit))


def linear_axis(lo: float, hi: float, target: int, title: str) -> XAxis:
    """Nice 1 / 2 / 2.5 / 5 steps; GB switch to TB from 10,000 GB when the title ends in "(GB)"."""
    div = 1000.0 if hi >= 10_000 and title.endswith("(GB)") else 1.0
    step = nice_step(max(hi - lo, 1e-9) / div / target) * div
    ticks = _ticks_between(lo, hi, step)
    labels = [compact(t / div) for t in ticks]
    return XAxis(ticks, labels, _retitle(title, "GB", "TB") if div > 1 else title)


# ---------------------------------------------------------------- data preparation


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


def _unit_and_div(series: Sequence[TimeSeries]) -> tuple[str, float]:
    """The axis unit; µs switches to ms above 10,000 µs (as in `svg.py`)."""
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


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Whole decades around the data: 10, 100, 1,000 ... µs."""
    first, last = math.floor(lo), math.ceil(hi)
    return [float(k) for k in range(first, max(last, first + 1) + 1)]


def _axis_title(unit: str) -> str:
    if unit.startswith(LOG):
        return _axis_title(unit.removeprefix(LOG))[:-1] + ", log scale)"
    if unit in LATENCY_UNITS:
        return f"latency ({unit})"
    if unit in THROUGHPUT_UNITS:
        return f"throughput ({unit})"
    return unit


def _fmt_value(v: float, unit: str) -> str:
    if unit.startswith(LOG):
        return format_quantity(10**v, unit.removeprefix(LOG))
    return format_quantity(v, unit)


def _tick_label(v: float, unit: str) -> str:
    if unit.startswith(LOG):
        return format_tick(10**v, unit.removeprefix(LOG))
    return format_tick(v, unit)


# ---------------------------------------------------------------- geometry


@dataclass(frozen=True)
class _Plot:
    left: float
    top: float
    right: float
    bottom: float
    x_lo: float
    x_hi: float
    y1: tuple[float, float]  # axis range (lo, top) of the left axis
    y2: tuple[float, float]

    def x(self, v: float) -> float:
        return self.left + (self.right - self.left) * (v - self.x_lo) / (self.x_hi - self.x_lo)

    def y(self, v: float, side: int) -> float:
        lo, top = self.y1 if side == 0 else self.y2
        return self.bottom - (self.bottom - self.top) * (v - lo) / (top - lo)

    def inside(self, box: Box) -> bool:
        x0, y0, x1, y1 = box
        horizontal = self.left + 2 <= x0 and x1 <= self.right - 2
        return horizontal and self.top + 1 <= y0 and y1 <= self.bottom - 2


def _y_ticks(lo: float, hi: float, count: int | None = None) -> list[float]:
    """0-based nice ticks (svg.py's), or ticks spanning a negative minimum."""
    top = hi * HEADROOM if hi > 0 else 0.0
    if lo >= 0:
        return ticks_with_count(top, count) if count else nice_ticks(top)
    step = nice_step((top - lo) / (count or 5))
    first, last = math.floor(lo / step), max(math.ceil(top / step), math.floor(lo / step) + 1)
    return [k * step for k in range(first, last + 1)]


def _range(series: list[_Prepared]) -> tuple[float, float]:
    got = [b for s in series for b in s.buckets if b is not None]
    return min((b.lo for b in got), default=0.0), max((b.hi for b in got), default=0.0)


# ---------------------------------------------------------------- drawing


def _draw_series(p: _Plot, s: _Prepared, side: int, banded: bool) -> list[str]:
    out: list[str] = []
    dash = ' stroke-dasharray="6 4"' if s.dashed else ""
    if banded or s.intervals:
        for run in runs(s.buckets):
            upper = [(p.x(b.x), p.y(b.hi, side)) for b in run]
            lower = [(p.x(b.x), p.y(b.lo, side)) for b in reversed(run)]
            if len(run) == 1:  # a lone bucket: a short vertical stroke shows its range
                upper.append((upper[0][0] + 0.8, upper[0][1]))
                lower.insert(0, (lower[0][0] + 0.8, lower[0][1]))
            extra = (
                f' class="band {s.cls}" fill-opacity="{BAND_OPACITY}" stroke="{s.color}" '
                'stroke-opacity="0.35" stroke-width="0.6" stroke-linejoin="round"'
            )
            out.append(_polygon(upper + lower, s.color, extra))
    pts = [None if b is None else (p.x(b.x), p.y(b.mean, side)) for b in s.buckets]
    for seg in _segments(pts):
        if len(seg) == 1:
            out.append(_circle(seg[0][0], seg[0][1], 2.2, s.color, s.color, 1, f"dot {s.cls}"))
        else:
            out.append(_polyline(seg, s.color, 1.5, f"line {s.cls}", dash))
    for b, flagged in zip(s.buckets, s.flagged, strict=False):
        if flagged and b is not None:
            out.append(_cross(p.x(b.x), p.y(b.mean, side), 5.0, "mark-flagged"))
    return out


def _marks(p: _Plot, s: _Prepared, side: int) -> list[str]:
    """Outside the plot's clip: a ring on the last level is not cut in half."""
    out: list[str] = []
    for b, mark in zip(s.buckets, s.marks, strict=False):
        if mark and b is not None:
            out += _headline_marks(p.x(b.x), p.y(b.mean, side), mark, s.color)
    return out


def _headline_marks(x: float, y: float, mark: str, color: str) -> list[str]:
    """The optimal point ringed, the maximum a triangle above it, in the line's colour."""
    out = []
    if "optimal" in mark:
        out.append(_circle(x, y, 6.5, "none", color, 2.2, "mark-optimal"))
    if "max" in mark:
        out.append(_polygon([(x, y - 9), (x - 5, y - 17), (x + 5, y - 17)], color,
                            ' class="mark-max"'))  # fmt: skip
    return out


@dataclass
class _Taken:
    boxes: list[Box]

    def free(self, box: Box) -> bool:
        return not any(_overlaps(box, t) for t in self.boxes)


def _events(
    p: _Plot, events: list[tuple[float, str]], taken: _Taken, color: str = C_EVENT
) -> tuple[list[str], list[str]]:
    """(dashed lines drawn under the series, labels drawn over them)."""
    lines, labels = [], []
    size = 10.5
    xs = sorted(p.x(x_val) for x_val, _ in events)
    for x_val, label in sorted(events, key=lambda e: e[0]):
        x = p.x(x_val)
        lines.append(
            _vline(
                x,
                p.top,
                p.bottom,
                color,
                ' class="event" stroke-width="1.3" stroke-dasharray="5 3" stroke-opacity="0.85"',
            )
        )
        w = _text_width(label, size)
        # right of the line unless that leaves the plot or crosses another event's line
        sides = [("start", x + 4), ("end", x - 4)]
        boxes = [_label_box(lx, p.top + 13, w, size, a) for a, lx in sides]
        fits = [k for k in (0, 1) if p.inside(boxes[k])] or [0 if x < p.right - w else 1]
        clear = [k for k in fits if not any(boxes[k][0] < o < boxes[k][2] for o in xs)]
        anchor, lx = sides[(clear or fits)[0]]
        row_y = p.top + 13
        box = _label_box(lx, row_y, w, size, anchor)
        for _ in range(12):
            box = _label_box(lx, row_y, w, size, anchor)
            if taken.free(box):
                break
            row_y += size + 4
        taken.boxes.append(box)
        labels.append(_halo_label((lx, row_y, anchor), label, color, "label-event", size))
    return lines, labels


def _shade(
    p: _Plot, shade: tuple[float, float, str] | None, taken: _Taken
) -> tuple[list[str], list[str]]:
    """(a grey span under the series, its label at the span's top left): a logged warm-up."""
    if shade is None:
        return [], []
    x0, x1 = max(p.x(shade[0]), p.left), min(p.x(shade[1]), p.right)
    if x1 - x0 < 1:
        return [], []
    rect = (f'<rect class="shade" x="{_f(x0)}" y="{_f(p.top)}" width="{_f(x1 - x0)}" '
            f'height="{_f(p.bottom - p.top)}" fill="{C_AXIS}" fill-opacity="0.13"/>')  # fmt: skip
    size = 10.5
    box = _label_box(x0 + 4, p.bottom - 6, _text_width(shade[2], size), size, "start")
    taken.boxes.append(box)
    label = _halo_label((x0 + 4, p.bottom - 6, "start"), shade[2], C_TEXT, "label-shade", size)
    return [rect], [label]


def _peak_mark(p: _Plot, s: _Prepared, side: int, taken: _Taken) -> list[str]:
    if s.peak is None or s.peak_word is None:
        return []
    x, y = p.x(s.peak[0]), p.y(s.peak[1], side)
    text = f"{s.peak_word} {_fmt_value(s.peak[1], s.unit)}"
    size = 10.5
    w = _text_width(text, size)
    cands = [
        (x, y - 12, "middle"),
        (x + 6, y - 10, "start"),
        (x - 6, y - 10, "end"),
        (x + 8, y + 4, "start"),
        (x - 8, y + 4, "end"),
        (x, y + 18, "middle"),
        (x, y - 26, "middle"),
        (x + 6, y - 24, "start"),
        (x - 6, y - 24, "end"),
    ]
    boxes = [_label_box(cx, cy, w, size, a) for cx, cy, a in cands]
    fits = [i for i, b in enumerate(boxes) if p.inside(b)] or list(range(len(cands)))
    best = next((i for i in fits if taken.free(boxes[i])), fits[0])
    taken.boxes.append(boxes[best])
    return [
        _circle(x, y, 3, "#fff", s.color, 1.6, f"mark-max {s.cls}"),
        _halo_label(cands[best], text, s.color, f"label-max {s.cls}", size),
    ]


def _y_axis(p: _Plot, ticks: list[float], unit: str, side: int) -> list[str]:
    out = []
    for t in ticks:
        y = p.y(t, side)
        if side == 0:
            out.append(_hline(p.left, p.right, y, C_GRID))
            out.append(
                _text(
                    p.left - 7, y + 4, _tick_label(t, unit), size=10.5, anchor="end", cls="tick-y1"
                )
            )
        else:
            out.append(_hline(p.right, p.right + 4, y, C_AXIS))
            out.append(_text(p.right + 7, y + 4, _tick_label(t, unit), size=10.5, cls="tick-y2"))
    out.append(_vline(p.left if side == 0 else p.right, p.top, p.bottom, C_AXIS))
    return out


def _tick_div(axis: XAxis) -> float:
    """The factor between x values and their labels: 60 for a time axis in min, 1000 in TB."""
    for t, label in zip(axis.ticks, axis.labels, strict=True):
        try:
            shown = float(label.replace(",", ""))
        except ValueError:
            return 1.0
        if t and shown:
            return t / shown
    return 1.0


def _x_axis(p: _Plot, axis: XAxis) -> list[str]:
    out = []
    last_end = -math.inf
    for t, s in zip(axis.ticks, axis.labels, strict=True):
        x = p.x(t)
        if p.left + 1 < x < p.right - 1:
            out.append(_vline(x, p.top, p.bottom, C_GRID, ' stroke-opacity="0.6"'))
        out.append(_vline(x, p.bottom, p.bottom + 4, C_AXIS))
        w = _text_width(s, 10.5)
        if x - w / 2 > last_end + 6:
            value = f"{t / _tick_div(axis):.6g}"  # what the label says, for the zoom's relabel
            out.append(_text(x, p.bottom + 16, s, size=10.5, anchor="middle", cls="tick-x",
                             data_v=value, data_label=s))  # fmt: skip
            last_end = x + w / 2
    out.append(_hline(p.left, p.right, p.bottom, C_AXIS))
    return out


def _legend_sample(kind: str, color: str, dashed: bool, x: float, y: float) -> str:
    if kind == "band":
        return (
            f'<rect x="{_f(x)}" y="{_f(y - 5)}" width="18" height="10" fill="{C_AXIS}" '
            f'fill-opacity="{BAND_OPACITY}"/>'
        )
    if kind == "event":
        return _vline(x + 9, y - 6, y + 6, C_EVENT, ' stroke-width="1.3" stroke-dasharray="3 2"')
    if kind == "flag":
        return _cross(x + 9, y, 4.5)
    if kind == "opt":
        return _circle(x + 9, y, 5, "none", color, 2)
    if kind == "max":
        return _polygon([(x + 9, y + 4), (x + 4, y - 4), (x + 14, y - 4)], color)
    dash = ' stroke-dasharray="6 4"' if dashed else ""
    return _hline(x, x + 18, y, color, f' stroke-width="2"{dash}')


LegendItem = tuple[str, str, bool, str]  # kind, color, dashed, label


def _header(
    title: str, items: list[LegendItem], width: int, left: float
) -> tuple[list[str], float]:
    samples: list[tuple[Sample, str]] = [
        (partial(_legend_sample, kind, color, dashed), label)
        for kind, color, dashed, label in items
    ]
    return legend_header(title, samples, width, left)


# ---------------------------------------------------------------- the renderer


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


def _snap(lo: float, hi: float, axis: XAxis) -> tuple[float, float]:
    """Stretch the x range to the tick just beyond either end (3599 s -> 60 min), within 3 %."""
    if len(axis.ticks) < 2:
        return lo, hi
    step = axis.ticks[1] - axis.ticks[0]
    up = math.ceil(hi / step - 1e-9) * step
    down = math.floor(lo / step + 1e-9) * step
    slack = 0.03 * (hi - lo)
    return (down if lo - down <= slack else lo), (up if up - hi <= slack else hi)


def _interp(t: float, ts: list[float], xs: list[float]) -> float:
    i = bisect.bisect_left(ts, t)
    if i <= 0:
        return xs[0]
    if i >= len(ts):
        return xs[-1]
    t0, t1, x0, x1 = ts[i - 1], ts[i], xs[i - 1], xs[i]
    return x0 if t1 == t0 else x0 + (x1 - x0) * (t - t0) / (t1 - t0)


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


def xy_chart(
    title: str,
    x: Sequence[float | None],
    series: Sequence[TimeSeries],
    *,
    right: Sequence[TimeSeries] = (),
    marks: Sequence[tuple[float, str]] = (),
    x_label: str,
    x_axis: XAxisFormatter = linear_axis,
    width: int = 900,
    height: int = 280,
    max_points: int = 2000,
    mark_max: bool = True,
    x_names: Sequence[str] | None = None,
    log_y: bool = False,
    neutral_marks: bool = False,
    shade: tuple[float, float, str] | None = None,
) -> str:
    """The generic renderer: `series` on the left axis and `right` on the right axis against
    `x` (sorted here if needed), vertical `marks` (x, label), an x axis from `x_axis`.
    `x_names` names categorical x values (index -> name) in the hover texts; `log_y` draws
    the left axis in decades (latency percentiles span several)."""
    max_points = max(4, max_points)
    if log_y:
        series = _log_series(series)
    order, xs, bounds = _layout(x, max_points)
    banded = len(xs) > max_points
    after = shade[1] if shade else None  # the max marked is the measured seconds' own
    left_p, left_unit = _prepare(series, LEFT_COLORS, "l", xs, order, bounds, after)
    right_p, right_unit = _prepare(right, RIGHT_COLORS, "r", xs, order, bounds, after)
    has_data = any(b is not None for s in left_p + right_p for b in s.buckets)

    items: list[LegendItem] = [
        ("line", s.color, s.dashed, s.label) for s in left_p + right_p if s.label and has_data
    ]
    if banded and has_data:
        per = len(xs) / len(bounds)
        items.append(("band", C_AXIS, False, f"min–max of ~{per:,.0f} samples"))
    elif any(s.intervals for s in left_p + right_p):
        items.append(("band", C_AXIS, False, "95 % interval of the repeats"))
    if has_data and any(any(s.flagged) for s in left_p + right_p):
        items.append(("flag", C_AXIS, False, "flagged: see table"))
    if has_data and any(any(s.marks) for s in left_p + right_p):
        items += [("opt", C_AXIS, False, "optimal"), ("max", C_AXIS, False, "max")]
    left = 62.0
    head, top = _header(title, items, width, left)
    body: list[str] = []
    aria = escape(f"{title}: against {x_label}")
    if not has_data:
        body.append(_empty(width, height))
        return _svg(width, height, aria, head + body)

    lo, hi = xs[0], xs[-1]
    mark_pts = [(mx, s) for mx, s in marks if math.isfinite(mx)]
    for mx, _ in mark_pts:
        lo, hi = min(lo, mx), max(hi, mx)
    if 0 <= lo <= 0.05 * hi:
        lo = 0.0
    if hi - lo < 1e-9:
        pad = max(abs(hi) * 0.05, 0.5)
        lo, hi = (max(lo - pad, 0.0) if lo >= 0 else lo - pad), hi + pad

    sides = [s for s in (left_p, right_p) if s]
    primary, secondary = sides[0], sides[1] if len(sides) > 1 else None
    y1 = _log_ticks(*_range(primary)) if log_y else _y_ticks(*_range(primary))
    y2 = _y_ticks(*_range(secondary), count=len(y1) - 1) if secondary else None
    plot_right = width - (66.0 if y2 else 24.0)
    target = max(2, int((plot_right - left) // 95))
    lo, hi = _snap(lo, hi, x_axis(lo, hi, target, x_label))
    axis = x_axis(lo, hi, target, x_label)
    p = _Plot(
        left,
        top,
        plot_right,
        height - 44.0,
        lo,
        hi,
        (y1[0], y1[-1]),
        (y2[0], y2[-1]) if y2 else (0.0, 1.0),
    )
    p_unit = left_unit if left_p else right_unit

    body.append(f'<g fill="{C_AXIS}">')
    body += _y_axis(p, y1, p_unit, 0)
    if y2:
        body += _y_axis(p, y2, right_unit, 1)
    body += _x_axis(p, axis)
    body.append("</g>")
    body += _titles(
        p,
        axis.title,
        _axis_title(p_unit),
        _axis_title(right_unit) if y2 else None,
        (left_p or right_p)[0].color if len(left_p or right_p) == 1 else C_TEXT,
        right_p[0].color if len(right_p) == 1 else C_TEXT,
        height,
    )
    taken = _Taken([])
    shade_rect, shade_label = _shade(p, shade, taken)
    event_lines, event_labels = _events(p, mark_pts, taken, C_AXIS if neutral_marks else C_EVENT)
    clip = clip_id()
    body.append(
        f'<defs><clipPath id="{clip}"><rect x="{_f(p.left)}" y="{_f(p.top - 6)}" '
        f'width="{_f(p.right - p.left)}" height="{_f(p.bottom - p.top + 6)}"/></clipPath></defs>'
        f'<g clip-path="url(#{clip})"><g class="zoom">'
    )
    body += shade_rect + event_lines
    drawn = [(s, 0) for s in (left_p or right_p)] + ([(s, 1) for s in right_p] if y2 else [])
    for s, side in reversed(drawn):
        body += _draw_series(p, s, side, banded)  # with intervals: their band too
    body.append('</g></g><g class="zoom-hide">')
    for s, side in drawn:
        body += _marks(p, s, side)
    body += event_labels + shade_label
    if mark_max:
        for s, side in drawn:
            body += _peak_mark(p, s, side, taken)
    body.append("</g>")
    body.append(_hover(p, xs, bounds, left_p + right_p, x_label, x_names))
    return _svg(width, height, escape(f"{title}: against {axis.title}"), head + body)


def _x_text(v: float, x_label: str, x_names: Sequence[str] | None) -> str:
    if x_names is not None:
        i = round(v)
        return f"{x_label}: {x_names[i]}" if 0 <= i < len(x_names) else f"{x_label}: {v:g}"
    name, _, unit = x_label.rpartition(" (")
    if unit == "s)":  # short: one of these per second drawn
        return f"t = {significant(v)} s"
    if name and unit.endswith(")"):
        return f"{significant(v)} {unit[:-1]}"
    return f"{x_label}: {significant(v)}"


def _hover(
    p: _Plot,
    xs: list[float],
    bounds: list[tuple[int, int]],
    drawn: list[_Prepared],
    x_label: str,
    x_names: Sequence[str] | None,
) -> str:
    """One hover text per drawn bucket: where it is, and each line's value there (the mean
    when the bucket stands for several samples)."""
    positions, tips = [], []
    for j, (a, b) in enumerate(bounds):
        x = (xs[a] + xs[b - 1]) / 2
        lines = [_x_text(x, x_label, x_names)]
        for s in drawn:
            bucket = s.buckets[j] if j < len(s.buckets) else None
            if bucket is None:
                continue
            mean = " mean" if b - a > 1 else ""  # several seconds: the band shows min and max
            lines.append(f"{s.label}{mean}: {_fmt_value(bucket.mean, s.unit)}")
        positions.append(p.x(x))
        tips.append("\n".join(lines))
    return hover_rect((p.left, p.top, p.right, p.bottom), positions, tips)


def _titles(
    p: _Plot,
    x_title: str,
    y1_title: str,
    y2_title: str | None,
    c1: str,
    c2: str,
    height: int,
) -> list[str]:
    mid = (p.top + p.bottom) / 2
    xr = p.right + 52
    xc = (p.left + p.right) / 2
    out = [
        _text(
            14,
            mid,
            y1_title,
            anchor="middle",
            cls="axis-y1",
            fill=c1,
            transform=f"rotate(-90 14 {_f(mid)})",
        ),
        _text(xc, height - 7, x_title, anchor="middle", cls="axis-x", fill=C_TEXT),
    ]
    if y2_title:
        out.append(
            _text(
                xr,
                mid,
                y2_title,
                anchor="middle",
                cls="axis-y2",
                fill=c2,
                transform=f"rotate(90 {_f(xr)} {_f(mid)})",
            )
        )
    return out


def _svg(width: int, height: int, aria: str, parts: list[str]) -> str:
    return (
        f'<svg class="chart timechart" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{aria}" '
        f'font-family="{FONT}" fill="{C_TEXT}"><title>{aria}</title>' + "".join(parts) + "</svg>"
    )


# ---------------------------------------------------------------- the two charts


def time_chart(
    title: str,
    t_s: Sequence[float | None],
    series: Sequence[TimeSeries],
    *,
    right: Sequence[TimeSeries] = (),
    events: Sequence[ChartEvent] = (),
    x_label: str = "time (s)",
    width: int = 900,
    height: int = 280,
    max_points: int = 2000,
    mark_max: bool = True,
    neutral_marks: bool = False,
    shade: tuple[float, float, str] | None = None,
) -> str:
    """Series against seconds since the start (x ticks in s, min or h as the run gets longer;
    a title ending in "(s)" follows), events as labelled vertical lines (grey with
    `neutral_marks`: where a ladder's levels start, not something that happened)."""
    return xy_chart(
        title,
        t_s,
        series,
        right=right,
        marks=[(e.t_s, e.label) for e in events],
        x_label=x_label,
        x_axis=time_axis,
        width=width,
        height=height,
        max_points=max_points,
        mark_max=mark_max,
        neutral_marks=neutral_marks,
        shade=shade,
    )


def gb_chart(
    title: str,
    gb_written: Sequence[float | None],
    series: Sequence[TimeSeries],
    *,
    right: Sequence[TimeSeries] = (),
    events: Sequence[ChartEvent] = (),
    t_s: Sequence[float | None] | None = None,
    x_label: str = "data written (GB)",
    width: int = 900,
    height: int = 280,
    max_points: int = 2000,
    mark_max: bool = True,
) -> str:
    """Series against cumulative GB written (SNIA write saturation: IOPS against GB written).

    An event is drawn at its `gb`, else at the GB written by its `t_s` when the samples' times
    `t_s` are given; events with neither are left out."""
    marks: list[tuple[float, str]] = []
    pairs = sorted(
        (t, g)
        for t, g in zip(t_s or [], gb_written, strict=False)
        if t is not None and g is not None and math.isfinite(t + g)
    )
    for e in events:
        if e.gb is not None:
            marks.append((e.gb, e.label))
        elif pairs:
            ts, gs = [t for t, _ in pairs], [g for _, g in pairs]
            marks.append((_interp(e.t_s, ts, gs), e.label))
    return xy_chart(
        title,
        gb_written,
        series,
        right=right,
        marks=marks,
        x_label=x_label,
        x_axis=linear_axis,
        width=width,
        height=height,
        max_points=max_points,
        mark_max=mark_max,
    )


__all__ = [
    "Bucket",
    "ChartEvent",
    "TimeSeries",
    "XAxis",
    "envelope",
    "gb_chart",
    "linear_axis",
    "time_axis",
    "time_chart",
    "xy_chart",
]
