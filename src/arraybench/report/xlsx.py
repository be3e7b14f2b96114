"""Excel workbook of a run: the report's numbers as numbers, with native Excel charts.

Renders a `ReportModel` only. Sheets: Summary (run, summary table, acceptance verdicts, notes),
one sheet per workload (a table and two charts per curve panel: throughput and latency against
the load level), Points (every point and metric), Tables (the model's tables and the
overlay curves), Timelines (1-second series, at most MAX_TIMELINE_ROWS rows each, with charts)
and Provenance (where the numbers came from, versions, the plan and the job files).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.chart import LineChart, Reference, ScatterChart, Series
from openpyxl.chart.data_source import NumDataSource, NumRef
from openpyxl.chart.error_bar import ErrorBars
from openpyxl.chart.series import SeriesLabel
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter, quote_sheetname
from openpyxl.worksheet.hyperlink import Hyperlink
from openpyxl.worksheet.worksheet import Worksheet

from arraybench.report.escape import starts_formula
from arraybench.report.model import (
    REMARK_MARK,
    CurvePanel,
    Overlay,
    ReportModel,
    ReportTable,
    Timeline,
    WorkloadSection,
)
from arraybench.report.pointstable import column_title
from arraybench.report.sections.headlines import OPTIMAL_RULE, SUMMARY_LINK
from arraybench.report.xlsxfigures import figures_sheet, visible_marker

MAX_TIMELINE_ROWS = 2000
MAX_SHEET_TITLE = 31
FIXED_SHEETS = ("Summary", "Sheets", "Figures", "Points", "Tables", "Timelines", "Provenance")
CHART_W, CHART_H = 16.0, 7.5  # cm
PANEL_ROWS = 17  # rows a panel block takes at least: the height of its charts and a gap
TIMELINE_CHART_ROWS = 17
FEW_SAMPLES = 60

BOLD = Font(bold=True)
TITLE = Font(bold=True, size=16)
HEADING = Font(bold=True, size=13)
MUTED = Font(italic=True, color="6B7280")
MONO = Font(name="Consolas", size=10)
HEAD_FILL = PatternFill("solid", fgColor="F3F4F6")
OPTIMAL_FILL = PatternFill("solid", fgColor="E8F5E9")
PASS_FILL = PatternFill("solid", fgColor="DCFCE7")
FAIL_FILL = PatternFill("solid", fgColor="FEE2E2")
PASS_FONT = Font(bold=True, color="166534")
FAIL_FONT = Font(bold=True, color="991B1B")
WRAP = Alignment(wrap_text=True, vertical="top")

# the HTML's colours: flagged red, optimal green, max purple (LibreOffice needs them set)
MARK_COLORS = {"x": "C81E1E", "diamond": "1A7F37", "triangle": "5B2A86"}
INT_FORMAT = "#,##0"
NUM_FORMAT = "#,##0.0"
PLAIN_NUMBER = re.compile(r"-?\d+(\.\d+)?")
INVALID_TITLE = re.compile(r"[\\/*?:\[\]]")


# ---------------------------------------------------------------- cells


def _put(ws: Worksheet, row: int, col: int, value: Any, number_format: str | None = None) -> None:
    """One cell: numbers as numbers (NaN/inf and None left empty), text never a formula."""
    if value is None:
        return
    if isinstance(value, bool):
        value = str(value)
    if isinstance(value, int | float):
        if not math.isfinite(value):
            return
        cell = ws.cell(row, col, value)
        if number_format:
            cell.number_format = number_format
        return
    text = ILLEGAL_CHARACTERS_RE.sub("", str(value))
    cell = ws.cell(row, col, text)
    cell.data_type = "s"  # "=..." stays text: a workload name is never run as a formula
    if starts_formula(text):
        # Excel's own neutraliser, what typing '=1+1 stores: shown as typed, without the
        # quote, and it stays text when someone edits the cell
        cell.quotePrefix = True


def _row(
    ws: Worksheet,
    row: int,
    values: Sequence[Any],
    *,
    col: int = 1,
    font: Font | None = None,
    fill: PatternFill | None = None,
) -> None:
    for i, value in enumerate(values):
        _put(ws, row, col + i, value)
        cell = ws.cell(row, col + i)
        if font:
            cell.font = font
        if fill:
            cell.fill = fill


def _header(ws: Worksheet, row: int, values: Sequence[str], col: int = 1) -> None:
    _row(ws, row, values, col=col, font=BOLD, fill=HEAD_FILL)


def _widths(ws: Worksheet, widths: dict[int, float]) -> None:
    for col, width in widths.items():
        ws.column_dimensions[get_column_letter(col)].width = width


def _print_wide(ws: Worksheet) -> None:
    """Printed landscape, one page wide (as many pages tall as it takes)."""
    ws.page_setup.orientation = "landscape"
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0


def _number_format(column: str) -> str:
    return INT_FORMAT if column.endswith(("_ios", "_bytes")) else NUM_FORMAT


def _table_cell(text: str) -> str | float:
    """A model table's cell: a plain number ("42", "-1.5") becomes a number, the rest stays."""
    return float(text) if PLAIN_NUMBER.fullmatch(text.strip()) else text


