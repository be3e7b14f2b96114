"""The Excel workbook: the workbook and its Summary, Points, Tables and Provenance sheets
(`workbook.py`), the workload sheets (`curves.py`), Timelines (`timelines.py`), Figures
(`figures.py`), cells and styles (`cells.py`) and native charts (`charts.py`). `write` is the
format's writer; openpyxl loads only when it is called."""

from __future__ import annotations

from pathlib import Path

from arraybench.outfiles import replacing
from arraybench.report.model import ReportModel


def write(model: ReportModel, path: Path, what: str) -> None:
    from arraybench.report.render.xlsx.workbook import write_xlsx

    with replacing(path, what) as spare:
        write_xlsx(model, spare)
