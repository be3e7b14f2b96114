"""The CSV report: the points table alone, one row per point, every stored field
(`points.py`, also `show --format csv`). `write` is the format's writer."""

from __future__ import annotations

from pathlib import Path

from arraybench.outfiles import write_file
from arraybench.report.model import ReportModel


def write(model: ReportModel, path: Path, what: str) -> None:
    from arraybench.report.render.csv.points import points_csv

    write_file(path, points_csv(model.points), what)
