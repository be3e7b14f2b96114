"""Read elbencho's CSV result file (``elbencho --csvfile``) into fio's records.

One row per operation phase (SYNC, MKDIRS, WRITE, READ, ...), columns named in the first
line (elbencho's csv-docs.md): hosts, threads (per host), block size, IO depth, random,
``time ms``, ``IOPS``, ``MiB/s``, ``MiB`` each as [first] (when the fastest thread finished)
and [last] (when the slowest did: the whole phase), ``IO lat us [min/avg/max]``.

Each WRITE or READ phase with I/O becomes one job (units of engines/measurement.py) from its [last]
columns, the aggregate over every host and thread: I/Os = IOPS x time, bytes = I/Os x block
size, mean latency = IO lat us [avg]. Options say what ran: rw, bs, iodepth, numjobs =
threads per host, hosts = hosts (the CSV has no per-host figures), ioengine "elbencho".
"""

from __future__ import annotations

import csv
from collections.abc import Iterable

from arraybench.engines.measurement import DirStats, EngineDocument, Measurement
from arraybench.errors import OutputParseError
from arraybench.importer.format import Format, Sniffed
from arraybench.importer.limits import out_of_range, refuse
from arraybench.importer.lines import read_lines

TOOL = "elbencho"
_EMPTY = DirStats(0, 0, 0, 0.0, 0.0, None, None, None, "lat")
_HINT = "is this elbencho's CSV result file (--csvfile)?"
_DIRECTION = {"WRITE": "write", "READ": "read"}


def looks_like_elbencho(text: str) -> bool:
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    return first.startswith("ISO date,") and "IOPS [last]" in first


def _number(row: dict[str, str], name: str) -> float | None:
    text = (row.get(name) or "").strip()
    try:
        return float(text) if text else None
    except ValueError:
        return None


def _direction(row: dict[str, str]) -> DirStats:
    iops, time_ms = _number(row, "IOPS [last]"), _number(row, "time ms [last]")
    bs = _number(row, "block size")
    if not iops or not time_ms or not bs:
        return _EMPTY
    ios = round(iops * time_ms / 1000)
    moved = round(ios * bs)
    lat_us = _number(row, "IO lat us [avg]")
    return DirStats(ios=ios, io_bytes=moved, runtime_ms=round(time_ms),
                    iops=ios * 1000 / time_ms, bw_bytes=moved * 1000 / time_ms,
                    lat_mean_ns=lat_us * 1000 if lat_us is not None else None,
                    lat_min_ns=_scaled(row, "IO lat us [min]"),
                    lat_max_ns=_scaled(row, "IO lat us [max]"), lat_kind="lat")  # fmt: skip


# the columns the reader computes with: each is range-checked where it is read (limits.py)
_USED = ("IOPS [last]", "time ms [last]", "block size", "IO lat us [min]", "IO lat us [avg]",
         "IO lat us [max]", "IO depth", "threads", "hosts")  # fmt: skip


def _check(where: str, row: dict[str, str]) -> None:
    for name in _USED:
        why = out_of_range(_number(row, name))
        if why:
            raise refuse(where, f"column {name!r}", why)


def _scaled(row: dict[str, str], name: str) -> float | None:
    value = _number(row, name)
    return value * 1000 if value is not None else None


def _options(row: dict[str, str], operation: str) -> dict[str, str]:
    random = "rand" if row.get("random", "0").strip() == "1" else ""
    options = {"rw": f"{random}{operation.lower()}", "ioengine": TOOL}
    for option, column in (("bs", "block size"), ("iodepth", "IO depth"),
                           ("numjobs", "threads"), ("hosts", "hosts")):  # fmt: skip
        value = _number(row, column)
        if value:
            options[option] = str(round(value))
    if row.get("direct IO", "").strip() == "1":
        options["direct"] = "1"
    return options


def parse_elbencho(lines: Iterable[str], source: str = "") -> list[EngineDocument]:
    """One EngineDocument per READ or WRITE phase with I/O in an elbencho CSV file."""
    docs = []
    reader = csv.DictReader(line.lstrip("\ufeff") for line in lines)
    for row in reader:
        operation = (row.get("operation") or "").strip().upper()
        if operation not in _DIRECTION:
            continue
        _check(f"{source or 'elbencho CSV'}:{reader.line_num}", row)
        stats = _direction(row)
        if stats.empty:
            continue
        dirs = {"read": _EMPTY, "write": _EMPTY, _DIRECTION[operation]: stats}
        job = Measurement(name=f"elbencho-{operation.lower()}", groupid=0, error=0,
                           read=dirs["read"], write=dirs["write"], trim=_EMPTY,
                           options=_options(row, operation))  # fmt: skip
        version = (row.get("version") or "").strip()
        docs.append(EngineDocument(
            engine_version="", timestamp=None, timestamp_ms=None, global_options={}, jobs=[job],
            all_clients=None, disk_util=[], preamble="",
            notes=(f"elbencho {version} {operation}: the [last] columns (every host and "
                   "thread, until the slowest finished)",),
        ))  # fmt: skip
    if not docs:
        raise OutputParseError(f"{source or 'elbencho CSV'}: no READ or WRITE phase with I/O",
                            _HINT)  # fmt: skip
    return docs


def _read_file(sniffed: Sniffed) -> list[EngineDocument]:
    return read_lines(sniffed.path, parse_elbencho)


FORMAT = Format(
    name=TOOL,
    tool=TOOL,
    label="elbencho",
    what="CSV",
    how="--csvfile",
    detect=lambda s: looks_like_elbencho(s.head),
    read=_read_file,
    hosts_in_options=True,
)
