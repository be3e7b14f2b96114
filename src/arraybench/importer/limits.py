"""Range checks of imported numbers, done before anything is written (issue 24).

A figure in a result file, or a number a ``--pattern`` group takes from a file name, is
refused with one located line (exit 2) when the store cannot hold it or the report cannot
compute with it: not finite (NaN, inf), beyond MAX_FIGURE (10^18: an integer column of
SQLite ends at 2^63, about 9.2 x 10^18, and sums over a point's jobs must stay inside it),
a time stamp outside years 1970-9999, a duration that no date arithmetic can take, or a
load level (jobs, iodepth, devices, hosts) beyond MAX_LEVEL. Inside those bounds a figure
that no run can produce is still imported and marked (engines/fio/plausible.py): an archive may
hold fio's own mistakes, and they are evidence.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import Any

from arraybench.engines.measurement import DIRECTIONS, DirStats, EngineDocument, Measurement
from arraybench.errors import ArraybenchError
from arraybench.records import NewPoint, Sample

MAX_FIGURE = 10**18  # counts, bytes, rates, latencies in ns: 31 years of ns, 1 EB
MAX_LEVEL = 10**6  # jobs, iodepth, devices or hosts of one point
MAX_TIMESTAMP = 253_402_300_799  # 9999-12-31 23:59:59 UTC, the last second datetime holds
MAX_RUNTIME_MS = 10**12  # 31 years: longer cannot be a run, and overflows timedelta later
HINT = "fix or remove that figure (or file), then import again: nothing was stored"


class ImportRefused(ArraybenchError):
    """An import refused whole, before anything was written: one located line, exit 2."""


def number_text(value: float) -> str:
    """A number for an error line, short even for a 4000-digit integer."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    if isinstance(value, int) and abs(value) >= 10**15:
        try:
            return f"{value:.3g}"
        except OverflowError:  # beyond a float
            sign = "-" if value < 0 else ""
            return f"{sign}a {math.floor(math.log10(abs(value))) + 1}-digit number"
    return f"{value:g}" if isinstance(value, float) else str(value)


def out_of_range(value: object, limit: float = MAX_FIGURE) -> str | None:
    """Why `value` cannot be stored or computed with; None when it can (bools, None, text
    pass: only numbers are judged)."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"{number_text(value)} is not a finite number"
    if abs(value) > limit:
        return f"{number_text(value)} is out of range (magnitude at most {number_text(limit)})"
    return None


def refuse(where: str, what: str, why: str) -> ImportRefused:
    return ImportRefused(f"import refused: {where}: {what} {why}", HINT)


def check_figures(where: str, figures: Mapping[str, object], limit: float = MAX_FIGURE) -> None:
    """Every number of `figures` (name -> value) in range; ImportRefused naming the first not."""
    for name, value in figures.items():
        why = out_of_range(value, limit)
        if why:
            raise refuse(where, name, why)


def _direction(where: str, d: DirStats) -> None:
    check_figures(where, {
        "I/Os": d.ios, "bytes": d.io_bytes, "IOPS": d.iops, "bandwidth (bytes/s)": d.bw_bytes,
        "mean latency (ns)": d.lat_mean_ns, "min latency (ns)": d.lat_min_ns,
        "max latency (ns)": d.lat_max_ns,
    })  # fmt: skip
    check_figures(where, {"runtime (ms)": d.runtime_ms}, MAX_RUNTIME_MS)
    for pct, ns in d.percentiles_ns.items():
        check_figures(where, {"percentile": pct, f"{pct:g}th percentile (ns)": ns})
    for value, count in (d.bins_ns or {}).items():
        check_figures(where, {"histogram bin (ns)": value, "histogram count": count})


def check_jobs(where: str, jobs: Iterable[Measurement]) -> None:
    """Every figure of every job: in range, or ImportRefused naming the job and field."""
    for job in jobs:
        host = f"<{job.hostname}> " if job.hostname else ""
        here = f"{where}: job {host}{job.name!r}"
        check_figures(here, {"group id": job.groupid, "error": job.error,
                             "I/O errors": job.total_err, "usr CPU": job.usr_cpu,
                             "sys CPU": job.sys_cpu})  # fmt: skip
        check_figures(here, {"job runtime (ms)": job.job_runtime_ms}, MAX_RUNTIME_MS)
        check_figures(here, {"elapsed (s)": job.elapsed_s}, MAX_RUNTIME_MS / 1000)
        for ddir in DIRECTIONS:
            _direction(f"{here} {ddir}", job.direction(ddir))


def check_document(where: str, doc: EngineDocument) -> None:
    """The document's time stamps: inside the years datetime can hold."""
    stamps = (("time stamp", doc.timestamp, MAX_TIMESTAMP),
              ("time stamp (ms)", doc.timestamp_ms, MAX_TIMESTAMP * 1000))  # fmt: skip
    for name, value, high in stamps:
        if value is None:
            continue
        why = out_of_range(value, high)
        if why is None and value < 0:
            why = f"{number_text(value)} is before 1970"
        if why:
            raise refuse(where, name, why)


def check_level(where: str, name: str, value: int | None, source: str = "") -> None:
    """A load level (jobs, iodepth, devices, hosts): 1 to MAX_LEVEL."""
    if value is None:
        return
    if not 1 <= value <= MAX_LEVEL:
        raise refuse(where, f"{name}{source}", f"{number_text(value)} is out of range "
                                               f"(1 to {MAX_LEVEL:,})")  # fmt: skip


def check_record(where: str, record: NewPoint, metrics: Mapping[str, Any]) -> None:
    """The point as it will be stored (its columns and metrics, sums over jobs included)."""
    columns = dataclasses.asdict(record) | dict(metrics)
    check_figures(where, {f"stored {k}": v for k, v in columns.items()})


def check_samples(where: str, samples: Iterable[Sample]) -> None:
    for sample in samples:
        fields = dataclasses.asdict(sample)
        check_figures(f"{where}: 1-second sample", fields)
        t = fields.get("t")
        if isinstance(t, int) and not 0 <= t <= MAX_TIMESTAMP:
            raise refuse(where, "1-second sample time", f"{number_text(t)} is out of range")
