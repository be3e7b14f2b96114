"""The points as CSV: every point under its raw field names, each cell safe to open in a
spreadsheet (`escape.py`'s `for_spreadsheet`)."""

from __future__ import annotations

import csv
import io

from arraybench.report.model import PointRow
from arraybench.report.render.escape import for_spreadsheet


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