# ---------------------------------------------------------------- sheet names


SHORTER = (("Sequential", "Seq"), ("Random", "Rand"), (" devices", " dev"), (" device", " dev"),
           (" hosts", " h"), (" host", " h"), (" (backend)", ""), (", ", " "),
           (" (frontend)", " front"), (" %", "%"), ("Group ", "G"), ("random ", "rand "),
           ("sequential ", "seq "), ("- ", " "), ("write", "wr"), ("read", "rd"),
           ("async qd", "qd"))  # fmt: skip
ELLIPSIS = "…"  # where a name too long was cut: its start and its end (what tells it apart)


def _shorter(name: str) -> str:
    """A workload name in Excel's 31 characters, in words a reader still knows:
    "Random 8 KiB (frontend), 4 devices, 2 hosts" -> "Rand 8 KiB (frontend) 4 dev 2 h"."""
    for long, short in SHORTER:
        if len(name) <= MAX_SHEET_TITLE:
            break
        name = name.replace(long, short)
    return _fit(name, MAX_SHEET_TITLE)


def _fit(name: str, limit: int) -> str:
    """At most `limit` characters: its start and its end (the block size, the direction)."""
    if len(name) <= limit:
        return name
    head = limit // 2 - 1
    tail = limit - head - len(ELLIPSIS)
    return name[:head].rstrip() + ELLIPSIS + name[-tail:].lstrip()


def sheet_title(name: str, used: set[str]) -> str:
    """A valid, unique (case-insensitively, against `used`) Excel sheet name; adds it to used."""
    base = INVALID_TITLE.sub("-", ILLEGAL_CHARACTERS_RE.sub("", name))
    base = _shorter(" ".join(base.split()).strip("'").strip() or "Workload")
    title = base[:MAX_SHEET_TITLE].rstrip().rstrip("'")
    n = 1
    while title.lower() in used or title.lower() == "history":
        n += 1
        suffix = f" ({n})"
        title = _fit(base, MAX_SHEET_TITLE - len(suffix)).rstrip().rstrip("'") + suffix
    used.add(title.lower())
    return title


# ---------------------------------------------------------------- charts


def _axis_titles(chart: ScatterChart | LineChart, x_title: str, y_title: str) -> None:
    chart.x_axis.title = x_title
    chart.y_axis.title = y_title
    chart.x_axis.delete = False  # openpyxl >= 3.1 hides axes in recent Excel otherwise
    chart.x_axis.axPos = "b"
    chart.y_axis.delete = False


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


def _metadata(model: ReportModel) -> list[tuple[str, str]]:
    labels = ", ".join(f"{k}={v}" for k, v in model.labels.items())
    return [
        ("Run id", model.run_id),
        ("Scenario", model.scenario or "–"),
        ("Status", model.status),
        ("Labels", labels or "–"),
        ("Started", model.started),
        ("Finished", model.finished or "–"),
        ("arraybench", model.arraybench_version),
        ("fio", model.fio_version),
        ("Host", model.host),
        ("Kernel", model.kernel),
        ("Latency bound", model.latency_bound),
        ("Targets", "\n".join(model.targets) or "–"),
    ]


def _panel_numbers(panel: CurvePanel | None) -> list[float | None]:
    """Optimal throughput and its mean latency, max throughput, min mean latency."""
    if panel is None:
        return [None] * 4

    def at(values: Sequence[float | None], i: int | None) -> float | None:
        return values[i] if i is not None and 0 <= i < len(values) else None

    return [
        at(panel.throughput, panel.optimal_index),
        at(panel.lat_mean_us, panel.optimal_index),
        at(panel.throughput, panel.max_index),
        at(panel.lat_mean_us, panel.min_latency_index),
    ]


