"""Read vdbench's ``flatfile.html`` (its column-by-column results) into fio's records.

vdbench writes one row per reporting interval and, at the end of each run (RD=), a row whose
Interval is ``avg_F-L``: its own average over intervals F..L (the warm-up excluded). The
first non-comment line names the columns; names differ between raw I/O runs (``rate MB/sec
bytes/io read% resp read_resp write_resp xfersize threads rdpct seekpct``) and file-system
runs (``Rate MB/sec MB_read MB_write Read_rate Read_resp Write_rate Write_resp Xfersize
Threads``), so columns are found by name, case-insensitively. MB is 1024**2 bytes.

Each run's average row becomes one job (units of engines/measurement.py): per direction the rate
x the averaged time (intervals F..L x the interval length, from the rows' time stamps) gives
the I/O count, bytes per I/O the bytes, the response time (ms) the mean latency.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from arraybench.engines.measurement import DirStats, EngineDocument, Measurement
from arraybench.errors import OutputParseError
from arraybench.importer.format import Format, Sniffed
from arraybench.importer.limits import out_of_range, refuse
from arraybench.importer.lines import read_lines

TOOL = "vdbench"
_AVG_RE = re.compile(r"^avg_(\d+)-(\d+)$")
_HINT = "is this vdbench's output/flatfile.html?"
_EMPTY = DirStats(0, 0, 0, 0.0, 0.0, None, None, None, "lat")


def looks_like_vdbench(text: str) -> bool:
    return "Vdbench" in text[:200] and "flatfile" in text[:200]


@dataclass(frozen=True)
class _Row:
    values: dict[str, str]

    def number(self, *names: str) -> float | None:
        for name in names:
            text = self.values.get(name)
            if text is not None and text != "n/a":
                try:
                    return float(text)
                except ValueError:
                    return None
        return None


# the columns the reader computes with: each is range-checked where it is read (limits.py)
_USED = ("rate", "mb/sec", "read_rate", "write_rate", "read%", "bytes/io", "xfersize",
         "threads", "rdpct", "seekpct", "read_resp", "write_resp")  # fmt: skip


def _checked(source: str, number: int, values: dict[str, str]) -> _Row:
    """A row whose used columns hold numbers the store can take; ImportRefused at its line."""
    for name in _USED:
        try:
            value = float(values.get(name, ""))
        except ValueError:
            continue
        why = out_of_range(value)
        if why:
            raise refuse(f"{source}:{number}", f"column {name!r}", why)
    return _Row(values)


def _rows(lines: Iterable[str], source: str = "") -> list[_Row]:
    header: list[str] | None = None
    rows = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith(("*", "<")):
            continue
        fields = line.split()
        if header is None:
            header = [f.lower() for f in fields] if "run" in (f.lower() for f in fields) else None
            continue
        if len(fields) == len(header):
            rows.append(_checked(source, number, dict(zip(header, fields, strict=True))))
    return rows


def _seconds(row: _Row) -> float | None:
    try:
        stamp = datetime.strptime(row.values["tod"], "%H:%M:%S.%f")
    except (KeyError, ValueError):
        return None
    return stamp.hour * 3600 + stamp.minute * 60 + stamp.second + stamp.microsecond / 1e6


def _interval_s(intervals: list[_Row]) -> float:
    """The reporting interval: the median step between interval rows' times (1 s default)."""
    times = [t for r in intervals if (t := _seconds(r)) is not None]
    steps = sorted(b - a for a, b in itertools.pairwise(times) if b > a)
    return round(steps[len(steps) // 2]) or 1.0 if steps else 1.0


def _direction(rate: float, runtime_s: float, per_io: float, resp_ms: float | None) -> DirStats:
    ios = round(rate * runtime_s)
    if ios <= 0 or runtime_s <= 0:
        return _EMPTY
    moved = round(ios * per_io)
    return DirStats(ios=ios, io_bytes=moved, runtime_ms=round(runtime_s * 1000),
                    iops=ios / runtime_s, bw_bytes=moved / runtime_s,
                    lat_mean_ns=resp_ms * 1e6 if resp_ms is not None else None,
                    lat_min_ns=None, lat_max_ns=None, lat_kind="lat")  # fmt: skip


def _rates(avg: _Row) -> tuple[float, float, float]:
    """(read rate, write rate, bytes per I/O) of an average row, raw or file-system."""
    rate = avg.number("rate") or 0.0
    mbps = (avg.number("mb/sec") or 0.0) * 2**20
    reads, writes = avg.number("read_rate"), avg.number("write_rate")
    if reads is None or writes is None:  # raw I/O: rate and read%
        share = (avg.number("read%") or 0.0) / 100
        reads, writes = rate * share, rate * (1 - share)
    per_io = avg.number("bytes/io") or (mbps / (reads + writes) if reads + writes else 0.0)
    return reads, writes, per_io


def _options(avg: _Row, reads: float, writes: float, per_io: float) -> dict[str, str]:
    seek = avg.number("seekpct")
    random = "rand" if seek is None or seek > 0 else ""
    read_pct = avg.number("rdpct")
    share = read_pct if read_pct is not None else 100 * reads / (reads + writes or 1)
    rw = "read" if share >= 100 else "write" if share <= 0 else "rw"
    options = {"rw": f"{random}{rw}" if rw != "rw" or random else "readwrite",
               "rwmixread": str(round(share)), "ioengine": TOOL, "iodepth": "1",
               "bs": str(round(avg.number("xfersize") or per_io))}  # fmt: skip
    threads = avg.number("threads")
    if threads:
        options["numjobs"] = str(round(threads))
    return options


def parse_vdbench(lines: Iterable[str], source: str = "") -> list[EngineDocument]:
    """One EngineDocument per vdbench run (RD) that has an average row with I/O."""
    rows = _rows(lines, source or "vdbench output")
    docs = []
    for avg in rows:
        match = _AVG_RE.match(avg.values.get("interval", ""))
        if not match:
            continue
        first, last = int(match.group(1)), int(match.group(2))
        run = avg.values.get("run", "")
        intervals = [r for r in rows if r.values.get("run") == run and
                     r.values.get("interval", "").isdigit()]  # fmt: skip
        runtime_s = max(0, last - first + 1) * _interval_s(intervals)
        reads, writes, per_io = _rates(avg)
        read = _direction(reads, runtime_s, per_io, avg.number("read_resp"))
        write = _direction(writes, runtime_s, per_io, avg.number("write_resp"))
        if read.empty and write.empty:
            continue
        job = Measurement(name=run, groupid=0, error=0, read=read, write=write, trim=_EMPTY,
                           options=_options(avg, reads, writes, per_io))  # fmt: skip
        docs.append(EngineDocument(
            engine_version="", timestamp=None, timestamp_ms=None, global_options={}, jobs=[job],
            all_clients=None, disk_util=[], preamble="",
            notes=(f"vdbench run {run}: its average over intervals {first}-{last}",),
        ))  # fmt: skip
    if not docs:
        raise OutputParseError(f"{source or 'vdbench output'}: no vdbench run with I/O", _HINT)
    return docs


def _read_file(sniffed: Sniffed) -> list[EngineDocument]:
    return read_lines(sniffed.path, parse_vdbench)


FORMAT = Format(
    name=TOOL,
    tool=TOOL,
    label="vdbench",
    what="flatfile.html",
    how="output/flatfile.html",
    detect=lambda s: looks_like_vdbench(s.head),
    read=_read_file,
)
