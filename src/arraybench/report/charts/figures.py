"""The seed reports' own figure forms as inline SVG: grouped bars (CSCS: one bar per set-up at
each operation), lines against evenly spaced levels (HUS VM: one line per block size against
numjobs, a log2 axis when the levels are powers of 2), a curve against a numeric x (the
response-time curve) and a heat map (any 2-D sweep). Lines and curves reuse `xy_chart`; bars
and heat maps are drawn here in the same style. `figures_html` is the report's section."""

from __future__ import annotations

import math
from collections.abc import Callable
from html import escape

from arraybench.report.charts.interact import hover_rect
from arraybench.report.charts.parts import C_AXIS, C_GRID, C_TEXT, FONT, _f, _text, nice_ticks
from arraybench.report.charts.timechart import TimeSeries, XAxis, time_axis, xy_chart
from arraybench.report.model import Figure, FigureSeries
from arraybench.units import format_quantity, format_tick

# distinct hues (Tableau 10), as html.LINE_COLORS: a set-up or block size keeps its colour
COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
          "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")  # fmt: skip
WIDTH, HEIGHT = 900, 300
LIGHT = 0.5  # a set-up's lighter bar: half way to white


def series_colour(j: int, s: FigureSeries) -> str:
    """The `j`-th series' colour (#rrggbb): its own, or its set-up's (`hue`), lighter when
    `light`; the workbook's charts take the same."""
    base = COLORS[(j if s.hue is None else s.hue) % len(COLORS)]
    if not s.light:
        return base
    r, g, b = (int(base[k : k + 2], 16) for k in (1, 3, 5))
    return "#" + "".join(f"{round(c + (255 - c) * LIGHT):02x}" for c in (r, g, b))


def _fmt(v: float | None, unit: str) -> str:
    if unit.startswith("%") and v is not None:  # a histogram's share: small ones count
        return f"{v:.2g} %" if v < 1 else f"{v:.1f} %"
    return format_quantity(v, unit) if unit in ("IOPS", "MB/s", "µs") else (
        "–" if v is None else f"{v:,.0f} {unit}")  # fmt: skip


# the file-name form of each kind of figure (report/render/chartfiles/export.py)
FORM_NAMES = {"xy": "ratecurve", "time": "timeseries", "bars": "bars", "lines": "lines",
              "heatmap": "heatmap", "histogram": "histogram"}  # fmt: skip


def _form(fig: Figure) -> str:
    return FORM_NAMES.get(fig.form, fig.form)


def _svg(fig: Figure, width: int, height: int, parts: list[str]) -> str:
    aria = escape(f"{fig.title}: against {fig.x_label}")
    return (
        f'<svg class="chart figure" data-form="{_form(fig)}" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{aria}" '
        f'font-family="{FONT}" fill="{C_TEXT}"><title>{aria}</title>' + "".join(parts) + "</svg>"
    )


def _legend(fig: Figure, left: float, width: int) -> list[str]:
    parts, x = [], left
    for i, s in enumerate(fig.series):
        color = series_colour(i, s)
        w = 22 + len(s.label) * 6.4
        if x + w > width - 10:
            break
        parts.append(f'<rect x="{_f(x)}" y="28" width="12" height="10" fill="{color}"/>')
        parts.append(_text(x + 16, 37, s.label, size=11))
        x += w
    return parts


