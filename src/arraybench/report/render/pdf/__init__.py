"""PDF and PNG: the HTML report printed by headless Chromium (`printout.py`). `write_pdf` and
`write_png` are the formats' writers."""

from __future__ import annotations

import tempfile
from pathlib import Path

from arraybench.outfiles import check_writable, replacing
from arraybench.report.model import ReportModel


def write_pdf(model: ReportModel, path: Path, what: str) -> None:
    _print(model, path, what, as_pdf=True)


def write_png(model: ReportModel, path: Path, what: str) -> None:
    _print(model, path, what, as_pdf=False)


def _print(model: ReportModel, path: Path, what: str, as_pdf: bool) -> None:
    from arraybench.report.render.html.page import render_html
    from arraybench.report.render.pdf import printout

    check_writable(path, what)  # before Chromium's seconds, not after them
    with tempfile.TemporaryDirectory(prefix="arraybench-print-") as tmp:
        html = Path(tmp) / "report.html"
        html.write_text(render_html(model), encoding="utf-8", errors="backslashreplace")
        with replacing(path, what) as spare:
            (printout.write_pdf if as_pdf else printout.write_png)(html, spare)
