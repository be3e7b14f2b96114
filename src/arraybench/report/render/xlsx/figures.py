"""The seed figures (report/sections/seedfigures.py) in the Excel workbook: one "Figures"
sheet, each figure a table of its numbers and a native chart beside it in its own form
(clustered bars, lines against evenly spaced levels, a scatter against a numeric x, a heat map
as a colour-scaled table). Markers are given their own fill and line so LibreOffice draws them
too."""

from __future__ import annotations

from typing import Any

from openpyxl.chart import BarChart, LineChart, Reference, ScatterChart, Series
from openpyxl.chart.marker import Marker
from openpyxl.chart.series import SeriesLabel
from openpyxl.chart.shapes import GraphicalProperties
from openpyxl.formatting.rule import ColorScaleRule
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from arraybench.report.charts.figures import series_colour
from arraybench.report.model import Figure
from arraybench.report.render.xlsx.cells import _put

CHART_W, CHART_H = 16.0, 7.5  # cm, as the workload sheets' charts
FIGURE_ROWS = 17  # rows a figure takes at least: its chart's height and a gap
HEADING = Font(bold=True, size=13)
BOLD = Font(bold=True)
MUTED = Font(italic=True, color="6B7280")
HEAD_FILL = PatternFill("solid", fgColor="F3F4F6")
COLORS = ("4E79A7", "F28E2B", "E15759", "76B7B2", "59A14F", "EDC948", "B07AA1", "FF9DA7",
          "9C755F", "BAB0AC")  # fmt: skip
FLAG_COLOR = "C81E1E"
XY = ("xy", "time")
BARS = ("bars", "histogram")
MAX_ROWS = 2000  # rows of one figure's table against a numeric x (timelines.py's MAX_TIMELINE_ROWS)


def visible_marker(symbol: str, color: str, size: int = 7) -> Marker:
    """A marker LibreOffice draws as Excel does: its own solid fill and outline (without them
    LibreOffice takes the series' line, which a marks-only series has switched off)."""
    marker = Marker(symbol=symbol, size=size)
    props = GraphicalProperties(solidFill=color)
    props.line.solidFill = color
    marker.graphicalProperties = props
    return marker


def _cell(ws: Worksheet, row: int, col: int, value: Any, fmt: str = "#,##0.0") -> None:
    """A number with its format; text (a compare label, a workload's chart name) goes
    through cells.py's _put, so "=1+1" or "@x" stays text and never becomes a formula."""
    _put(ws, row, col, value, fmt if isinstance(value, float | int) else None)


def _text(ws: Worksheet, row: int, col: int, text: str, font: Font | None = None) -> None:
    _put(ws, row, col, text)
    if font is not None:
        ws.cell(row, col).font = font


