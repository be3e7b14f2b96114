"""What fio's logs give a point: the point their jobs wrote (`log_places`, `job_ranges`),
its 1-second samples (`log_samples`) and percentiles from histogram logs (`with_bins`), or,
when no result file names them, a point of their own rebuilt from the logged rates
(`log_candidate`)."""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from pathlib import Path

from arraybench.engines.fio.logs import (
    full_seconds,
    job_from_logs,
    parse_interval_log,
    per_second,
)
from arraybench.engines.fio.results import IntervalSample
from arraybench.engines.measurement import DirStats, EngineDocument, Measurement
from arraybench.importer.candidate import Candidate, Source
from arraybench.importer.describe import host_workers, job_groups, moved_nothing, new_candidate
from arraybench.importer.fio_logs import NAME, Log
from arraybench.importer.format import Skip
from arraybench.records import Sample

_VERSION_RE = re.compile(r"fio-(\d+)\.(\d+)")
_EPOCH_MS = 10**11  # a log time above this is a Unix-epoch stamp (log_unix_epoch=1)
_LOG_OPTIONS = ("write_bw_log", "write_iops_log", "write_lat_log")


def log_places(c: Candidate) -> set[tuple[Path, str]]:
    """(folder, prefix) of the logs this point's jobs wrote: the write_*_log options, read
    beside the result file (and relative to it), and the result file's own name."""
    folder = c.source.path.parent.resolve()
    places = {(folder, c.source.path.stem)}
    for job in c.jobs:
        options = c.doc.global_options | job.options
        for value in (options[k] for k in _LOG_OPTIONS if options.get(k)):
            places |= {(folder, Path(value).name), ((folder / value).parent, Path(value).name)}
    return places


def job_ranges(cands: list[Candidate]) -> dict[int, range] | None:
    """fio numbers log files by job, over the whole run: the numbers of each group's jobs."""
    first = cands[0]
    run = (first.source.rel, first.doc_index)
    if any((c.source.rel, c.doc_index) != run for c in cands) or first.hosts:
        return None
    ranges: dict[int, range] = {}
    start = 1
    for groupid, jobs in sorted(job_groups(first.doc).items()):
        count = host_workers(jobs, first.doc.global_options)
        ranges[groupid] = range(start, start + count)
        start += count
    return ranges


_SAMPLE_COLUMNS = ("read_iops", "write_iops", "read_mbps", "write_mbps", "read_lat_us",
                   "write_lat_us")  # fmt: skip


def log_samples(logs: list[Log], version: str) -> tuple[list[Sample], bool]:
    """1-second samples from one point's logs, and whether their clock is the Unix epoch."""
    parsed: dict[str, list[list[IntervalSample]]] = defaultdict(list)
    for log in sorted(logs, key=lambda lg: (lg.kind, lg.job or 0)):
        rows = parse_interval_log(log.path)
        if any(r.bs for r in rows):
            raise Skip(
                f"{log.rel}: one row per I/O (log_avg_msec=0); only averaged logs "
                "(log_avg_msec >= 1) are imported"
            )
        parsed[log.kind].append(rows)
    match = _VERSION_RE.search(version)
    lat_scale = 1000 if match and int(match.group(1)) < 3 else 1  # fio < 3 logs latency in us
    iops, bw, lat = parsed.get("iops", []), parsed.get("bw", []), parsed.get("lat", [])
    columns: dict[str, dict[int, float]] = {}
    for ddir, name in ((0, "read"), (1, "write")):
        columns[f"{name}_iops"] = dict(per_second(iops, "iops", ddir))
        columns[f"{name}_mbps"] = {t: v * 1024 / 1e6 for t, v in per_second(bw, "bw", ddir)}
        lat_ns = per_second(lat, "lat", ddir, iops_by_job=iops if len(iops) == len(lat) else None)
        columns[f"{name}_lat_us"] = {t: v * lat_scale / 1000 for t, v in lat_ns}
    complete = full_seconds(iops or bw or lat)
    seconds = sorted({t for col in columns.values() for t in col} & complete)
    samples = [Sample(t, *(columns[c].get(t) for c in _SAMPLE_COLUMNS)) for t in seconds]
    epoch = any(r.time_ms > _EPOCH_MS for rows in (iops or bw or lat) for r in rows[:1])
    return samples, epoch


def with_bins(jobs: list[Measurement], merged: dict[int, dict[int, int]]) -> list[Measurement]:
    """The point's jobs with the merged histogram: on the first job that moved data in each
    direction, empty bins on the others, so that the point's merged bins (aggregate's
    merge_bins) are exactly the logs' histogram."""
    out = []
    given: set[int] = set()
    for job in jobs:
        changes: dict[str, DirStats] = {}
        for ddir, name in ((0, "read"), (1, "write")):
            stats = job.direction(name)
            if ddir not in merged or stats.empty:
                continue
            bins = merged[ddir] if ddir not in given else {}
            given.add(ddir)
            changes[name] = dataclasses.replace(stats, bins_ns=bins, percentiles_ns={})
        out.append(dataclasses.replace(job, **changes))  # type: ignore[arg-type]
    return out


def log_candidate(root: Path, prefix: str, logs: list[Log]) -> Candidate:
    """A point to be from one prefix's logs alone: one job per log number."""
    by_job: dict[int, dict[str, list[IntervalSample]]] = defaultdict(dict)
    for log in (lg for lg in logs if lg.kind != "hist"):
        rows = parse_interval_log(log.path)
        if any(r.bs for r in rows):
            raise Skip("one row per I/O (log_avg_msec=0): only averaged logs are imported")
        by_job[log.job or 0][log.kind] = rows
    jobs = []
    for _, kinds in sorted(by_job.items()):
        job = job_from_logs(prefix, kinds.get("iops", []), kinds.get("bw", []),
                            kinds.get("lat", []))  # fmt: skip
        if job is not None:
            jobs.append(job)
    if not jobs or moved_nothing(jobs):
        raise Skip("no iops or bw log with any I/O: nothing to rebuild the totals from")
    if not any(j.read.io_bytes or j.write.io_bytes for j in jobs):
        raise Skip("an iops log without its bw log: no block size or bytes to rebuild")
    doc = EngineDocument(engine_version="", timestamp=None, timestamp_ms=None, global_options={},
                      jobs=jobs, all_clients=None, disk_util=[], preamble="")  # fmt: skip
    first = sorted(logs, key=lambda lg: lg.rel)[0]
    source = Source(first.path, first.rel.rsplit("/", 1)[0] + "/" + prefix
                     if "/" in first.rel else prefix, NAME)  # fmt: skip
    c = new_candidate(source, doc, 1, 0, jobs)
    c.logs = [log.rel for log in logs]
    return c
