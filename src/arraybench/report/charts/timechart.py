"""Charts against time and against data written, as inline SVG in the style of `curve.py`.

`time_chart` draws what AERODISK and the HUS VM write-cliff test show: IOPS or MB/s on the left
axis and latency (or controller CPU) on the right, against seconds since the start, with
vertical event lines ("controller B pulled", "cliff at 3 s"). `gb_chart` draws the SNIA write
saturation view: the same series against cumulative GB written. Both are one renderer
(`xy_chart`) with a different x axis.

More: docs/internals.md, `report/charts/timechart.py`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from arraybench.report.charts.interact import clip_id
from arraybench.report.charts.parts import (
    C_AXIS,
    C_CEIL,
    C_LAT,
    C_TEXT,
    C_TPUT,
    FONT,
    _empty,
    _f,
    _halo_label,
    _hline,
    _label_box,
    _text_width,
)
from arraybench.report.charts.timeaxes import (
    XAxis,
    XAxisFormatter,
    _axis_title,
    _log_ticks,
    _Plot,
    _snap,
    _titles,
    _x_axis,
    _y_axis,
    _y_ticks,
    linear_axis,
    time_axis,
)
from arraybench.report.charts.timedata import (
    Bucket,
    ChartEvent,
    TimeSeries,
    _interp,
    _layout,
    _log_series,
    _prepare,
    _Prepared,
    _range,
    envelope,
)
from arraybench.report.charts.timemarks import (
    C_EVENT,
    LegendItem,
    _draw_series,
    _events,
    _header,
    _hover,
    _marks,
    _peak_mark,
    _shade,
    _Taken,
)

LEFT_COLORS = (C_TPUT, "#0f8a6c", "#5b2a86", "#4b5563")
RIGHT_COLORS = (C_LAT, "#8c564b", "#b8860b", "#6b7280")


# ---------------------------------------------------------------- the renderer


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
    right_axis: bool = False,
    ceiling: tuple[float, str] | None = None,
    heading: str | None = None,
) -> str:
    """The generic renderer: `series` on the left axis and `right` on the right axis against
    `x` (sorted here if needed), vertical `marks` (x, label), an x axis from `x_axis`,
    a dashed horizontal `ceiling` (value on the left axis, label) such as the fabric's.
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
    items = _legend_items(left_p + right_p, has_data, banded, len(xs), len(bounds))
    left = 62.0
    head, top = _header(heading or title, items, width, left)  # drawn; `title` names it
    if not has_data:
        return _svg(
            width, height, escape(f"{title}: against {x_label}"), [*head, _empty(width, height)]
        )

    mark_pts = [(mx, s) for mx, s in marks if math.isfinite(mx)]
    lo, hi = _x_range(xs, mark_pts)
    ceiling = ceiling if ceiling and math.isfinite(ceiling[0]) and ceiling[0] > 0 else None
    on_scale = ceiling is not None and _on_scale(ceiling[0], left_p or right_p)
    p, axis, y1, y2 = _plot(
        left_p,
        right_p,
        log_y,
        (lo, hi),
        x_axis,
        x_label,
        (width, height),
        (left, top),
        right_axis,  # room for a right axis it lacks: its x axis as a chart's above it
        ceiling[0] if ceiling and on_scale else None,
    )
    body = _axes(p, axis, (y1, y2), (left_p, right_p), (left_unit, right_unit), height)
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
    if ceiling is not None:
        body += _ceiling(p, ceiling, on_scale, taken)
    if mark_max:
        for s, side in drawn:
            body += _peak_mark(p, s, side, taken)
    body.append("</g>")
    body.append(_hover(p, xs, bounds, left_p + right_p, x_label, x_names))
    return _svg(width, height, escape(f"{title}: against {axis.title}"), head + body)


def _legend_items(
    drawn: list[_Prepared], has_data: bool, banded: bool, samples: int, buckets: int
) -> list[LegendItem]:
    """A line per labelled series; what a band means; the flag and headline marks when drawn."""
    items: list[LegendItem] = [
        ("line", s.color, s.dashed, s.label) for s in drawn if s.label and has_data
    ]
    if banded and has_data:
        items.append(("band", C_AXIS, False, f"min–max of ~{samples / buckets:,.0f} samples"))
    elif any(s.intervals for s in drawn):
        items.append(("band", C_AXIS, False, "95 % interval of the repeats"))
    if has_data and any(any(s.flagged) for s in drawn):
        items.append(("flag", C_AXIS, False, "flagged: see table"))
    if has_data and any(any(s.marks) for s in drawn):
        items += [("opt", C_AXIS, False, "optimal"), ("max", C_AXIS, False, "max")]
    return items


