"""The points table's rows: every stored point (repetitions and rounds too), in the order
measured, with the kernel's view beside fio's; the CSV writes the same rows raw."""

from __future__ import annotations

from dataclasses import fields

from arraybench.analysis.kernelcheck import KernelView, column_pct, views_by_point
from arraybench.report.build import HOST_COLUMNS, series_name
from arraybench.report.model import PointRow, ReportModel
from arraybench.report.sections.inputs import RunInputs
from arraybench.store.db import PointRecord
from arraybench.units import format_size

RECORD_FIELDS = [f.name for f in fields(PointRecord) if f.name not in ("metrics", "identity")]


def section(model: ReportModel, run: RunInputs) -> None:
    views = views_by_point(run.findings)
    model.points = [point_row(p, views.get(p.id)) for p in run.points]


def kernel_vs_fio(point: PointRecord, view: KernelView | None = None) -> float | None:
    """The kernel's bytes against fio's, in % (+ = the kernel saw more): the stored comparison
    the validity flag judged (analysis.kernelcheck), the same number; None without kernel
    counters."""
    return column_pct(view, (point.kernel_mbps, point.metric("total", "mbps")))


def point_row(point: PointRecord, view: KernelView | None = None) -> PointRow:
    """One stored point as a row of the points tables (and of the CSV, under raw names)."""
    record: dict[str, str | int | float | None] = {"series": series_name(point)}
    record |= {name: getattr(point, name) for name in RECORD_FIELDS}
    repetition = point.identity.repetition  # `repeat: N`: the level's rows told apart
    return PointRow(
        series=series_name(point),
        level=f"{point.workers}x{point.iodepth}" + (f" #{repetition}" if repetition > 1 else ""),
        workers=point.workers,
        iodepth=point.iodepth,
        targets=point.targets,
        values=dict(point.metrics)
        | {c: getattr(point, c) for c in HOST_COLUMNS}
        | {"kernel_vs_fio_pct": kernel_vs_fio(point, view)},
        block_size=format_size(point.bs),
        engine=point.ioengine,
        record=record | dict(point.metrics),
    )