def bars_svg(fig: Figure, width: int = WIDTH, height: int = HEIGHT) -> str:
    """Grouped bars: at each x tick one bar per series, its value written above it."""
    left, right, top, bottom = 70.0, width - 20.0, 52.0, height - 46.0
    values = [v for s in fig.series for v in s.values if v is not None and math.isfinite(v)]
    ticks = nice_ticks(max(values, default=0.0) * 1.12 or 1.0)
    y_top = ticks[-1] or 1.0
    parts = [_text(left, 18, fig.title, size=13, font_weight="600"), *_legend(fig, left, width)]

    def y(v: float) -> float:
        return bottom - (bottom - top) * v / y_top

    for t in ticks:
        parts.append(f'<line x1="{_f(left)}" x2="{_f(right)}" y1="{_f(y(t))}" y2="{_f(y(t))}" '
                     f'stroke="{C_GRID}"/>')  # fmt: skip
        parts.append(_text(left - 6, y(t) + 4, format_tick(t, fig.unit), size=10,
                           anchor="end", fill=C_AXIS))  # fmt: skip
    n, k = max(len(fig.x_ticks), 1), max(len(fig.series), 1)
    band = (right - left) / n
    bar = min(band * 0.8 / k, 90.0)  # one set-up: a bar, not a wall
    centers, tips = [], []
    for i, tick in enumerate(fig.x_ticks):
        x0 = left + band * (i + 0.5) - bar * k / 2
        centers.append(left + band * (i + 0.5))
        tips.append("\n".join([tick] + [f"{s.label}: {_fmt(s.values[i], fig.unit)}"
                                        for s in fig.series if i < len(s.values)]))  # fmt: skip
        parts.append(_text(left + band * (i + 0.5), bottom + 16, tick, size=11,
                           anchor="middle", fill=C_AXIS))  # fmt: skip
        for j, s in enumerate(fig.series):
            v = s.values[i] if i < len(s.values) else None
            if v is None or not math.isfinite(v):
                continue
            bx, color = x0 + bar * j, series_colour(j, s)
            parts.append(f'<rect class="bar" x="{_f(bx)}" y="{_f(y(v))}" width="{_f(bar - 1)}" '
                         f'height="{_f(bottom - y(v))}" fill="{color}"/>')  # fmt: skip
            if bar >= 26:  # a value that fits over its bar
                parts.append(_text(bx + bar / 2, y(v) - 3, format_tick(v, fig.unit), size=9,
                                   anchor="middle"))  # fmt: skip
    parts.append(f'<line x1="{_f(left)}" x2="{_f(right)}" y1="{_f(bottom)}" y2="{_f(bottom)}" '
                 f'stroke="{C_AXIS}"/>')  # fmt: skip
    parts.append(_text((left + right) / 2, height - 10, fig.x_label, size=11, anchor="middle"))
    parts.append(_text(16, (top + bottom) / 2, fig.unit, size=11, anchor="middle",
                       transform=f"rotate(-90 16 {_f((top + bottom) / 2)})"))  # fmt: skip
    parts.append(hover_rect((left, top, right, bottom), centers, tips))
    return _svg(fig, width, height, parts)


def _heat(share: float) -> str:
    """White to the report's blue."""
    r, g, b = (int(255 + (c - 255) * share) for c in (31, 95, 168))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap_svg(fig: Figure, width: int = WIDTH) -> str:
    """Rows = series, columns = x ticks, each cell coloured by its value and labelled."""
    rows, cols = len(fig.series), max(len(fig.x_ticks), 1)
    left, top, cell_h = 120.0, 40.0, 26.0
    right = width - 20.0
    height = int(top + rows * cell_h + 50)
    cell_w = (right - left) / cols
    values = [v for s in fig.series for v in s.values if v is not None and math.isfinite(v)]
    lo, hi = min(values, default=0.0), max(values, default=1.0)
    parts = [_text(left, 18, fig.title, size=13, font_weight="600")]
    for r, s in enumerate(fig.series):
        y0 = top + r * cell_h
        parts.append(_text(left - 6, y0 + cell_h / 2 + 4, s.label, size=11, anchor="end"))
        for c in range(cols):
            v = s.values[c] if c < len(s.values) else None
            x0 = left + c * cell_w
            if v is None or not math.isfinite(v):
                parts.append(f'<rect x="{_f(x0)}" y="{_f(y0)}" width="{_f(cell_w)}" '
                             f'height="{_f(cell_h)}" fill="#f3f4f6" stroke="#fff"/>')  # fmt: skip
                continue
            share = (v - lo) / (hi - lo) if hi > lo else 1.0
            parts.append(f'<rect class="cell" x="{_f(x0)}" y="{_f(y0)}" width="{_f(cell_w)}" '
                         f'height="{_f(cell_h)}" fill="{_heat(0.1 + 0.9 * share)}" '
                         'stroke="#fff"/>')  # fmt: skip
            ink = "#ffffff" if share > 0.55 else C_TEXT
            parts.append(_text(x0 + cell_w / 2, y0 + cell_h / 2 + 4, format_tick(v, fig.unit),
                               size=10, anchor="middle", fill=ink))  # fmt: skip
    for c, tick in enumerate(fig.x_ticks):
        parts.append(_text(left + (c + 0.5) * cell_w, top + rows * cell_h + 15, tick, size=10,
                           anchor="middle", fill=C_AXIS))  # fmt: skip
    parts.append(_text((left + right) / 2, height - 8, f"{fig.x_label} ({fig.unit} per cell)",
                       size=11, anchor="middle"))  # fmt: skip
    if fig.y_label:
        parts.append(_text(10, top - 8, fig.y_label, size=10, fill=C_AXIS))
    return _svg(fig, width, height, parts)


