"""The workbook's native charts: scatter charts against a numeric x (time, GB written), line
charts over the load levels as categories, error bars from two columns, and the overlay's
dual-axis chart (throughput per line on the left, mean latency dashed on the right).
"""

from __future__ import annotations

from openpyxl.chart import LineChart, Reference, ScatterChart, Series
from openpyxl.chart.data_source import NumDataSource, NumRef
from openpyxl.chart.error_bar import ErrorBars
from openpyxl.chart.series import SeriesLabel
from openpyxl.worksheet.worksheet import Worksheet

from arraybench.report.model import Overlay

CHART_W, CHART_H = 16.0, 7.5  # cm


# ---------------------------------------------------------------- axes


def _axis_titles(chart: ScatterChart | LineChart, x_title: str, y_title: str) -> None:
    chart.x_axis.title = x_title
    chart.y_axis.title = y_title
    chart.x_axis.delete = False  # openpyxl >= 3.1 hides axes in recent Excel otherwise
    chart.x_axis.axPos = "b"
    chart.y_axis.delete = False


# ---------------------------------------------------------------- charts


def _scatter(
    title: str,
    x_title: str,
    y_title: str,
    x_ref: Reference,
    series: list[tuple[str, Reference]],
    *,
    markers: bool = True,
    log_x: tuple[float, float] | None = None,
) -> ScatterChart:
    chart = ScatterChart(scatterStyle="lineMarker")
    chart.title = title
    chart.style = 2
    chart.width, chart.height = CHART_W, CHART_H
    chart.legend.position = "b"
    _axis_titles(chart, x_title, y_title)
    if log_x:  # a log2 axis over exactly the data's range: ticks 1, 2, 4 ...
        chart.x_axis.scaling.logBase = 2
        chart.x_axis.scaling.min, chart.x_axis.scaling.max = log_x
    for name, ref in series:
        s = Series(ref, x_ref, title=name)
        s.smooth = False
        s.marker.symbol = "circle" if markers else "none"
        if markers:
            s.marker.size = 6
        chart.series.append(s)
    return chart


def _error_bars(s: Series, minus: Reference, plus: Reference) -> None:
    def source(ref: Reference) -> NumDataSource:
        return NumDataSource(numRef=NumRef(f=str(ref)))

    s.errBars = ErrorBars(errDir="y", errBarType="both", errValType="cust",
                          minus=source(minus), plus=source(plus))  # fmt: skip


def _line_chart(
    title: str,
    x_title: str,
    y_title: str,
    categories: Reference,
    series: list[tuple[str, Reference]],
) -> LineChart:
    """A chart over the real load levels (the level labels as categories, evenly spaced like
    the HTML's), one line per series."""  # fmt: skip
    chart = LineChart()
    chart.title = title
    chart.style = 2
    chart.width, chart.height = CHART_W, CHART_H
    chart.legend.position = "b"
    for name, ref in series:
        chart.add_data(ref)
        chart.series[-1].tx = SeriesLabel(v=name)
        chart.series[-1].smooth = False
        chart.series[-1].marker.symbol = "circle"
    chart.set_categories(categories)
    _axis_titles(chart, x_title, y_title)
    return chart


def _overlay_chart(ws: Worksheet, overlay: Overlay, first: int, last: int) -> LineChart:
    cats = Reference(ws, min_col=1, min_row=first, max_row=last)
    throughput, latency = LineChart(), LineChart()
    offset = 1 if overlay.unit == "MB/s" else 0
    for j, line in enumerate(overlay.lines):
        col = 2 + 3 * j
        throughput.add_data(Reference(ws, min_col=col + offset, min_row=first, max_row=last))
        throughput.series[-1].tx = SeriesLabel(v=line.label)
        latency.add_data(Reference(ws, min_col=col + 2, min_row=first, max_row=last))
        latency.series[-1].tx = SeriesLabel(v=f"{line.label} latency")
        latency.series[-1].graphicalProperties.line.dashStyle = "dash"
    for chart in (throughput, latency):
        chart.set_categories(cats)
        for series in chart.series:
            series.smooth = False
            series.marker.symbol = "circle"
    throughput.title = overlay.title
    throughput.style = 2
    throughput.width, throughput.height = CHART_W, CHART_H
    throughput.legend.position = "b"
    _axis_titles(throughput, overlay.x_label, f"throughput ({overlay.unit})")
    latency.y_axis.title = "mean latency (µs)"
    latency.y_axis.axId = 200
    latency.y_axis.crosses = "max"
    throughput.x_axis.delete = False
    throughput.y_axis.delete = False
    latency.y_axis.delete = False
    throughput += latency
    return throughput