def _table(ws: Worksheet, row: int, fig: Figure) -> tuple[int, int]:
    """The figure's numbers from `row`: x in column 1, one column per series; returns the
    first and last data rows."""
    _text(ws, row, 1, fig.title, HEADING)
    if fig.caption:
        _text(ws, row + 1, 1, fig.caption, MUTED)
    head = row + 2
    x_title = fig.x_label if fig.form != "heatmap" else f"{fig.y_label or 'row'} \\ {fig.x_label}"
    heads = [x_title] + [f"{s.label} ({fig.unit})" for s in fig.series]
    if fig.form == "heatmap":
        heads = [x_title, *fig.x_ticks]
    elif _ceiling(fig) is not None:
        heads.append(f"fabric ceiling ({fig.unit})")
    for col, text in enumerate(heads, start=1):
        _text(ws, head, col, text, BOLD)
        ws.cell(head, col).fill = HEAD_FILL
    first = head + 1
    if fig.form == "heatmap":
        for i, s in enumerate(fig.series):
            _text(ws, first + i, 1, s.label)
            for j, v in enumerate(s.values):
                _cell(ws, first + i, 2 + j, v)
        return first, first + max(len(fig.series), 1) - 1
    count = max(len(fig.x_ticks), max((len(s.values) for s in fig.series), default=0))
    step = -(-count // MAX_ROWS)  # a 5-hour series at 1 s: every n-th second
    for row, i in enumerate(range(0, count, step)):
        if fig.form in XY:
            x = fig.series[0].x[i] if fig.series and fig.series[0].x else None
            _cell(ws, first + row, 1, x)
        else:
            _text(ws, first + row, 1, fig.x_ticks[i] if i < len(fig.x_ticks) else "")
        for j, s in enumerate(fig.series):
            _cell(ws, first + row, 2 + j, s.values[i] if i < len(s.values) else None)
        if (ceiling := _ceiling(fig)) is not None:  # a constant column: the chart's line
            _cell(ws, first + row, 2 + len(fig.series), ceiling)
    return first, first + max(-(-count // step), 1) - 1


def _ceiling(fig: Figure) -> float | None:
    """The fabric's ceiling a "lines" figure carries (drawn as a dashed grey line)."""
    return fig.ceiling[0] if fig.ceiling is not None and fig.form == "lines" else None


def _flags(ws: Worksheet, fig: Figure, first: int, last: int) -> int | None:
    """A column of the flagged values alone (a rate not reached), for their red crosses."""
    if not any(any(s.flagged) for s in fig.series):
        return None
    col = len(fig.series) + 2
    ws.cell(first - 1, col, "not reached").font = BOLD
    s = fig.series[0]
    for i in range(last - first + 1):
        if i < len(s.flagged) and s.flagged[i]:
            _cell(ws, first + i, col, s.values[i])
    return col


def _chart(ws: Worksheet, fig: Figure, first: int, last: int) -> Any:
    cols = len(fig.series)
    x = Reference(ws, min_col=1, min_row=first, max_row=last)
    if fig.form in BARS:
        chart: Any = BarChart()
        chart.type, chart.grouping = "col", "clustered"
    elif fig.form in XY:
        chart = ScatterChart(scatterStyle="lineMarker")
    else:
        chart = LineChart()
    chart.title, chart.style = fig.title, 2
    chart.width, chart.height = CHART_W, CHART_H
    chart.legend.position = "b"
    chart.x_axis.title = fig.x_label + (" (log2 scale)" if fig.log_x else "")
    chart.y_axis.title = fig.unit + (" (log scale)" if fig.log_y else "")
    if fig.log_y:  # the lines span decades (model.Figure.log_y): as the HTML and PDF draw it
        chart.y_axis.scaling.logBase = 10
    chart.x_axis.delete = chart.y_axis.delete = False
    for j in range(cols):
        ref = Reference(ws, min_col=2 + j, min_row=first, max_row=last)
        color = (series_colour(j, fig.series[j]).lstrip("#").upper() if fig.form in BARS
                 else COLORS[j % len(COLORS)])  # fmt: skip
        if fig.form in XY:
            series = Series(ref, x, title=fig.series[j].label)
            chart.series.append(series)
        else:
            chart.add_data(ref)
            series = chart.series[-1]
            series.tx = SeriesLabel(v=fig.series[j].label)
        if fig.form in BARS:
            series.graphicalProperties.solidFill = color
            continue
        series.smooth = False
        series.graphicalProperties.line.solidFill = color
        series.marker = visible_marker("circle", color, 6)
    flag_col = _flags(ws, fig, first, last) if fig.form in XY else None
    if flag_col is not None:
        ref = Reference(ws, min_col=flag_col, min_row=first, max_row=last)
        marks = Series(ref, x, title="rate not reached")
        marks.smooth = False  # LibreOffice smooths every line of a chart with one unsaid
        marks.marker = visible_marker("x", FLAG_COLOR, 10)
        marks.graphicalProperties.line.noFill = True
        chart.series.append(marks)
    if _ceiling(fig) is not None:
        chart.add_data(Reference(ws, min_col=2 + cols, min_row=first, max_row=last))
        line = chart.series[-1]
        line.tx = SeriesLabel(v=f"fabric ceiling ({fig.unit})")
        line.smooth = False
        line.graphicalProperties.line.solidFill = "9AA0A6"
        line.graphicalProperties.line.dashStyle = "dash"
        line.marker = Marker(symbol="none")
    if fig.form not in XY:
        chart.set_categories(x)
    return chart


def figures_sheet(ws: Worksheet, figures: list[Figure]) -> None:
    """Every seed figure: its table, and its chart to the right of it."""
    ws.cell(1, 1, "Figures in the methodologies' own forms").font = Font(bold=True, size=16)
    row = 3
    for fig in figures:
        first, last = _table(ws, row, fig)
        width = (len(fig.x_ticks) if fig.form == "heatmap" else len(fig.series)) + 3
        if fig.form == "heatmap":
            cells = f"B{first}:{get_column_letter(len(fig.x_ticks) + 1)}{last}"
            ws.conditional_formatting.add(
                cells,
                ColorScaleRule(
                    start_type="min", start_color="FFFFFF", end_type="max", end_color="1F5FA8"
                ),
            )
        else:
            # below the title and caption lines, which run on to the right
            ws.add_chart(_chart(ws, fig, first, last), f"{get_column_letter(width + 1)}{row + 2}")
        row = max(last + 3, row + FIGURE_ROWS + 2)
    ws.column_dimensions["A"].width = 28
