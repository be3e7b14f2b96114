"""One workbook sheet per workload: per curve panel its table (level, throughput, mean and p99
latency, the ceiling, the marks, the 95 % interval of repeats) and two charts beside it,
throughput with its optimal and max (and flagged points) marked, and latency.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openpyxl.chart import Reference
from openpyxl.chart.series import SeriesLabel
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from arraybench.report.model import REMARK_MARK, CurvePanel, WorkloadSection
from arraybench.report.render.xlsx.cells import (
    HEADING,
    INT_FORMAT,
    MUTED,
    NUM_FORMAT,
    OPTIMAL_FILL,
    TITLE,
    _get,
    _header,
    _print_wide,
    _put,
    _widths,
)
from arraybench.report.render.xlsx.charts import _error_bars, _line_chart
from arraybench.report.render.xlsx.figures import visible_marker
from arraybench.report.sections.headlines import OPTIMAL_RULE

PANEL_ROWS = 17  # rows a panel block takes at least: the height of its charts and a gap

# the HTML's colours: flagged red, optimal green, max purple (LibreOffice needs them set)
MARK_COLORS = {"x": "C81E1E", "diamond": "1A7F37", "triangle": "5B2A86"}


# ---------------------------------------------------------------- a panel


def _marks(panel: CurvePanel, i: int) -> str:
    named = (
        ("optimal", panel.optimal_index),
        ("max", panel.max_index),
        ("min latency", panel.min_latency_index),
    )
    marks = [name for name, index in named if index == i]
    flagged = panel.flagged[i] if i < len(panel.flagged) else ""
    remark = panel.remarks[i] if i < len(panel.remarks) else ""
    return ", ".join(marks + ([f"flagged: {flagged}"] if flagged else [])
                     + ([f"{REMARK_MARK} remark: {remark}"] if remark else []))  # fmt: skip


def _ci_columns(panel: CurvePanel) -> list[tuple[float | None, float | None]] | None:
    """Per point the distances from the throughput down and up to its 95 % interval (what an
    Excel error bar takes); None when no point was repeated."""
    if not any(panel.throughput_ci):
        return None
    out: list[tuple[float | None, float | None]] = []
    for i, ci in enumerate(panel.throughput_ci):
        v = _get(panel.throughput, i)
        out.append((None, None) if ci is None or v is None else (v - ci[0], ci[1] - v))
    return out


def _panel_block(ws: Worksheet, row: int, panel: CurvePanel) -> int:
    """The panel's table from `row` and its two charts beside it; returns the next free row."""
    _put(ws, row, 1, f"{panel.mix_label} — {panel.throughput_unit} and latency against "
                     f"{panel.x_label}")  # fmt: skip
    ws.cell(row, 1).font = HEADING
    columns = _panel_columns(panel)
    _header(ws, row + 1, columns)
    first = row + 2
    _panel_rows(ws, first, panel)
    last = first + max(len(panel.x_values), 1) - 1
    mark_col = len(columns) + 1  # the optimal and max throughput alone, for their markers
    _header(ws, row + 1, ["optimal", "max", "flagged"], col=mark_col)
    for i in range(len(panel.x_values)):
        for k, index in enumerate((panel.optimal_index, panel.max_index)):
            if i == index:
                _put(ws, first + i, mark_col + k, _get(panel.throughput, i), INT_FORMAT)
        if i < len(panel.flagged) and panel.flagged[i]:
            _put(ws, first + i, mark_col + 2, _get(panel.throughput, i), INT_FORMAT)

    def ref(col: int) -> Reference:
        return Reference(ws, min_col=col, min_row=first, max_row=last)

    _panel_charts(ws, row, panel, ref, len(columns))
    return row + max(len(panel.x_values) + 4, PANEL_ROWS)


def _panel_columns(panel: CurvePanel) -> list[str]:
    """The panel table's headings: the ceiling's and the interval's columns when it has them."""
    unit = panel.throughput_unit
    columns = [
        "level",
        panel.x_label,
        f"throughput ({unit})",
        "mean latency (µs)",
        "p99 latency (µs)",
        "marks",
    ]
    if panel.ceiling is not None:
        columns.insert(5, f"fabric ceiling ({unit})")
    if _ci_columns(panel) is not None:
        columns += [f"95 % interval: below ({unit})", f"95 % interval: above ({unit})"]
    return columns


