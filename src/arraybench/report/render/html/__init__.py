"""The HTML report: one self-contained page (`page.py`), its appendix (`appendix.py`), its
stylesheet and script (`style.py`), a big run's points table and curve charts drawn by the page
from one data block (`pagedtable.py`, `lazycharts.py`). `write` is the format's writer."""

from __future__ import annotations

from pathlib import Path

from arraybench.outfiles import write_file
from arraybench.report.model import ReportModel


def write(model: ReportModel, path: Path, what: str) -> None:
    from arraybench.report.render.html.page import render_html

    write_file(path, render_html(model), what)