def _verdict_style(ws: Worksheet, row: int, col: int, text: str) -> None:
    if text == "PASS":
        ws.cell(row, col).fill, ws.cell(row, col).font = PASS_FILL, PASS_FONT
    elif text == "FAIL":
        ws.cell(row, col).fill, ws.cell(row, col).font = FAIL_FILL, FAIL_FONT


def _write_table(ws: Worksheet, row: int, table: ReportTable, *, verdicts: bool = False) -> int:
    """A model table from `row`; returns the next free row (after one blank)."""
    _put(ws, row, 1, table.title)
    ws.cell(row, 1).font = HEADING
    row += 1
    if table.caption:
        _put(ws, row, 1, table.caption)
        ws.cell(row, 1).font = MUTED
        row += 1
    _header(ws, row, table.columns)
    row += 1
    for cells in table.rows:
        for col, text in enumerate(cells, start=1):
            _put(ws, row, col, text if verdicts else _table_cell(text))
            if verdicts:
                _verdict_style(ws, row, col, text)
        row += 1
    return row + 1


def _summary_sheet(ws: Worksheet, model: ReportModel, sheet_of: dict[str, str]) -> None:
    ws.title = "Summary"
    _put(ws, 1, 1, model.title)
    ws.cell(1, 1).font = TITLE
    scenario = f" · scenario {model.scenario}" if model.scenario else ""
    _put(ws, 2, 1, f"arraybench report · run {model.run_id}{scenario}")
    ws.cell(2, 1).font = MUTED
    row = 4
    for key, value in _metadata(model):
        _put(ws, row, 1, key)
        ws.cell(row, 1).font = BOLD
        _put(ws, row, 2, value)
        ws.cell(row, 2).alignment = WRAP
        row += 1
    row += 1
    _put(ws, row, 1, "Summary")
    ws.cell(row, 1).font = HEADING
    row += 1
    unit_of = {(s.title, p.mix_label): p for s in model.sections for p in s.panels}
    _header(
        ws,
        row,
        [
            "Workload",
            "Mix",
            "Optimal (throughput @ mean latency)",
            "Maximum, minimum latency",
            f"Within the bound ({model.latency_bound})",
            "Unit",
            "Optimal throughput",
            "Optimal mean latency (µs)",
            "Max throughput",
            "Min mean latency (µs)",
        ],
    )
    row += 1
    for summary in model.summary:
        for mix in model.summary_columns:
            cell = summary.cells.get(mix)
            if cell is None:
                continue
            panel = unit_of.get((summary.workload, mix))
            _row(
                ws,
                row,
                [
                    summary.workload,
                    mix,
                    cell.optimal,
                    cell.extremes,
                    cell.bounded,
                    panel.throughput_unit if panel else None,
                ],
            )
            for i, number in enumerate(_panel_numbers(panel)):
                _put(ws, row, 7 + i, number, INT_FORMAT if i % 2 == 0 else NUM_FORMAT)
            target = sheet_of.get(summary.workload)
            if target:
                ws.cell(row, 1).hyperlink = Hyperlink(
                    ref=ws.cell(row, 1).coordinate, location=f"{quote_sheetname(target)}!A1"
                )
                ws.cell(row, 1).font = Font(color="1F5FA8", underline="single")
            ws.cell(row, 3).font = BOLD
            row += 1
    _put(
        ws,
        row,
        1,
        f"Optimal: {OPTIMAL_RULE}. Numbers in the workload sheets. {SUMMARY_LINK}",
    )
    ws.cell(row, 1).font = MUTED
    row += 2
    if model.verdicts:
        _put(ws, row, 1, "Acceptance verdicts")
        ws.cell(row, 1).font = HEADING
        row += 1
        for table in model.verdicts:
            row = _write_table(ws, row, table, verdicts=True)
    if model.notes:
        _put(ws, row, 1, "Notes")
        ws.cell(row, 1).font = HEADING
        row += 1
        for note in model.notes:
            _put(ws, row, 1, note)
            row += 1
    _widths(ws, {1: 26, 2: 40, 3: 30, 4: 32, 5: 40, 6: 8, 7: 16, 8: 16, 9: 16, 10: 16})
    _print_wide(ws)


# ---------------------------------------------------------------- workload sheets


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


def _error_bars(s: Series, minus: Reference, plus: Reference) -> None:
    def source(ref: Reference) -> NumDataSource:
        return NumDataSource(numRef=NumRef(f=str(ref)))

    s.errBars = ErrorBars(errDir="y", errBarType="both", errValType="cust",
                          minus=source(minus), plus=source(plus))  # fmt: skip


