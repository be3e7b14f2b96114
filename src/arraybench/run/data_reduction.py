"""The data each writing workload gives the array, sampled through fio and measured before a
run (and by `plan check --data`): the ratios requested beside those reached."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from arraybench.engines.fio.datasample import Sample, measure, read_back_regions, sample_data
from arraybench.engines.fio.runner import fio_binary
from arraybench.finding_kinds import (
    DATA_READ_BACK,
    DATA_REDUCTION,
    DataReadBackFinding,
    DataReductionFinding,
    WorkloadData,
)
from arraybench.plan.expand import Point
from arraybench.plan.model import Plan
from arraybench.plan.workload import DataPattern
from arraybench.records import Finding
from arraybench.units import format_size


@dataclass(frozen=True)
class WorkloadSample:
    workload: str
    sample: Sample


def writing_data(plan: Plan) -> list[tuple[str, DataPattern, int]]:
    """(workload name, its data, its block size) of each workload that writes."""
    return [(w.name, w.data or plan.data, w.bs) for w in plan.workloads if w.read < 100]


def wants_sample(plan: Plan) -> bool:
    """Whether a run measures its data first: the plan writes and says what its data is
    (`data:` at the plan or a writing workload; a plan without one writes fio's random
    bytes, incompressible without a sample, and costs no second for it)."""
    said = "data" in plan.model_fields_set or any(
        w.data is not None for w in plan.workloads if w.read < 100
    )
    return said and bool(writing_data(plan))


def sample_workloads(plan: Plan, scratch: Path) -> list[WorkloadSample]:
    """Each writing workload's data sampled once by the fio on PATH, in a folder under
    `scratch` (workloads with the same data and block size share one sample)."""
    fio = fio_binary()
    done: dict[tuple[DataPattern, int], Sample] = {}
    found = []
    for name, data, bs in writing_data(plan):
        if (data, bs) not in done:
            done[data, bs] = sample_data(fio, data, bs, scratch)
        found.append(WorkloadSample(name, done[data, bs]))
    return found


def _entry(sample: Sample) -> WorkloadData:
    asked = sample.requested
    achieved = sample.achieved
    return {
        "requested": {"compression": asked.compression, "dedupe": asked.dedupe,
                      "granule_bytes": asked.granule},
        "preset": asked.preset, "bs": sample.bs,
        "achieved": None if achieved is None else {
            "compression": round(achieved.compression, 3), "dedupe": round(achieved.dedupe, 3),
            "granule_bytes": achieved.granule_bytes},
        "seconds": round(sample.seconds, 3), "error": sample.error, "misses": sample.misses,
    }  # fmt: skip


def data_finding(samples: list[WorkloadSample]) -> Finding:
    found: DataReductionFinding = {"workloads": {s.workload: _entry(s.sample) for s in samples}}
    return DATA_REDUCTION.new(found)


def stored_misses(findings: list[Finding]) -> dict[str, tuple[str, ...]]:
    """The misses of a run's stored `data_reduction` finding (a resume reads them back)."""
    return {name: tuple(entry["misses"]) for found in DATA_REDUCTION.among(findings)
            for name, entry in found["workloads"].items() if entry["misses"]}  # fmt: skip


def ratio_text(compression: float, dedupe: float) -> str:
    return f"compression {compression:.2f}:1, dedupe {dedupe:.2f}:1"


def sample_lines(samples: list[WorkloadSample]) -> list[str]:
    """One line per workload: requested, achieved, the time it took, or why it failed."""
    lines = []
    for s in samples:
        asked, got = s.sample.requested, s.sample.achieved
        want = "zeros" if asked.zeros else ratio_text(asked.compression, asked.dedupe)
        head = f"data of {s.workload}: requested {want} at {format_size(asked.granule)}"
        if got is None:
            lines.append(f"{head}; no sample: fio failed: {s.sample.error}")
            continue
        missed = f"; MISSED: {'; '.join(s.sample.misses)}" if s.sample.misses else ""
        lines.append(f"{head}; achieved {ratio_text(got.compression, got.dedupe)} "
                     f"(fio sample of {format_size(got.granules * got.granule_bytes)}, "
                     f"{s.sample.seconds:.1f} s){missed}")  # fmt: skip
    return lines


def read_back(point: Point, sizes: dict[str, int], seed: int) -> Finding:
    """The point's local targets read back as `data.read_back` asks and measured (called
    after the last point of a writing workload)."""
    amount = point.data.read_back or 0
    found: DataReadBackFinding = {"workload": point.workload.name, "scenario": point.scenario,
                                  "targets": {}, "skipped": None}  # fmt: skip
    if point.level.hosts:
        found["skipped"] = "a many-host point: the targets are on the hosts"
        return DATA_READ_BACK.new(found)
    granule = point.data.granule
    for target in point.targets:
        size = sizes.get(target.path, 0)
        regions = read_back_regions(size, amount, granule, seed)
        began = time.monotonic()
        got = measure(Path(target.path), granule, regions)
        found["targets"][target.path] = {
            "compression": round(got.compression, 3), "dedupe": round(got.dedupe, 3),
            "granule_bytes": granule, "bytes_read": got.granules * granule,
            "whole": amount >= size, "seconds": round(time.monotonic() - began, 3),
        }  # fmt: skip
    return DATA_READ_BACK.new(found)


def read_back_lines(found: DataReadBackFinding) -> list[str]:
    if found["skipped"]:
        return [f"data of {found['workload']} not read back: {found['skipped']}"]
    partial = " (a sample: its dedupe is a lower bound)"
    return [f"data of {found['workload']} read back from {path}: "
            f"{ratio_text(t['compression'], t['dedupe'])} over "
            f"{format_size(t['bytes_read'])}{'' if t['whole'] else partial}"
            for path, t in found["targets"].items()]  # fmt: skip


def last_of_workloads(points: list[Point]) -> dict[str, str]:
    """Key of the last point of each writing workload that asks for a read-back."""
    return {p.workload.name: p.key for p in points if p.writes and p.data.read_back}