def _x_range(xs: list[float], marks: list[tuple[float, str]]) -> tuple[float, float]:
    """The samples' x range widened to the marks; from 0 when the data nearly starts there;
    a single x padded around it."""
    lo, hi = xs[0], xs[-1]
    for mx, _ in marks:
        lo, hi = min(lo, mx), max(hi, mx)
    if 0 <= lo <= 0.05 * hi:
        lo = 0.0
    if hi - lo < 1e-9:
        pad = max(abs(hi) * 0.05, 0.5)
        lo, hi = (max(lo - pad, 0.0) if lo >= 0 else lo - pad), hi + pad
    return lo, hi


def _plot(
    left_p: list[_Prepared],
    right_p: list[_Prepared],
    log_y: bool,
    x_range: tuple[float, float],
    x_axis: XAxisFormatter,
    x_label: str,
    size: tuple[int, int],
    corner: tuple[float, float],
    right_axis: bool = False,
    reach: float | None = None,
) -> tuple[_Plot, XAxis, list[float], list[float] | None]:
    """The plot area and its scales: y ticks of the first side drawn (decades with `log_y`),
    reaching up to `reach` too (a ceiling drawn to scale), the right axis' ticks on the same
    grid lines, the x axis snapped to a tick at either end."""
    (width, height), (left, top) = size, corner
    sides = [s for s in (left_p, right_p) if s]
    primary, secondary = sides[0], sides[1] if len(sides) > 1 else None
    y_lo, y_hi = _range(primary)
    y_hi = max(y_hi, reach) if reach is not None else y_hi
    y1 = _log_ticks(y_lo, y_hi) if log_y else _y_ticks(y_lo, y_hi, unit=primary[0].unit)
    y2 = (_y_ticks(*_range(secondary), count=len(y1) - 1, unit=secondary[0].unit)
          if secondary else None)  # fmt: skip
    plot_right = width - (66.0 if y2 or right_axis else 24.0)
    target = max(2, int((plot_right - left) // 95))
    lo, hi = _snap(*x_range, x_axis(*x_range, target, x_label))
    axis = x_axis(lo, hi, target, x_label)
    y2_range = (y2[0], y2[-1]) if y2 else (0.0, 1.0)
    p = _Plot(left, top, plot_right, height - 44.0, lo, hi, (y1[0], y1[-1]), y2_range)
    return p, axis, y1, y2


CEILING_ON_SCALE = 3.0  # as curve.py: a ceiling further above the lines is named, not drawn


def _on_scale(value: float, drawn: list[_Prepared]) -> bool:
    """Whether a ceiling is close enough to the lines to share their axis (a ceiling 20 x the
    figures would flatten them to the floor)."""
    top = _range(drawn)[1] if drawn else 0.0
    return top <= 0 or value <= CEILING_ON_SCALE * top


def _ceiling(p: _Plot, ceiling: tuple[float, str], on_scale: bool, taken: _Taken) -> list[str]:
    """The dashed ceiling across the plot with its label at the right end, above the line; off
    the scale, the label alone at the top edge."""
    value, label = ceiling
    size = 10.5
    w = _text_width(label, size)
    if not on_scale:
        label += " ↑ (off the scale)"
        w = _text_width(label, size)
        box = _label_box(p.right - 6, p.top + 12, w, size, "end")
        taken.boxes.append(box)
        return [_halo_label((p.right - 6, p.top + 12, "end"), label, C_AXIS, "label-ceiling", size)]
    y = p.y(value, 0)
    taken.boxes.append(_label_box(p.right - 6, y - 5, w, size, "end"))
    return [
        _hline(p.left, p.right, y, C_CEIL, ' class="ceiling" stroke-width="1.4" '
               'stroke-dasharray="7 5"'),
        _halo_label((p.right - 6, y - 5, "end"), label, C_AXIS, "label-ceiling", size),
    ]  # fmt: skip


def _axes(
    p: _Plot,
    axis: XAxis,
    ticks: tuple[list[float], list[float] | None],
    sides: tuple[list[_Prepared], list[_Prepared]],
    units: tuple[str, str],
    height: int,
) -> list[str]:
    """Both y axes (the right one only with ticks), the x axis and the three titles, each
    title in its series' colour when it has one series."""
    (y1, y2), (left_p, right_p), (left_unit, right_unit) = ticks, sides, units
    p_unit = left_unit if left_p else right_unit
    body = [f'<g fill="{C_AXIS}">', *_y_axis(p, y1, p_unit, 0)]
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
    return body


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
    right_axis: bool = False,
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
        right_axis=right_axis,
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