def _panel_block(ws: Worksheet, row: int, panel: CurvePanel) -> int:
    """The panel's table from `row` and its two charts beside it; returns the next free row."""
    unit = panel.throughput_unit
    _put(ws, row, 1, f"{panel.mix_label} — {unit} and latency against {panel.x_label}")
    ws.cell(row, 1).font = HEADING
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
    bars = _ci_columns(panel)
    if bars is not None:
        columns += [f"95 % interval: below ({unit})", f"95 % interval: above ({unit})"]
    _header(ws, row + 1, columns)
    first = row + 2
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
    if bars is not None:  # the 95 % interval of the repeats, as error bars on the line
        _error_bars(throughput.series[0], ref(len(columns) - 1), ref(len(columns)))
        throughput.series[0].tx = SeriesLabel(v=f"throughput ({unit}), bars: 95 % interval "
                                              f"({panel.repeats} repeats)")  # fmt: skip
    ws.add_chart(throughput, f"{get_column_letter(chart_col)}{row}")
    lat_series = [("mean latency (µs)", ref(4)), ("p99 latency (µs)", ref(5))]
    latency = _line_chart(f"{panel.mix_label}: latency", panel.x_label, "latency (µs)", ref(1),
                          lat_series)  # fmt: skip
    ws.add_chart(latency, f"{get_column_letter(chart_col + 9)}{row}")
    return row + max(len(panel.x_values) + 4, PANEL_ROWS)


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


def _get(values: Sequence[float | None], i: int) -> float | None:
    return values[i] if i < len(values) else None


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


# ---------------------------------------------------------------- points, tables


def _points_sheet(ws: Worksheet, model: ReportModel) -> None:
    fixed = ["Series", "Level", "Workers", "iodepth", "Targets"]
    _header(ws, 1, fixed + [column_title(c) for c in model.point_columns])
    for r, p in enumerate(model.points, start=2):
        _row(ws, r, [p.series, p.level, p.workers, p.iodepth, p.targets])
        for c, name in enumerate(model.point_columns, start=len(fixed) + 1):
            _put(ws, r, c, p.values.get(name), _number_format(name))
    ws.freeze_panes = "C2"
    last = get_column_letter(len(fixed) + len(model.point_columns))
    ws.auto_filter.ref = f"A1:{last}{max(len(model.points) + 1, 2)}"
    _widths(ws, {1: 22, 2: 8, 3: 9, 4: 9, 5: 30})
    for c in range(len(fixed) + 1, len(fixed) + len(model.point_columns) + 1):
        ws.column_dimensions[get_column_letter(c)].width = 15


def _overlay_table(ws: Worksheet, row: int, overlay: Overlay) -> int:
    """The overlay's numbers and, beside them, one native chart: throughput per line on the
    left axis, mean latency (dashed) on the right, the real load levels on the x axis."""
    _put(ws, row, 1, f"{overlay.title} (curves together)")
    ws.cell(row, 1).font = HEADING
    columns = [overlay.x_label]
    for line in overlay.lines:
        columns += [f"{line.label} IOPS", f"{line.label} MB/s", f"{line.label} mean latency (µs)"]
    _header(ws, row + 1, columns)
    for i, tick in enumerate(overlay.x_ticks):
        r = row + 2 + i
        _put(ws, r, 1, str(tick))  # a category: the level as the report names it
        for j, line in enumerate(overlay.lines):
            for k, values in enumerate((line.iops, line.mbps, line.lat_mean_us)):
                _put(ws, r, 2 + 3 * j + k, _get(values, i), NUM_FORMAT)
    first, last = row + 2, row + 1 + len(overlay.x_ticks)
    if overlay.x_ticks and overlay.lines:
        anchor = f"{get_column_letter(len(columns) + 2)}{row}"
        ws.add_chart(_overlay_chart(ws, overlay, first, last), anchor)
    return max(row + 3 + len(overlay.x_ticks), row + OVERLAY_CHART_ROWS)


OVERLAY_CHART_ROWS = 18


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


def _tables_sheet(ws: Worksheet, model: ReportModel) -> None:
    row = 1
    for table in [t for t in model.tables + model.appendix if t.medium != "print"]:
        row = _write_table(ws, row, table)
    for overlay in model.overlays:
        row = _overlay_table(ws, row, overlay)
    if row == 1:
        _put(ws, 1, 1, "no tables in this run")
    _widths(ws, {c: 18 for c in range(1, 12)})


