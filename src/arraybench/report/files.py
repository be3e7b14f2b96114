"""A run's report written to its files, and its charts to a folder (`run`, `report`,
`compare`). Nothing here prints: what is written is said through the edge's `Terminal`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Protocol

from arraybench.outfiles import check_writable
from arraybench.report.model import ReportModel
from arraybench.report.render.export import format_for, write_report
from arraybench.store.db import RunRecord, Store

LABELS = {"md": "Markdown", "xlsx": "Excel"}  # else the format's name in capitals


class Terminal(Protocol):
    """Where the report is said (console.py passes itself)."""

    def print_model(self, model: ReportModel) -> None: ...

    def print_line(self, text: str) -> None: ...


def report_files(
    store: Store, run: RunRecord, paths: list[Path], fmt: str | None, charts: str | None,
    terminal: Terminal, audience: str = "engineer",
) -> ReportModel:  # fmt: skip
    """A stored run's report for `audience` (model.AUDIENCES): its tables on the terminal,
    then written to `paths` (default: report.FMT in the run's folder, report-customer.FMT for
    a customer's, so the engineer's is not overwritten); a bad extension refused before
    anything."""
    from arraybench.report.assemble import report_for_run

    stem = "report" if audience == "engineer" else f"report-{audience}"
    paths = paths or [Path(run.folder) / f"{stem}.{fmt or 'html'}"]
    check_formats(paths, fmt)
    model = report_for_run(store, run.id, audience)
    terminal.print_model(model)
    write_files(model, paths, fmt, charts, terminal)
    return model


def check_formats(paths: list[Path], fmt: str | None) -> None:
    """ArraybenchError for a file whose format is not known, or with a link or a special
    file at its name (outfiles.py): before anything is written."""
    for path in paths:
        check_writable(path, f"the {format_for(path, fmt)} report")


def write_files(
    model: ReportModel, paths: list[Path], fmt: str | None, charts: str | None,
    terminal: Terminal,
) -> None:  # fmt: skip
    """The report in each file, and (`charts`: a folder) each chart as SVG and PNG there; a
    link or a FIFO at a chart's name is refused before the first report is written."""
    page = None
    if charts:  # the Markdown report links to them
        from arraybench.report.render.chartfiles.export import check_chart_names
        from arraybench.report.render.html.page import render_html

        model = replace(model, chart_dir=str(Path(charts).resolve()))
        page = render_html(model, every_chart=True)  # all
        check_chart_names(page, Path(charts))
    for path in paths:
        kind = format_for(path, fmt)
        write_report(model, path, kind)
        terminal.print_line(f"{LABELS.get(kind, kind.upper())} report: {path.resolve()}")
    if charts and page is not None:
        from arraybench.report.render.chartfiles.export import write_charts

        written = write_charts(page, Path(charts))
        count = sum(1 for p in written if p.suffix == ".svg")
        terminal.print_line(f"charts: {count} as SVG and PNG in {Path(charts).resolve()}")
