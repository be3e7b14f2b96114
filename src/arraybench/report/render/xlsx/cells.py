"""The workbook's cells and styles: a value written as a number or as text that is never a
formula, rows and headers, column widths, printing one page wide, model tables (verdicts
coloured), and sheet names in Excel's 31 characters that a reader still recognises.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from arraybench.report.model import ReportTable
from arraybench.report.render.escape import starts_formula

MAX_SHEET_TITLE = 31

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


def _get(values: Sequence[float | None], i: int) -> float | None:
    return values[i] if i < len(values) else None


# ---------------------------------------------------------------- model tables


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
