"""What a report reads of a point's folder, stored with the point when it is stored: its
merged latency bins and its job files. The report then reads the store alone; a store made
before reads the folder (report/sections/inputs.py, report/build.py `job_files`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from arraybench.analysis.latency_bins import fio_json_bins, job_bins
from arraybench.engines.fio.results import Measurement
from arraybench.store.db import Store

JOB_FILE = "point.fio"  # the point's job file; `point-HOST.fio` per host on many hosts


def job_file_texts(folder: Path) -> dict[str, str]:
    """File name -> text of the point's job files: `point.fio`, then each host's, by name."""
    files: dict[str, str] = {}
    path = folder / JOB_FILE
    if path.exists():
        files[path.name] = path.read_text(errors="replace")
    for host_file in sorted(folder.glob("point-*.fio")):  # many hosts
        files[host_file.name] = host_file.read_text(errors="replace")
    return files


def keep_for_report(
    store: Store, point_id: int, folder: Path, jobs: Sequence[Measurement] | None = None
) -> None:
    """Store the point's bins (from `jobs`, the final document's, when the caller has them
    parsed; else read from its fio.json) and its job files."""
    bins = job_bins(jobs) if jobs is not None else fio_json_bins(folder)
    store.add_report_files(point_id, bins, job_file_texts(folder))
