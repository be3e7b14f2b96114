"""Excel workbook of a run: the report's numbers as numbers, with native Excel charts.

Renders a `ReportModel` only. Sheets: Summary (run, summary table, acceptance verdicts, notes),
one sheet per workload (a table and two charts per curve panel: throughput and latency against
the load level), Points (every point and metric), Tables (the model's tables and the
overlay curves), Timelines (1-second series, at most MAX_TIMELINE_ROWS rows each, with charts)
and Provenance (where the numbers came from, versions, the plan and the job files).

This module holds the workbook and its Summary, Points, Tables and Provenance sheets; the
workload sheets are `curves.py`'s, Timelines `timelines.py`'s, Figures `figures.py`'s;
cells, styles and sheet names `cells.py`'s, native charts `charts.py`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter, quote_sheetname
from openpyxl.worksheet.hyperlink import Hyperlink
from openpyxl.worksheet.worksheet import Worksheet

from arraybench.report.model import CurvePanel, Overlay, ReportModel
from arraybench.report.pointstable import column_title
from arraybench.report.render.xlsx.cells import (
    BOLD,
    HEADING,
    INT_FORMAT,
    MONO,
    MUTED,
    NUM_FORMAT,
    TITLE,
    WRAP,
    _get,
    _header,
    _number_format,
    _print_wide,
    _put,
    _row,
    _widths,
    _write_table,
    sheet_title,
)
from arraybench.report.render.xlsx.charts import _overlay_chart
from arraybench.report.render.xlsx.curves import _section_sheet
from arraybench.report.render.xlsx.figures import figures_sheet
from arraybench.report.render.xlsx.timelines import _timelines_sheet
from arraybench.report.sections.headlines import OPTIMAL_RULE, summary_link

FIXED_SHEETS = ("Summary", "Sheets", "Figures", "Points", "Tables", "Timelines", "Provenance")


# ---------------------------------------------------------------- summary


def _metadata(model: ReportModel) -> list[tuple[str, str]]:
    labels = ", ".join(f"{k}={v}" for k, v in model.labels.items())
    return [
        *model.setup,  # customer, system under test, fabric
        ("Run id", model.run_id),
        ("Scenario", model.scenario or "–"),
        ("Status", model.status),
        ("Labels", labels or "–"),
        ("Started", model.started),
        ("Finished", model.finished or "–"),
        ("arraybench", model.arraybench_version),
        ("fio", model.engine_version),
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


SUMMARY_COLUMNS = (
    "Workload",
    "Mix",
    "Optimal (throughput @ mean latency)",
    "Maximum, minimum latency",
    "Within the bound ({bound})",
    "Unit",
    "Optimal throughput",
    "Optimal mean latency (µs)",
    "Max throughput",
    "Min mean latency (µs)",
)


def _summary_sheet(ws: Worksheet, model: ReportModel, sheet_of: dict[str, str]) -> None:
    """The run (what, where, with which versions), its summary per workload and mix (the
    words of the HTML and the numbers beside them), acceptance verdicts and notes."""
    ws.title = "Summary"
    row = _run_block(ws, model) + 1
    row = _summary_table(ws, row, model, sheet_of)
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


def _run_block(ws: Worksheet, model: ReportModel) -> int:
    """Title, subtitle and the run's metadata from row 1; returns the row after them."""
    _put(ws, 1, 1, model.title)
    ws.cell(1, 1).font = TITLE
    scenario = f" · scenario {model.scenario}" if model.scenario else ""
    tool = "arraybench report" if model.audience == "engineer" else "Measured with arraybench"
    _put(ws, 2, 1, f"{tool} · run {model.run_id}{scenario}")
    ws.cell(2, 1).font = MUTED
    row = 4
    for key, value in _metadata(model):
        _put(ws, row, 1, key)
        ws.cell(row, 1).font = BOLD
        _put(ws, row, 2, value)
        ws.cell(row, 2).alignment = WRAP
        row += 1
    return row


def _summary_table(ws: Worksheet, row: int, model: ReportModel, sheet_of: dict[str, str]) -> int:
    """One row per workload and mix from `row`, then how the optimal point is chosen; returns
    the next free row (after one blank)."""
    _put(ws, row, 1, "Summary")
    ws.cell(row, 1).font = HEADING
    row += 1
    panel_of = {(s.title, p.mix_label): p for s in model.sections for p in s.panels}
    _header(ws, row, [c.format(bound=model.latency_bound) for c in SUMMARY_COLUMNS])
    row += 1
    for summary in model.summary:
        for mix in model.summary_columns:
            cell = summary.cells.get(mix)
            if cell is not None:
                panel = panel_of.get((summary.workload, mix))
                words = [summary.workload, mix, cell.optimal, cell.extremes, cell.bounded]
                _summary_row(ws, row, words, panel, sheet_of.get(summary.workload))
                row += 1
    link = summary_link(model.audience)
    _put(ws, row, 1, f"Optimal: {OPTIMAL_RULE}. Numbers in the workload sheets. {link}".strip())
    ws.cell(row, 1).font = MUTED
    return row + 2


def _summary_row(
    ws: Worksheet, row: int, words: list[str], panel: CurvePanel | None, target: str | None
) -> None:
    """A summary row: its words, the unit and numbers of its panel; the workload linked to
    its sheet (`target`) when it has one."""
    _row(ws, row, [*words, panel.throughput_unit if panel else None])
    for i, number in enumerate(_panel_numbers(panel)):
        _put(ws, row, 7 + i, number, INT_FORMAT if i % 2 == 0 else NUM_FORMAT)
    if target:
        ws.cell(row, 1).hyperlink = Hyperlink(
            ref=ws.cell(row, 1).coordinate, location=f"{quote_sheetname(target)}!A1"
        )
        ws.cell(row, 1).font = Font(color="1F5FA8", underline="single")
    ws.cell(row, 3).font = BOLD


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


def _tables_sheet(ws: Worksheet, model: ReportModel) -> None:
    row = 1
    for table in [t for t in model.tables + model.appendix if t.medium != "print"]:
        row = _write_table(ws, row, table)
    for overlay in model.overlays:
        row = _overlay_table(ws, row, overlay)
    if row == 1:
        _put(ws, 1, 1, "no tables in this run")
    _widths(ws, {c: 18 for c in range(1, 12)})


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
        ("fio", model.engine_version),
        ("host", model.host),
        ("kernel", model.kernel),
    ):
        _row(ws, row, [key, value])
        row += 1
    if model.audience != "engineer":  # no plan keys, no job files (report/audience.py)
        _widths(ws, {1: 34, 2: 80})
        return
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
