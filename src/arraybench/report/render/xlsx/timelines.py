"""The workbook's Timelines sheet: each 1-second series side by side, at most
`MAX_TIMELINE_ROWS` rows each (the minimum and maximum of each bucket kept), its events and
findings beside it, and its charts against time and against data written.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from openpyxl.chart import Reference
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from arraybench.report.model import ReportModel, Timeline
from arraybench.report.render.xlsx.cells import HEADING, MUTED, NUM_FORMAT, _get, _header, _put
from arraybench.report.render.xlsx.charts import _scatter

MAX_TIMELINE_ROWS = 2000
CPU_COLUMN = "controller CPU (%)"


TIMELINE_CHART_ROWS = 17


FEW_SAMPLES = 60


# ---------------------------------------------------------------- rows kept


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


# ---------------------------------------------------------------- the sheet


def _timeline_block(ws: Worksheet, col: int, t: Timeline, chart_col: int, chart_row: int) -> int:
    """Timeline `t` in columns from `col`, its charts at (chart_col, chart_row); returns the
    number of chart rows used."""
    columns = _timeline_columns(t)
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
    _beside(ws, col + len(columns) + 1, t)
    first, last = 4, 3 + max(len(keep), 1)

    def ref(c: int) -> Reference:
        return Reference(ws, min_col=col + c, min_row=first, max_row=last)

    few = len(keep) <= FEW_SAMPLES  # markers, so isolated samples between gaps still show
    _timeline_charts(ws, t, ref, len(columns), few, (chart_col, chart_row))
    return TIMELINE_CHART_ROWS


def _timeline_columns(t: Timeline) -> list[tuple[str, Sequence[float | None]]]:
    """The timeline's columns: time, throughput, mean latency, and the kernel's, the array's
    and the GB written when it has them."""
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
    if t.controller_cpu is not None:
        columns.append((CPU_COLUMN, t.controller_cpu))
    if t.gb_written is not None:  # last: its chart's x (ref(width - 1))
        columns.append(("GB written", t.gb_written))
    return columns


def _beside(ws: Worksheet, extra: int, t: Timeline) -> None:
    """The timeline's events and findings in the columns from `extra`."""
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


def _timeline_charts(
    ws: Worksheet,
    t: Timeline,
    ref: Callable[[int], Reference],
    width: int,
    few: bool,
    at: tuple[int, int],
) -> None:
    """Throughput (and the kernel's) and latency against time, throughput against data
    written when known, side by side from cell `at` (column, row)."""
    unit, (chart_col, chart_row) = t.throughput_unit, at
    series = [(f"throughput ({unit})", ref(1))]
    if t.kernel is not None:
        series.append((f"kernel ({unit})", ref(3)))
    x_ref = ref(0)
    anchor = f"{get_column_letter(chart_col)}{chart_row}"
    ws.add_chart(
        _scatter(t.title, t.x_label, f"throughput ({unit})", x_ref, series, markers=few), anchor
    )
    anchor = f"{get_column_letter(chart_col + 9)}{chart_row}"
    latency = [("mean latency (µs)", ref(2))]
    ws.add_chart(
        _scatter(f"{t.title}: latency", t.x_label, "mean latency (µs)", x_ref, latency,
                 markers=few),
        anchor,
    )  # fmt: skip
    col = chart_col + 18
    if t.controller_cpu is not None:  # beside the throughput and latency, same x (seconds)
        cpu = [(CPU_COLUMN, ref(width - 1 - (t.gb_written is not None)))]
        chart = _scatter(f"{t.title}: array controller CPU", t.x_label, CPU_COLUMN, x_ref, cpu,
                         markers=few)  # fmt: skip
        ws.add_chart(chart, f"{get_column_letter(col)}{chart_row}")
        col += 9
    if t.gb_written is not None:
        gb_ref = ref(width - 1)
        anchor = f"{get_column_letter(col)}{chart_row}"
        series = [(f"throughput ({unit})", ref(1))]
        ws.add_chart(
            _scatter(f"{t.title}: against data written", "GB written", f"throughput ({unit})",
                     gb_ref, series, markers=few),
            anchor,
        )  # fmt: skip


def _timeline_width(t: Timeline) -> int:
    """Columns a timeline block takes: its data, events, findings and one blank."""
    data = len(_timeline_columns(t))
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
