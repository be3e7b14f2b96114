"""The Markdown report: the page (`page.py`) and its figures as tables and links to the
exported charts (`figures.py`). `write` is the format's writer."""

from __future__ import annotations

from pathlib import Path

from arraybench.outfiles import write_file
from arraybench.report.model import ReportModel


def write(model: ReportModel, path: Path, what: str) -> None:
    from arraybench.report.render.markdown.page import render_markdown

    path.parent.mkdir(parents=True, exist_ok=True)
    text = render_markdown(model, path.parent.resolve())  # charts linked relative to it
    write_file(path, text, what)
