"""With and without data reduction: a plan's `data_grid` runs each workload once per data
value (copies named WORKLOAD@VALUE); this table sets the copies side by side per load level,
each value's throughput and latency and their change against the grid's first value (dbi's
Dorado "with vs without compression": up to 30 % more IOPS without). docs/data.md."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arraybench.point_identity import grid_parts
from arraybench.records import PointRecord
from arraybench.report.build import order_points
from arraybench.report.model import Overlay, ReportModel, ReportTable
from arraybench.report.sections.inputs import RunInputs
from arraybench.report.sections.overlays import curves_overlay, x_axis_title
from arraybench.units import format_latency, format_pct, format_throughput

TITLE = "Data with and without reduction: throughput and latency per load level"
COLUMNS = ["Workload", "Load", "Data", "Throughput", "Mean latency", "p99 latency",
           "Throughput change", "Mean latency change"]  # fmt: skip
CAPTION = (
    "The plan's data_grid ran each workload once per data value (WORKLOAD@VALUE, the data "
    "written as that preset; docs/data.md). Per load level each value's mean over its "
    "repetitions; change = (value - {base}) / {base}, in %, against the grid's first value. "
    "On an array that reduces inline the change is the reduction's cost or gain; on a plain "
    "disk it is noise."
)


@dataclass(frozen=True)
class GridCell:
    """One workload's points at one level under one data value (repetitions averaged)."""

    throughput: float
    unit: str
    lat_mean_us: float | None
    lat_p99_us: float | None


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _cell(points: Sequence[PointRecord]) -> GridCell:
    return GridCell(
        throughput=sum(p.throughput() for p in points) / len(points),
        unit=points[0].unit,
        lat_mean_us=_mean([p.metric("total", "lat_mean_us") for p in points]),
        lat_p99_us=_mean([p.metric("total", "lat_p99_us") for p in points]),
    )


def _change(value: float | None, base: float | None) -> str:
    if value is None or not base:
        return "–"
    return format_pct((value - base) / base * 100, signed=True)


def grid_cells(
    points: Sequence[PointRecord],
) -> dict[tuple[str, str], dict[str, GridCell]]:
    """(workload, level) -> data value -> its cell, in the order the points ran; only the
    levels measured under at least two values (a comparison needs both sides)."""
    found: dict[tuple[str, str], dict[str, list[PointRecord]]] = {}
    for p in sorted(points, key=lambda p: p.seq):
        parts = grid_parts(p.workload)
        if parts is None:
            continue
        base, value = parts
        series = f"{p.identity.scenario}/{base}" if p.identity.scenario else base
        found.setdefault((series, p.identity.level_label), {}).setdefault(value, []).append(p)
    return {key: {v: _cell(pts) for v, pts in by_value.items()}
            for key, by_value in found.items() if len(by_value) > 1}  # fmt: skip


def grid_rows(points: Sequence[PointRecord]) -> tuple[list[list[str]], str | None]:
    """The table's rows (a row per workload, level and data value) and the first value."""
    rows, first = [], None
    for (workload, level), cells in grid_cells(points).items():
        base_value, base = next(iter(cells.items()))
        first = first or base_value
        for value, cell in cells.items():
            same = value == base_value
            rows.append([
                workload, level, value, format_throughput(cell.throughput, cell.unit),
                format_latency(cell.lat_mean_us), format_latency(cell.lat_p99_us),
                "(base)" if same else _change(cell.throughput, base.throughput),
                "(base)" if same else _change(cell.lat_mean_us, base.lat_mean_us),
            ])  # fmt: skip
    return rows, first


def grid_overlays(run: RunInputs) -> list[Overlay]:
    """Per workload one chart, a line per data value over the load levels (the levels as the
    curves draw them: repetitions collapsed), each repeated point's 95 % interval."""
    lines: dict[str, dict[str, list[PointRecord]]] = {}
    for p in sorted(run.once, key=lambda p: p.seq):
        parts = grid_parts(p.workload)
        if parts is not None:
            series = f"{p.identity.scenario}/{parts[0]}" if p.identity.scenario else parts[0]
            lines.setdefault(series, {}).setdefault(parts[1], []).append(p)
    charts = []
    for series, by_value in lines.items():
        curves = [(value, order_points(pts)) for value, pts in by_value.items()]
        if len(curves) > 1:
            title = f"{series}: data with and without reduction"
            charts.append(curves_overlay(title, x_axis_title(curves), curves, run.facts))
    return charts


def section(model: ReportModel, run: RunInputs) -> None:
    """The with/without table and charts; nothing when the run had no data_grid copies."""
    rows, first = grid_rows(run.points)
    if not rows:
        return
    model.tables.append(
        ReportTable(TITLE, COLUMNS, rows, CAPTION.format(base=first), key_columns=3)
    )
    model.overlays += grid_overlays(run)
