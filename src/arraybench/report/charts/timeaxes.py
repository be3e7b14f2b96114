"""The axes of a time chart: the x axis in seconds (s, min or h by the step) or in GB (TB from
10,000 GB), the y ticks (0-based, spanning a negative minimum, or whole decades on a log
axis), the plot's geometry (`_Plot`, value -> pixel), and the ticks, grid and titles drawn.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from arraybench.report.charts.parts import (
    C_AXIS,
    C_GRID,
    C_TEXT,
    HEADROOM,
    Box,
    _f,
    _hline,
    _text,
    _text_width,
    _trim,
    _vline,
    compact,
    nice_step,
    nice_ticks,
    ticks_with_count,
)
from arraybench.report.charts.timedata import LOG
from arraybench.units import format_quantity, format_tick

LATENCY_UNITS = ("µs", "us", "ms")


THROUGHPUT_UNITS = ("IOPS", "kIOPS", "MB/s", "MiB/s", "GB/s", "KiB/s")

# steps for a time axis, in seconds: round numbers of seconds, minutes and hours
_TIME_STEPS = (
    *(1, 2, 5, 10, 15, 20, 30),
    *(60 * m for m in (1, 2, 5, 10, 15, 20, 30)),
    *(3600 * h for h in (1, 2, 3, 4, 6, 12, 24, 48)),
)


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


def _snap(lo: float, hi: float, axis: XAxis) -> tuple[float, float]:
    """Stretch the x range to the tick just beyond either end (3599 s -> 60 min), within 3 %."""
    if len(axis.ticks) < 2:
        return lo, hi
    step = axis.ticks[1] - axis.ticks[0]
    up = math.ceil(hi / step - 1e-9) * step
    down = math.floor(lo / step + 1e-9) * step
    slack = 0.03 * (hi - lo)
    return (down if lo - down <= slack else lo), (up if up - hi <= slack else hi)


# ---------------------------------------------------------------- y axes


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
    if unit == "%":  # the one time series in %: the array controller's CPU
        return "CPU busy (%)"
    return unit


def _fmt_value(v: float, unit: str) -> str:
    if unit.startswith(LOG):
        return format_quantity(10**v, unit.removeprefix(LOG))
    return format_quantity(v, unit)


def _tick_label(v: float, unit: str) -> str:
    if unit.startswith(LOG):
        return format_tick(10**v, unit.removeprefix(LOG))
    return format_tick(v, unit)


def _y_ticks(lo: float, hi: float, count: int | None = None, unit: str = "") -> list[float]:
    """0-based nice ticks (curve.py's), or ticks spanning a negative minimum. A share in %
    that stays within 100 ends at 100, not at the headroom's 125 (CPU busy is never more)."""
    top = hi * HEADROOM if hi > 0 else 0.0
    if unit == "%" and lo >= 0 and hi <= 100.0:
        top = min(top, 100.0)
    if lo >= 0:
        return ticks_with_count(top, count) if count else nice_ticks(top)
    step = nice_step((top - lo) / (count or 5))
    first, last = math.floor(lo / step), max(math.ceil(top / step), math.floor(lo / step) + 1)
    return [k * step for k in range(first, last + 1)]


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


# ---------------------------------------------------------------- drawn


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
