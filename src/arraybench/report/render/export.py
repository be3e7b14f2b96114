"""One ReportModel -> a file in the format the user asked for (by --format or by extension)."""

from __future__ import annotations

import csv
import io
import tempfile
from pathlib import Path

from arraybench.errors import ArraybenchError
from arraybench.outfiles import check_writable, replacing, write_file
from arraybench.report.gcpause import gc_paused
from arraybench.report.model import PointRow, ReportModel
from arraybench.report.render.escape import for_spreadsheet

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


def points_csv(points: list[PointRow]) -> str:
    """Every point under its raw field names, one row each: the CSV of `report -o x.csv` and of
    `show --format csv`. Rows built without a stored record fall back to the table's values."""
    rows = [p.record or _fallback(p) for p in points]
    head = list(dict.fromkeys(name for row in rows for name in row))
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([for_spreadsheet(h) for h in head])
    for row in rows:
        cells = [row.get(name) for name in head]
        writer.writerow(["" if v is None else for_spreadsheet(v) for v in cells])
    return out.getvalue()


def _fallback(p: PointRow) -> dict[str, str | int | float | None]:
    fixed: dict[str, str | int | float | None] = {
        "series": p.series, "level": p.level, "workers": p.workers, "iodepth": p.iodepth,
        "targets": p.targets,
    }  # fmt: skip
    return {**fixed, **p.values}


def write_report(model: ReportModel, path: Path, fmt: str) -> Path:
    """Write `model` to `path` as `fmt`; PDF and PNG are printed from the HTML by Chromium."""
    with gc_paused():  # a big run's millions of parts: see report/gcpause.py
        return _write(model, path, fmt)


def _write(model: ReportModel, path: Path, fmt: str) -> Path:
    # the renderers load when a report is written: `show` and `runs` need only FORMATS
    from arraybench.report.render.html import render_html
    from arraybench.report.render.markdown import render_markdown

    what = f"the {fmt} report"  # written beside its name and renamed: see outfiles.py
    if fmt == "html":
        write_file(path, render_html(model), what)
    elif fmt == "md":
        path.parent.mkdir(parents=True, exist_ok=True)
        text = render_markdown(model, path.parent.resolve())  # charts linked relative to it
        write_file(path, text, what)
    elif fmt == "csv":
        write_file(path, points_csv(model.points), what)
    elif fmt == "xlsx":
        from arraybench.report.render.xlsx import write_xlsx  # openpyxl loads only when asked

        with replacing(path, what) as spare:
            write_xlsx(model, spare)
    elif fmt in ("pdf", "png"):
        from arraybench.report.render.printout import write_pdf, write_png

        check_writable(path, what)  # before Chromium's seconds, not after them
        with tempfile.TemporaryDirectory(prefix="arraybench-print-") as tmp:
            html = Path(tmp) / "report.html"
            html.write_text(render_html(model), encoding="utf-8", errors="backslashreplace")
            with replacing(path, what) as spare:
                (write_pdf if fmt == "pdf" else write_png)(html, spare)
    else:
        raise ArraybenchError(f"unknown report format {fmt!r}", f"use one of: {', '.join(FORMATS)}")
    return path
