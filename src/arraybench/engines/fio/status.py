"""fio's periodic status reports (`--status-interval=1`): the live second of a running point.

fio keeps its interval logs in memory until a job ends, so the store's 1-second samples exist
only after a point. With ``--status-interval`` fio appends a full JSON report (cumulative
counters per job) to its ``--output`` file every interval; two consecutive reports give the
last complete second: I/Os, bytes, mean latency (from ``lat_ns`` mean x N), p99 completion
latency (from the json+ ``clat_ns.bins`` histogram's difference) and errors, per direction
and per host (``hostname`` of a job under ``--client``; "local" otherwise).

`StatusTail` reads the growing file incrementally (only whole documents); `live_seconds`
turns a pair of reports into `LiveSecond`s; `keep_last_document` leaves the file as fio
writes it without status reports once the point is over (a long point writes ~10 KB per job
per second).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from arraybench.engines.fio.logs import second_of
from arraybench.engines.live import DirectionSecond, LiveReader, LiveSecond

LOCAL_HOST = "local"
DIRECTIONS = ("read", "write")
_START = re.compile(r'^\{\s*"fio version"', re.MULTILINE)
_END = re.compile(r"^\}\s*$", re.MULTILINE)
_START_BYTES = re.compile(rb'^\{\s*"fio version"', re.MULTILINE)
BLOCK = 1 << 20
MAX_CHUNK = 8 << 20  # read at most this much per poll (a slow poll never reads a huge file)


@dataclass
class _Totals:
    """A host's cumulative counters in one report, per direction."""

    ios: dict[str, int] = field(default_factory=dict)
    bytes: dict[str, int] = field(default_factory=dict)
    lat_sum_ns: dict[str, float] = field(default_factory=dict)
    bins: dict[str, dict[int, int]] = field(default_factory=dict)
    errors: int = 0


@dataclass(frozen=True)
class StatusReport:
    time_ms: int
    hosts: dict[str, _Totals]


def _host_totals(jobs: Iterable[Mapping[str, Any]]) -> dict[str, _Totals]:
    found: dict[str, _Totals] = {}
    for job in jobs:
        totals = found.setdefault(str(job.get("hostname") or LOCAL_HOST), _Totals())
        errs = job.get("total_err")
        totals.errors += int(errs) if isinstance(errs, int) else int(bool(job.get("error")))
        for d in DIRECTIONS:
            stats = job.get(d) or {}
            lat = stats.get("lat_ns") or {}
            totals.ios[d] = totals.ios.get(d, 0) + int(stats.get("total_ios") or 0)
            totals.bytes[d] = totals.bytes.get(d, 0) + int(stats.get("io_bytes") or 0)
            weighted = float(lat.get("mean") or 0.0) * int(lat.get("N") or 0)
            totals.lat_sum_ns[d] = totals.lat_sum_ns.get(d, 0.0) + weighted
            bins = totals.bins.setdefault(d, {})
            for value, count in ((stats.get("clat_ns") or {}).get("bins") or {}).items():
                bins[int(value)] = bins.get(int(value), 0) + int(count)
    return found


def status_report(document: Mapping[str, Any]) -> StatusReport | None:
    """A decoded fio JSON report; None when it is not one (no time stamp or jobs)."""
    stamp, jobs = document.get("timestamp_ms"), document.get("jobs")
    if not isinstance(stamp, int) or not isinstance(jobs, list):
        return None
    return StatusReport(stamp, _host_totals(j for j in jobs if isinstance(j, dict)))


def _p99(bins: Mapping[int, int]) -> float | None:
    total = sum(bins.values())
    if total <= 0:
        return None
    rank, seen = 0.99 * total, 0
    for value in sorted(bins):
        seen += bins[value]
        if seen >= rank:
            return value / 1000
    return None