def _category_axis(labels: list[str]) -> object:
    def axis(lo: float, hi: float, target: int, title: str) -> XAxis:
        return XAxis([float(i) for i in range(len(labels))], labels, title)

    return axis


def lines_svg(fig: Figure, heading: str | None = None) -> str:
    """One line per series against evenly spaced x ticks (a log2 axis for powers of 2), on a
    log latency axis when the lines span decades (`Figure.log_y`); `heading`: the title
    drawn, when shorter than the figure's (its group's heading above says the rest)."""
    x = [float(i) for i in range(len(fig.x_ticks))]
    lines = [TimeSeries(s.label, s.values, fig.unit, color=COLORS[i % len(COLORS)],
                        flagged=s.flagged) for i, s in enumerate(fig.series)]  # fmt: skip
    title = fig.x_label + (" (log2 scale)" if fig.log_x else "")
    chart = xy_chart(fig.title, x, lines, x_label=title, mark_max=False, x_names=fig.x_ticks,
                     x_axis=_category_axis(fig.x_ticks),  # type: ignore[arg-type]
                     ceiling=fig.ceiling, log_y=fig.log_y, heading=heading)  # fmt: skip
    return chart.replace("<svg ", f'<svg data-form="{_form(fig)}" ', 1)


def xy_svg(fig: Figure) -> str:
    """Values against a numeric x (each series its own x): the response-time curve."""
    first = fig.series[0] if fig.series else None
    x = list(first.x or []) if first else []
    if fig.form == "time":  # one quantity (runs overlaid): one axis, solid lines
        lines = [TimeSeries(s.label, s.values, fig.unit, color=COLORS[i % len(COLORS)])
                 for i, s in enumerate(fig.series)]  # fmt: skip
        chart = xy_chart(fig.title, x, lines, x_label=fig.x_label, x_axis=time_axis,
                         mark_max=False, marks=fig.marks)  # fmt: skip
        return chart.replace("<svg ", f'<svg data-form="{_form(fig)}" ', 1)
    lines = [TimeSeries(s.label, s.values, fig.unit, dashed=i > 0, color=COLORS[i % len(COLORS)],
                        flagged=s.flagged) for i, s in enumerate(fig.series)]  # fmt: skip
    # the first (mean latency) on its own axis: the p99 beside it would flatten it
    chart = xy_chart(fig.title, x, lines[:1], right=lines[1:], x_label=fig.x_label,
                     mark_max=False)  # fmt: skip
    return chart.replace("<svg ", f'<svg data-form="{_form(fig)}" ', 1)


def under_heading(fig: Figure) -> str | None:
    """The title drawn under the figure's group heading: `IOPS` for `Group 2: random 70/30,
    sync: IOPS` under `Group 2: random 70/30, sync` (the heading is not said twice); None to
    draw the whole title. The chart's own name (its SVG title, the image's file name) keeps
    the whole title."""
    prefix = f"{fig.group}: "
    if fig.group and fig.title.startswith(prefix) and len(fig.title) > len(prefix):
        return fig.title[len(prefix) :]
    return None


def figure_svg(fig: Figure, heading: str | None = None) -> str:
    if fig.form in ("bars", "histogram"):  # a histogram: bars per latency bucket
        return bars_svg(fig)
    if fig.form == "heatmap":
        return heatmap_svg(fig)
    if fig.form in ("xy", "time"):
        return xy_svg(fig)
    return lines_svg(fig, heading)


def figures_html(
    figures: list[Figure],
    anchor: str = "seedfigures",
    title: str = "Figures",
    lazy: Callable[[Figure], str | None] | None = None,
    every_chart: bool = False,
) -> str:
    """A section of figures (the seed figures; the latency histograms), under their group
    headings. `lazy` gives a figure the page draws instead (a big run's heat maps), or None."""
    if not figures:
        return ""
    parts, group = [], None
    for fig in figures:
        if fig.group != group:
            group = fig.group
            if (group or "Figures") != title:  # not the section's own heading again
                parts.append(f"<h3>{escape(group or 'Figures')}</h3>")
        caption = f'<p class="caption">{escape(fig.caption)}</p>' if fig.caption else ""
        if held := lazy and lazy(fig):
            parts.append(held + caption)
            continue
        # an image read alone (`--charts`, `every_chart`) keeps its whole title
        drawn = figure_svg(fig, None if every_chart else under_heading(fig))
        parts.append(f'<figure class="panel">{drawn}{caption}</figure>')
    return f'<section id="{anchor}"><h2>{escape(title)}</h2>' + "".join(parts) + "</section>"
