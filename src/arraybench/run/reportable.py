"""What a report reads of a point's folder, stored with the point when it is stored: its
merged latency bins and its job files. The report then reads the store alone; a store made
before reads the folder with the functions here (report/sections/inputs.py, report/build.py
`job_files`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from arraybench.analysis.aggregate import job_bins
from arraybench.engines.fio.parse import last_document, parse_fio_json_file
from arraybench.engines.measurement import Measurement
from arraybench.errors import ArraybenchError
from arraybench.store.db import Store

JOB_FILE = "point.fio"  # the point's job file; `point-HOST.fio` per host on many hosts


def fio_json_bins(folder: Path) -> dict[int, int] | None:
    """`job_bins` of the final document of the point's `fio.json`; None if the point has no
    json+ bins (or no readable output)."""
    # here, not at the top: `show` imports this module (report/build.py) and the runner
    # brings the plan model with it (tests/unit/test_startup_imports.py)
    from arraybench.engines.fio.runner import JSON_NAME

    path = folder / JSON_NAME
    if not path.is_file():
        return None
    try:
        doc = last_document(parse_fio_json_file(path))
    except (ArraybenchError, ValueError):
        return None
    return job_bins(doc.jobs)


def job_file_texts(folder: Path, job_name: str = JOB_FILE) -> dict[str, str]:
    """File name -> text of the point's job files: its engine's (`job_name`, fio's
    `point.fio` in every store made before engines had names), then each host's, by name."""
    files: dict[str, str] = {}
    path = folder / job_name
    if path.exists():
        files[path.name] = path.read_text(errors="replace")
    for host_file in sorted(folder.glob("point-*.fio")):  # many hosts
        files[host_file.name] = host_file.read_text(errors="replace")
    return files


def keep_for_report(
    store: Store,
    point_id: int,
    folder: Path,
    jobs: Sequence[Measurement] | None = None,
    job_name: str = JOB_FILE,
) -> None:
    """Store the point's bins (from `jobs`, the final document's, when the caller has them
    parsed; else read from its fio.json) and its job files (`job_name`: the engine's)."""
    bins = job_bins(jobs) if jobs is not None else fio_json_bins(folder)
    store.add_report_files(point_id, bins, job_file_texts(folder, job_name))