def _direction(before: _Totals, after: _Totals, d: str, seconds: float) -> DirectionSecond:
    ios = after.ios.get(d, 0) - before.ios.get(d, 0)
    size = after.bytes.get(d, 0) - before.bytes.get(d, 0)
    lat = after.lat_sum_ns.get(d, 0.0) - before.lat_sum_ns.get(d, 0.0)
    old = before.bins.get(d, {})
    diff = {v: c - old.get(v, 0) for v, c in after.bins.get(d, {}).items() if c > old.get(v, 0)}
    return DirectionSecond(
        iops=ios / seconds,
        mbps=size / seconds / 1e6,
        lat_mean_us=lat / ios / 1000 if ios > 0 else None,
        lat_p99_us=_p99(diff) if ios > 0 else None,
    )


def live_seconds(before: StatusReport, after: StatusReport) -> list[LiveSecond]:
    """Each host's second between two reports; none when the counters went back (fio resets
    them when its ramp ends) or the reports are not about a second apart (fio's final report
    comes sooner after the last periodic one: its I/O stopped within that time)."""
    seconds = (after.time_ms - before.time_ms) / 1000
    if not 0.9 <= seconds <= 2.0:
        return []
    found = []
    for host, now in after.hosts.items():
        then = before.hosts.get(host)
        if then is None or any(now.ios.get(d, 0) < then.ios.get(d, 0) for d in DIRECTIONS):
            continue
        read, write = (_direction(then, now, d, seconds) for d in DIRECTIONS)
        found.append(LiveSecond(second_of(after.time_ms), host, read, write, now.errors))
    return found


class StatusTail:
    """The whole reports fio appended to its output file since the last `poll`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.pending = ""
        self.decoder = json.JSONDecoder()

    def poll(self) -> list[StatusReport]:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as fh:
                fh.seek(self.offset)
                chunk = fh.read(MAX_CHUNK)
                self.offset = fh.tell()
        except OSError:
            return []  # not created yet
        self.pending += chunk
        reports: list[StatusReport] = []
        while (start := _START.search(self.pending)) is not None:
            end = _END.search(self.pending, start.end())
            if end is None:
                self.pending = self.pending[start.start() :]
                return reports
            text = self.pending[start.start() : end.end()]
            self.pending = self.pending[end.end() :]
            try:
                report = status_report(self.decoder.decode(text))
            except ValueError:
                continue  # a partial write or garbage between reports: the next one counts
            if report is not None:
                reports.append(report)
        self.pending = self.pending[-64:]  # no report started: keep only a possible prefix
        return reports


class StatusSeconds:
    """fio's `LiveReader`: the seconds between consecutive status reports of `path`, and the
    file cut back to its last document when the job is over."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tail = StatusTail(path)
        self.last: StatusReport | None = None

    def poll(self) -> list[list[LiveSecond]]:
        found = []
        for report in self.tail.poll():
            if self.last is not None and (seconds := live_seconds(self.last, report)):
                found.append(seconds)
            self.last = report
        return found

    def finish(self) -> None:
        keep_last_document(self.path)


def status_seconds(path: Path) -> LiveReader:
    return StatusSeconds(path)


def _last_start(fh: BinaryIO, size: int) -> int | None:
    """Where the last report starts, read backwards a block at a time (a long point's output
    is hundreds of MB: it is never read whole)."""
    end = size
    while end > 0:
        start = max(0, end - BLOCK)
        fh.seek(start)
        block = fh.read(end - start + 64)  # a start cut by the block's edge is seen whole
        found = [m.start() for m in _START_BYTES.finditer(block) if start + m.start() < end]
        if found:
            return start + found[-1]
        end = start
    return None


def keep_last_document(path: Path) -> None:
    """fio's output file as without `--status-interval`: the text before the first report
    (fio's warnings) and the last report, replaced atomically; untouched with one report."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(BLOCK)
            first = _START_BYTES.search(head)
            last = _last_start(fh, os.fstat(fh.fileno()).st_size)
            if first is None or last is None or last <= first.start():
                return
            spare = path.with_name(path.name + ".tmp")
            with open(spare, "wb") as out:
                out.write(head[: first.start()])
                fh.seek(last)
                shutil.copyfileobj(fh, out)
    except OSError:
        return
    os.replace(spare, path)
