"""The array's own view beside fio's: per point, fio's IOPS against the attached monitor's
(`arraybench attach`), flagged beyond 10 % as the kernel check is."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from arraybench.finding_kinds import ARRAY_PULL, ARRAY_SERIES, ArraySeriesFinding
from arraybench.monitor.arrayside import (
    DISAGREE_PCT,
    Agreement,
    ArraySample,
    agreement,
    stored_offset,
    stored_samples,
)
from arraybench.report.model import PointRow, ReportModel, ReportTable
from arraybench.report.sections.inputs import RunInputs
from arraybench.store.db import PointRecord, Store
from arraybench.units import format_latency, format_pct


def latest_series(store: Store, run_id: str) -> ArraySeriesFinding | None:
    """The latest attached series; a plan's array_monitor stores one per point and source:
    the points of the latest source are put together."""
    found = ARRAY_SERIES.among(store.findings(run_id, ARRAY_SERIES.name))
    if not found:
        return None
    same = [f for f in found if f["file"] == found[-1]["file"]]
    return {**found[-1], "samples": [s for f in same for s in f["samples"]]}


def pull_notes(store: Store, run_id: str) -> list[str]:
    """One line per array_monitor source that gave nothing for some points (and why)."""
    failed: dict[str, list[str]] = {}
    for f in ARRAY_PULL.among(store.findings(run_id, ARRAY_PULL.name)):
        failed.setdefault(f["source"], []).append(f"{f['point']}: {f['error']}")
    return [f"{source}: {len(lines)} point(s) not read, skipped (first: {lines[0]})"
            for source, lines in failed.items()]  # fmt: skip


def point_agreements(
    store: Store, run_id: str, points: list[PointRecord]
) -> list[tuple[PointRecord, Agreement | None]]:
    """Each point against the latest attached series (none attached: empty)."""
    series = latest_series(store, run_id)
    if series is None:
        return []
    array = stored_samples(series["samples"])
    result = []
    for point in points:
        logged = store.samples(point.id)
        seconds = [(s.t, (s.read_iops or 0.0) + (s.write_iops or 0.0)) for s in logged]
        mbps = [(s.read_mbps or 0.0) + (s.write_mbps or 0.0) for s in logged]
        fio_mbps = sum(mbps) / len(mbps) if any(mbps) else None  # the same seconds' bytes
        result.append((point, agreement(seconds, array, fio_mbps)))
    return result


IOPS_HEADS = ["fio IOPS", "array IOPS", "array vs fio", "verdict"]
MBPS_HEADS = ["fio MB/s", "array MB/s", "MB/s: array vs fio"]
LATENCY_HEADS = ["fio mean latency", "array latency", "latency: array vs fio"]


def _iops_cells(a: Agreement | None) -> list[str]:
    if a is None:
        return ["–", "–", "–", "no array samples"]
    return [f"{a.fio_iops:,.0f}", f"{a.array_iops:,.0f}", format_pct(a.diff_pct, signed=True),
            a.verdict]  # fmt: skip


def array_tables(store: Store, run_id: str, points: list[PointRecord]) -> list[ReportTable]:
    pairs = point_agreements(store, run_id, points)
    if not pairs:
        return []
    data = latest_series(store, run_id)
    assert data is not None
    rows = [[p.key, *_iops_cells(a)] for p, a in pairs]
    caption = (
        f"From {data['file']} (array clock {stored_offset(data['offset_s']):+g} s); mean IOPS "
        "over the "
        f"point's logged seconds; disagreement beyond {DISAGREE_PCT:g} % is flagged, bytes "
        "first: where the array gives MB/s, they decide (the same bytes in another I/O count "
        "is the array counting requests its own way)."
    )
    return [ReportTable("Array monitor vs fio (IOPS)", ["Point", *IOPS_HEADS], rows, caption),
            *other_tables(store, points, data)]  # fmt: skip


def _beside(fio: float | None, array: list[float], text: Callable[[float], str]) -> list[str]:
    """fio's figure, the array's mean over the point and their difference in %."""
    if fio is None or not array:
        return [text(fio) if fio is not None else "–", "–", "–"]
    mean = sum(array) / len(array)
    diff = format_pct((mean - fio) / fio * 100, signed=True) if fio else "–"
    return [text(fio), text(mean), diff]


def _other_fields(samples: list[ArraySample]) -> set[str]:
    return {k for s in samples for k in s.values} & {"mbps", "latency_us"}


def _other_heads(fields: set[str]) -> list[str]:
    return (MBPS_HEADS if "mbps" in fields else []) + (
        LATENCY_HEADS if "latency_us" in fields else []
    )


def _other_cells(
    store: Store, p: PointRecord, samples: list[ArraySample], fields: set[str]
) -> list[str]:
    """One point's MB/s and latency beside the array's mean over its logged seconds."""
    seconds = [s.t for s in store.samples(p.id)]
    inside = [s.values for s in samples
              if seconds and min(seconds) <= s.t < max(seconds) + 1]  # fmt: skip
    row = []
    if "mbps" in fields:
        row += _beside(p.metric("total", "mbps"), [v["mbps"] for v in inside if "mbps" in v],
                       lambda v: f"{v:,.1f}")  # fmt: skip
    if "latency_us" in fields:
        row += _beside(p.metric("total", "lat_mean_us"),
                       [v["latency_us"] for v in inside if "latency_us" in v],
                       format_latency)  # fmt: skip
    return row


def other_tables(
    store: Store, points: list[PointRecord], data: ArraySeriesFinding
) -> list[ReportTable]:
    """The array's MB/s and mean latency beside fio's, per point, when the series has them."""
    samples = stored_samples(data["samples"])
    fields = _other_fields(samples)
    if not fields:
        return []
    rows = [[p.key, *_other_cells(store, p, samples, fields)] for p in points]
    caption = f"From {data['file']}; the array's mean over each point's logged seconds."
    return [ReportTable("Array monitor vs fio (MB/s, latency)", ["Point", *_other_heads(fields)],
                        rows, caption)]  # fmt: skip


@dataclass(frozen=True)
class ArrayView:
    """A run's points beside the array's counters, the cells its own report shows."""

    source: str  # the attached file (or array_monitor source)
    columns: list[str]
    cells: dict[str, dict[str, str]]  # point key -> column -> text


def array_view(store: Store, run_id: str, points: list[PointRecord]) -> ArrayView | None:
    """The cells of array_tables for these points, for `compare`; None when none attached."""
    pairs = point_agreements(store, run_id, points)
    data = latest_series(store, run_id)
    if not pairs or data is None:
        return None
    samples = stored_samples(data["samples"])
    fields = _other_fields(samples)
    columns = [*IOPS_HEADS, *_other_heads(fields)]
    cells = {p.key: dict(zip(columns, [*_iops_cells(a), *_other_cells(store, p, samples, fields)],
                             strict=True)) for p, a in pairs}  # fmt: skip
    return ArrayView(data["file"], columns, cells)


def array_seconds(store: Store, run_id: str, mbps: bool) -> dict[int, float]:
    """The attached series per Unix second (mean of its samples in that second), in IOPS or
    MB/s as the point is measured; empty when nothing (or not that value) is attached."""
    return field_seconds(store, run_id, "mbps" if mbps else "iops")


def field_seconds(store: Store, run_id: str, field: str) -> dict[int, float]:
    """One value of the attached series (`iops`, `mbps`, `latency_us`, `cpu_pct`) per Unix
    second, the mean of its samples in that second; empty when it was not collected."""
    series = latest_series(store, run_id)
    if series is None:
        return {}
    buckets: dict[int, list[float]] = {}
    for sample in stored_samples(series["samples"]):
        if field in sample.values:
            buckets.setdefault(int(sample.t), []).append(sample.values[field])
    return {t: sum(v) / len(v) for t, v in buckets.items()}


def with_array(
    rows: list[PointRow], pairs: list[tuple[PointRecord, Agreement | None]]
) -> list[PointRow]:
    """The points table's rows with the column `array_vs_fio_pct` (None without samples)."""
    by_key = {p.key: a.diff_pct for p, a in pairs if a is not None}
    if not by_key:
        return rows
    rows = [replace(r, values=r.values | {"array_vs_fio_pct": by_key.get(str(r.record.get("key")))})
            for r in rows]  # fmt: skip
    return [replace(r, record=r.record | {"array_vs_fio_pct": r.values["array_vs_fio_pct"]})
            for r in rows]  # fmt: skip


def add_array_view(
    model: ReportModel, store: Store, run_id: str, points: list[PointRecord]
) -> None:
    """An attached array series into a run's report: its table, and its column of the points
    table (every format); nothing when none is attached."""
    model.notes += pull_notes(store, run_id)
    pairs = point_agreements(store, run_id, points)
    if not pairs:
        return
    model.tables += array_tables(store, run_id, points)
    model.points = with_array(model.points, pairs)
    model.point_columns = [*model.point_columns, "array_vs_fio_pct"]


def section(model: ReportModel, run: RunInputs) -> None:
    """`arraybench attach`: the array's own series beside fio's."""
    add_array_view(model, run.store, run.run.id, run.points)
