"""The data each writing workload gave the array, side by side: the ratios requested, those
its fio sample reached before the run, those read back from its targets after it, and the
ratio the array reported over its points (docs/data.md)."""

from __future__ import annotations

from collections.abc import Sequence

from arraybench.finding_kinds import (
    DATA_READ_BACK,
    DATA_REDUCTION,
    ReductionData,
    TargetReadBack,
    WorkloadData,
)
from arraybench.monitor.arrayside import stored_samples
from arraybench.records import Finding
from arraybench.report.model import ReportModel, ReportTable
from arraybench.report.sections.arrayside import latest_series
from arraybench.report.sections.inputs import RunInputs
from arraybench.store.db import PointRecord, Store
from arraybench.units import format_size

ARRAY_FIELD = "reduction_ratio"  # the array monitor's (or attached CSV's) reduction ratio
COLUMNS = ["Workload", "Requested", "Achieved (fio sample)", "On the target (read back)",
           "Reported by the array"]  # fmt: skip


def array_reduction(store: Store, run_id: str, points: Sequence[PointRecord]) -> dict[int, float]:
    """Point id -> the array's mean reduction ratio over the point's logged seconds (points
    without such samples left out; nothing attached or pulled: empty)."""
    series = latest_series(store, run_id)
    if series is None:
        return {}
    samples = [s for s in stored_samples(series["samples"]) if ARRAY_FIELD in s.values]
    found = {}
    for point in points if samples else []:
        seconds = [s.t for s in store.samples(point.id)]
        inside = [s.values[ARRAY_FIELD] for s in samples
                  if seconds and min(seconds) <= s.t < max(seconds) + 1]  # fmt: skip
        if inside:
            found[point.id] = sum(inside) / len(inside)
    return found


def _ratios(data: ReductionData | None) -> str:
    if data is None:
        return "–"
    return f"{data['compression']:.2f}:1 compression, {data['dedupe']:.2f}:1 dedupe"


def _requested(entry: WorkloadData) -> str:
    asked = entry["requested"]
    if entry["preset"] == "zeros":
        return f"zeros ({format_size(asked['granule_bytes'])} granules)"
    return f"{_ratios(asked)} at {format_size(asked['granule_bytes'])}"


def _achieved(entry: WorkloadData) -> str:
    if entry["achieved"] is None:
        return f"no sample: {entry['error']}"
    missed = f" (MISSED: {'; '.join(entry['misses'])})" if entry["misses"] else ""
    return _ratios(entry["achieved"]) + missed


def _on_target(targets: dict[str, TargetReadBack] | None) -> str:
    if not targets:
        return "–"
    return "; ".join(f"{path}: {t['compression']:.2f}:1, {t['dedupe']:.2f}:1"
                     f"{'' if t['whole'] else ' (sample)'}"
                     for path, t in targets.items())  # fmt: skip


def reduction_rows(
    findings: Sequence[Finding], points: Sequence[PointRecord], reported: dict[int, float]
) -> list[list[str]]:
    """One row per writing workload the run sampled."""
    backs = {f["workload"]: f["targets"] for f in DATA_READ_BACK.among(findings)}
    rows = []
    for found in DATA_REDUCTION.among(findings):
        for name, entry in found["workloads"].items():
            values = [reported[p.id] for p in points if p.workload == name and p.id in reported]
            array = f"{sum(values) / len(values):.2f}:1" if values else "–"
            rows.append([name, _requested(entry), _achieved(entry), _on_target(backs.get(name)),
                         array])  # fmt: skip
    return rows


def section(model: ReportModel, run: RunInputs) -> None:
    """The side-by-side table; nothing when the run sampled no data."""
    reported = array_reduction(run.store, run.run.id, run.points)
    rows = reduction_rows(run.findings, run.points, reported)
    if not rows:
        return
    caption = ("Ratios x:1 per granule: requested in the plan's data:, reached by a 32 MiB "
               "sample fio wrote with the workload's options before the run, read back from "
               "the targets after the workload (a sample's dedupe is a lower bound), and the "
               "array's own reduction ratio, its mean over the workload's points "
               "(array_monitor or attach). Measured per granule with zlib level 1 and "
               "BLAKE2b (docs/data.md).")  # fmt: skip
    model.tables.append(ReportTable("Data reduction: requested, achieved, reported",
                                    COLUMNS, rows, caption))  # fmt: skip