def _panel_rows(ws: Worksheet, first: int, panel: CurvePanel) -> None:
    """One row per load level from `first`, the optimal point's row shaded."""
    bars = _ci_columns(panel)
    for i, x in enumerate(panel.x_values):
        r = first + i
        tick = panel.x_ticks[i] if i < len(panel.x_ticks) else str(x)
        values: list[Any] = [
            tick,
            x,
            _get(panel.throughput, i),
            _get(panel.lat_mean_us, i),
            _get(panel.lat_p99_us, i),
        ]
        if panel.ceiling is not None:
            values.append(panel.ceiling)
        values.append(_marks(panel, i))
        if bars is not None:
            values += list(bars[i])
        for col, value in enumerate(values, start=1):
            fmt = INT_FORMAT if col == 3 or (panel.ceiling is not None and col == 6) else NUM_FORMAT
            _put(ws, r, col, value, None if col == 2 else fmt)
            if i == panel.optimal_index:
                ws.cell(r, col).fill = OPTIMAL_FILL


def _panel_charts(
    ws: Worksheet, row: int, panel: CurvePanel, ref: Callable[[int], Reference], width: int
) -> None:
    """Throughput (with the ceiling, the flagged, optimal and max marks, the interval's error
    bars) and latency, side by side right of the table (`width` columns) and its marks."""
    unit, mark_col = panel.throughput_unit, width + 1
    series = [(f"throughput ({unit})", ref(3))]
    if panel.ceiling is not None:
        series.append((f"fabric ceiling ({unit})", ref(6)))
    symbols = ["diamond", "triangle"]
    if any(panel.flagged):  # before the optimal and max marks, which stay last
        series.append(("flagged: see table", ref(mark_col + 2)))
        symbols.insert(0, "x")
    series += [("optimal", ref(mark_col)), ("max", ref(mark_col + 1))]
    chart_col = mark_col + 4
    throughput = _line_chart(f"{panel.mix_label}: throughput", panel.x_label,
                             f"throughput ({unit})", ref(1), series)  # fmt: skip
    for s, symbol in zip(throughput.series[-len(symbols) :], symbols, strict=True):
        s.marker = visible_marker(symbol, MARK_COLORS[symbol], 10)  # the marks alone, no line
        s.graphicalProperties.line.noFill = True
    if _ci_columns(panel) is not None:  # the 95 % interval of the repeats, as error bars
        _error_bars(throughput.series[0], ref(width - 1), ref(width))
        throughput.series[0].tx = SeriesLabel(v=f"throughput ({unit}), bars: 95 % interval "
                                              f"({panel.repeats} repeats)")  # fmt: skip
    ws.add_chart(throughput, f"{get_column_letter(chart_col)}{row}")
    lat_series = [("mean latency (µs)", ref(4)), ("p99 latency (µs)", ref(5))]
    axis = "latency (µs, log scale)" if panel.log_latency else "latency (µs)"
    latency = _line_chart(f"{panel.mix_label}: latency", panel.x_label, axis, ref(1),
                          lat_series)  # fmt: skip
    if panel.log_latency:  # mean and p99 span decades: as the HTML and PDF draw them
        latency.y_axis.scaling.logBase = 10
    ws.add_chart(latency, f"{get_column_letter(chart_col + 9)}{row}")


# ---------------------------------------------------------------- a sheet


def _section_sheet(ws: Worksheet, section: WorkloadSection) -> None:
    _put(ws, 1, 1, section.title)
    ws.cell(1, 1).font = TITLE
    _put(
        ws,
        2,
        1,
        f"marks: optimal = {OPTIMAL_RULE}; "
        "max = highest throughput; min latency = lowest mean latency",
    )
    ws.cell(2, 1).font = MUTED
    row = 4
    for panel in section.panels:
        row = _panel_block(ws, row, panel)
    if not section.panels:
        _put(ws, row, 1, "no series: nothing measured for this workload")
    _widths(ws, {1: 10, 2: 16, 3: 18, 4: 18, 5: 16, 6: 22, 7: 22})
    _print_wide(ws)