# ---------------------------------------------------------------- timelines


def downsample(values: Sequence[float | None], limit: int = MAX_TIMELINE_ROWS) -> list[int]:
    """Indices to keep: all if they fit, else per bucket the sample of its minimum and its
    maximum (and the first and last samples), in time order, at most `limit` of them."""
    n = len(values)
    if n <= limit:
        return list(range(n))
    buckets = max((limit - 2) // 2, 1)
    keep = {0, n - 1}
    for b in range(buckets):
        lo, hi = b * n // buckets, (b + 1) * n // buckets
        finite = [
            (v, i) for i in range(lo, hi) if (v := values[i]) is not None and math.isfinite(v)
        ]
        if finite:
            keep.add(min(finite)[1])
            keep.add(max(finite)[1])
        elif hi > lo:
            keep.add(lo)
    return sorted(keep)


def _timeline_block(ws: Worksheet, col: int, t: Timeline, chart_col: int, chart_row: int) -> int:
    """Timeline `t` in columns from `col`, its charts at (chart_col, chart_row); returns the
    number of chart rows used."""
    unit = t.throughput_unit
    columns: list[tuple[str, Sequence[float | None]]] = [
        (t.x_label, t.t_s),
        (f"throughput ({unit})", t.throughput),
        ("mean latency (µs)", t.lat_mean_us),
    ]
    if t.kernel is not None:
        columns.append((f"kernel ({unit})", t.kernel))
    if t.array is not None:
        columns.append((f"array ({unit})", t.array))
    if t.gb_written is not None:
        columns.append(("GB written", t.gb_written))
    keep = downsample(t.throughput)
    _put(ws, 1, col, t.title)
    ws.cell(1, col).font = HEADING
    shown = f"{len(keep)} of {len(t.t_s)} samples" + (
        " (min and max per bucket)" if len(keep) < len(t.t_s) else ""
    )
    _put(ws, 2, col, shown)
    ws.cell(2, col).font = MUTED
    _header(ws, 3, [name for name, _ in columns], col=col)
    for r, i in enumerate(keep, start=4):
        for c, (_, values) in enumerate(columns):
            _put(ws, r, col + c, _get(values, i), NUM_FORMAT if c else None)
    extra = col + len(columns) + 1
    if t.events:
        _header(ws, 3, ["event at (s)", "event"], col=extra)
        for r, (at, label) in enumerate(t.events, start=4):
            _put(ws, r, extra, at)
            _put(ws, r, extra + 1, label)
        extra += 2
    found = t.findings + ([f"{t.shade[0]:g} to {t.shade[1]:g} s: {t.shade[2]}"] if t.shade else [])
    if found:  # a logged warm-up's seconds said: they are in the table, not in the figures
        _header(ws, 3, ["findings"], col=extra)
        for r, line in enumerate(found, start=4):
            _put(ws, r, extra, line)
    first, last = 4, 3 + max(len(keep), 1)

    def ref(c: int) -> Reference:
        return Reference(ws, min_col=col + c, min_row=first, max_row=last)

    series = [(f"throughput ({unit})", ref(1))]
    if t.kernel is not None:
        series.append((f"kernel ({unit})", ref(3)))
    x_ref = ref(0)
    few = len(keep) <= FEW_SAMPLES  # markers, so isolated samples between gaps still show
    anchor = f"{get_column_letter(chart_col)}{chart_row}"
    ws.add_chart(
        _scatter(t.title, t.x_label, f"throughput ({unit})", x_ref, series, markers=few), anchor
    )
    anchor = f"{get_column_letter(chart_col + 9)}{chart_row}"
    ws.add_chart(
        _scatter(
            f"{t.title}: latency",
            t.x_label,
            "mean latency (µs)",
            x_ref,
            [("mean latency (µs)", ref(2))],
            markers=few,
        ),
        anchor,
    )
    if t.gb_written is not None:
        gb_ref = ref(len(columns) - 1)
        anchor = f"{get_column_letter(chart_col + 18)}{chart_row}"
        ws.add_chart(
            _scatter(
                f"{t.title}: against data written",
                "GB written",
                f"throughput ({unit})",
                gb_ref,
                [(f"throughput ({unit})", ref(1))],
                markers=few,
            ),
            anchor,
        )
    return TIMELINE_CHART_ROWS


def _timeline_width(t: Timeline) -> int:
    """Columns a timeline block takes: its data, events, findings and one blank."""
    data = 3 + (t.kernel is not None) + (t.gb_written is not None)
    return data + 1 + (2 if t.events else 0) + (1 if t.findings else 0) + 1


def _timelines_sheet(ws: Worksheet, model: ReportModel) -> None:
    if not model.timelines:
        _put(ws, 1, 1, "no time series in this run")
        return
    widths = [_timeline_width(t) for t in model.timelines]
    chart_col = sum(widths) + 1
    col, chart_row = 1, 1
    for t, width in zip(model.timelines, widths, strict=True):
        chart_row += _timeline_block(ws, col, t, chart_col, chart_row)
        col += width
    ws.freeze_panes = "A4"


# ---------------------------------------------------------------- provenance


def _provenance_sheet(ws: Worksheet, model: ReportModel) -> None:
    row = 1
    _put(ws, row, 1, "Provenance")
    ws.cell(row, 1).font = HEADING
    row += 1
    _header(ws, row, ["what", "value"])
    row += 1
    for key, value in model.provenance:
        _row(ws, row, [key, value])
        ws.cell(row, 2).alignment = WRAP
        row += 1
    if not model.provenance:
        _put(ws, row, 1, "no provenance recorded for this run")
        row += 1
    row += 1
    _put(ws, row, 1, "Versions")
    ws.cell(row, 1).font = HEADING
    row += 1
    for key, value in (
        ("arraybench", model.arraybench_version),
        ("fio", model.fio_version),
        ("host", model.host),
        ("kernel", model.kernel),
    ):
        _row(ws, row, [key, value])
        row += 1
    row += 1
    _put(ws, row, 1, "Plan (YAML)")
    ws.cell(row, 1).font = HEADING
    row += 1
    for line in model.plan_yaml.splitlines():
        _put(ws, row, 1, line)
        ws.cell(row, 1).font = MONO
        row += 1
    if model.job_files:
        row += 1
        _put(ws, row, 1, f"Job files ({len(model.job_files)})")
        ws.cell(row, 1).font = HEADING
        row += 1
        for key, text in model.job_files.items():
            _put(ws, row, 1, key)
            ws.cell(row, 1).font = BOLD
            row += 1
            for line in text.splitlines():
                _put(ws, row, 1, line)
                ws.cell(row, 1).font = MONO
                row += 1
    _widths(ws, {1: 34, 2: 80})


# ---------------------------------------------------------------- the workbook


def _index_sheet(ws: Worksheet, sheet_of: dict[str, str]) -> None:
    """Every workload sheet under its full name, linked: the sheet names are abbreviated."""
    _put(ws, 1, 1, "Workload sheets")
    ws.cell(1, 1).font = TITLE
    _header(ws, 3, ["Workload", "Sheet"])
    for row, (name, title) in enumerate(sheet_of.items(), start=4):
        _put(ws, row, 1, name)
        _put(ws, row, 2, title)
        ws.cell(row, 2).hyperlink = Hyperlink(ref=ws.cell(row, 2).coordinate,
                                              location=f"{quote_sheetname(title)}!A1")  # fmt: skip
        ws.cell(row, 2).font = Font(color="1F5FA8", underline="single")
    _widths(ws, {1: 60, 2: 34})


def workload_sheet_titles(model: ReportModel) -> list[str]:
    """The sheet name of each workload section, in order: valid, unique, beside the fixed."""
    used = {name.lower() for name in FIXED_SHEETS}
    return [sheet_title(section.title, used) for section in model.sections]


def write_xlsx(model: ReportModel, path: Path) -> None:
    """Write the report as an .xlsx workbook at `path`."""
    wb = Workbook()
    titles = workload_sheet_titles(model)
    sheet_of: dict[str, str] = {}
    for section, title in zip(model.sections, titles, strict=True):
        sheet_of.setdefault(section.title, title)
    summary = wb.active
    assert summary is not None
    _summary_sheet(summary, model, sheet_of)
    for section, title in zip(model.sections, titles, strict=True):
        _section_sheet(wb.create_sheet(title), section)
    if sheet_of:
        _index_sheet(wb.create_sheet("Sheets", 1), sheet_of)
    if model.figures:
        figures_sheet(wb.create_sheet("Figures"), model.figures)
    _points_sheet(wb.create_sheet("Points"), model)
    _tables_sheet(wb.create_sheet("Tables"), model)
    _timelines_sheet(wb.create_sheet("Timelines"), model)
    _provenance_sheet(wb.create_sheet("Provenance"), model)
    wb.properties.title = model.title
    wb.properties.creator = f"arraybench {model.arraybench_version}"
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(path)
