"""A point's latency histogram: the json+ bins of every job and direction of its fio output,
merged (ns -> count). The run stores them with the point (run/point.py, store.latency_bins);
the report's histograms and percentile charts read them there, and read the point's
`fio.json` itself only for a store made before they were stored."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from arraybench.analysis.aggregate import merge_bins
from arraybench.engines.fio.parse import last_document, parse_fio_json_file
from arraybench.engines.fio.results import Measurement
from arraybench.errors import ArraybenchError

JSON_NAME = "fio.json"  # engines.fio.runner.JSON_NAME: the point folder's fio output


def job_bins(jobs: Iterable[Measurement]) -> dict[int, int] | None:
    """Latency (ns) -> count over every job and direction that did I/O; None when one of
    them has no json+ bins."""
    return merge_bins(d.bins_ns for job in jobs for d in (job.read, job.write) if d.ios)


def fio_json_bins(folder: Path) -> dict[int, int] | None:
    """`job_bins` of the final document of the point's `fio.json`; None if the point has no
    json+ bins (or no readable output)."""
    path = folder / JSON_NAME
    if not path.is_file():
        return None
    try:
        doc = last_document(parse_fio_json_file(path))
    except (ArraybenchError, ValueError):
        return None
    return job_bins(doc.jobs)
