"""One ReportModel -> a file in the format the user asked for (by --format or by extension)."""

from __future__ import annotations

import csv
import io
import tempfile
from pathlib import Path

from arraybench.errors import ArraybenchError
from arraybench.report.escape import for_spreadsheet
from arraybench.report.html import render_html
from arraybench.report.markdown import render_markdown
from arraybench.report.model import ReportModel

FORMATS = ("html", "md", "csv", "xlsx", "pdf", "png")
EXTENSIONS = {".html": "html", ".htm": "html", ".md": "md", ".csv": "csv", ".xlsx": "xlsx",
              ".pdf": "pdf", ".png": "png"}  # fmt: skip


def format_for(path: Path | None, fmt: str | None) -> str:
    if fmt:
        return fmt
    if path is not None and path.suffix.lower() in EXTENSIONS:
        return EXTENSIONS[path.suffix.lower()]
    if path is not None and path.suffix:
        raise ArraybenchError(f"{path}: unknown report format {path.suffix!r}",
                              f"use one of: {', '.join(EXTENSIONS)} or --format")  # fmt: skip
    return "html"


def points_csv(model: ReportModel) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    head = ["series", "level", "workers", "iodepth", "targets", *model.point_columns]
    writer.writerow([for_spreadsheet(h) for h in head])
    for p in model.points:
        values = [p.values.get(c) for c in model.point_columns]
        row = [p.series, p.level, p.workers, p.iodepth, p.targets, *values]
        writer.writerow(["" if v is None else for_spreadsheet(v) for v in row])
    return out.getvalue()


def write_report(model: ReportModel, path: Path, fmt: str) -> Path:
    """Write `model` to `path` as `fmt`; PDF and PNG are printed from the HTML by Chromium."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "html":
        path.write_text(render_html(model), encoding="utf-8")
    elif fmt == "md":
        path.write_text(render_markdown(model), encoding="utf-8")
    elif fmt == "csv":
        path.write_text(points_csv(model), encoding="utf-8")
    elif fmt == "xlsx":
        from arraybench.report.xlsx import write_xlsx  # openpyxl loads only when asked

        write_xlsx(model, path)
    elif fmt in ("pdf", "png"):
        from arraybench.report.printout import write_pdf, write_png

        with tempfile.TemporaryDirectory(prefix="arraybench-print-") as tmp:
            html = Path(tmp) / "report.html"
            html.write_text(render_html(model), encoding="utf-8")
            (write_pdf if fmt == "pdf" else write_png)(html, path)
    else:
        raise ArraybenchError(f"unknown report format {fmt!r}", f"use one of: {', '.join(FORMATS)}")
    return path
