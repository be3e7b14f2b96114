"""`arraybench attach`: the array's own monitor CSV stored beside a run, and how each point's
fio IOPS agrees with it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arraybench.finding_kinds import ARRAY_SERIES
from arraybench.monitor.arrayside import Agreement, parse_map, read_csv
from arraybench.report.sections.arrayside import point_agreements
from arraybench.store.db import PointRecord, Store


@dataclass(frozen=True)
class Attached:
    samples: int
    points: int  # the run's points
    matched: list[tuple[PointRecord, Agreement]]  # the points with array samples


def attach_array_csv(
    store: Store, run_id: str, file: str, mapping: str, offset_s: float
) -> Attached:
    """Everything read and checked before the one write: a refused attach stores nothing."""
    columns = parse_map(mapping)
    samples = read_csv(Path(file), columns, offset_s)
    store.add_finding(run_id, ARRAY_SERIES.new({
        "file": file, "map": columns, "offset_s": offset_s,
        "samples": [[s.t, s.values] for s in samples]}))  # fmt: skip
    pairs = point_agreements(store, run_id, store.points(run_id))
    matched = [(p, a) for p, a in pairs if a is not None]
    return Attached(len(samples), len(pairs), matched)
