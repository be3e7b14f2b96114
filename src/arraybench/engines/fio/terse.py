"""Read fio's terse (``--minimal``, ``--output-format=terse``) output, versions 2 to 5.

The field order is fio's documented one (HOWTO "Terse output"); one line per job (or per
group with group_reporting), ``;``-separated:

* head: ``2;name;groupid;error`` (v2) or ``V;fio-X.Y;name;groupid;error`` (v3, v4, v5);
* one block per direction: read, write, and trim in v2, v4 and v5 (not v3). Each block:
  io (KiB), bw (KiB/s), IOPS, runtime (ms); slat min, max, mean, stdev; clat min, max,
  mean, stdev (all us); 20 percentiles ``P%=us``; lat min, max, mean, stdev (us); bw min,
  max, percent of aggregate, mean, stdev (KiB/s); v5 adds the bw sample count and IOPS
  min, max, mean, stdev, samples;
* then CPU, I/O depths, latency buckets and (v3+) disk utilisation, not read here.

More: docs/internals.md, `engines/fio/terse.py`."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from arraybench.engines.measurement import DIRECTIONS, DirStats, EngineDocument, Measurement
from arraybench.errors import OutputParseError

_LINE_RE = re.compile(r"^(?:2;[^;\n]*;\d+;-?\d+;|[345];fio-[^;\n]*;[^;\n]*;\d+;-?\d+;)")
_PCT_RE = re.compile(r"^(\d+(?:\.\d+)?)%=(\d+)$")
_DIR_FIELDS = {2: 41, 3: 41, 4: 41, 5: 47}
ALL_CLIENTS = "All clients"
_HINT = "is this fio's terse output (--minimal or --output-format=terse)?"


@dataclass(frozen=True)
class _Head:
    version: int
    fio: str
    name: str
    groupid: int
    error: int
    fields: list[str]  # the direction blocks and what follows


def is_terse_line(line: str) -> bool:
    return bool(_LINE_RE.match(line))


def looks_like_terse(text: str) -> bool:
    return any(is_terse_line(line) for line in text.splitlines()[:200])


def _head(line: str) -> _Head:
    parts = line.rstrip("\n").split(";")
    version = int(parts[0])
    if version == 2:
        return _Head(2, "", parts[1], int(parts[2]), int(parts[3]), parts[4:])
    return _Head(version, parts[1], parts[2], int(parts[3]), int(parts[4]), parts[5:])


def _likely_block_size(per_io: float) -> int:
    power = 1 << max(0, round(math.log2(max(per_io, 1))))
    if abs(per_io - power) <= 0.05 * power:
        return power
    return max(512, 512 * round(per_io / 512))


def _direction(f: list[str]) -> DirStats:
    """One direction block (41 or 47 fields) -> DirStats in bytes, ms and ns."""
    io_kib, _bw, iops, runtime = int(f[0]), int(f[1]), int(f[2]), int(f[3])
    io_bytes = io_kib * 1024
    ios = 0
    if io_bytes and iops and runtime:
        # IOPS is truncated; the block size it implies, then the count, are exact for
        # fixed-size I/O (io is whole KiB)
        bs = _likely_block_size(io_bytes / (iops * runtime / 1000))
        ios = round(io_bytes / bs)
    elif iops and runtime:
        ios = round(iops * runtime / 1000)
    us = 1000.0
    clat = [float(v) * us for v in f[8:12]]
    lat = [float(v) * us for v in f[32:36]]
    summary = lat if lat[1] > 0 else clat
    percentiles: dict[float, float] = {}
    for text in f[12:32]:
        match = _PCT_RE.match(text)
        if match and float(match.group(1)) > 0:
            percentiles[float(match.group(1))] = float(match.group(2)) * us
    has = ios > 0 and summary[1] > 0
    return DirStats(
        ios=ios,
        io_bytes=io_bytes,
        runtime_ms=runtime,
        iops=ios * 1000 / runtime if runtime else 0.0,
        bw_bytes=io_bytes * 1000 / runtime if runtime else 0.0,
        lat_mean_ns=summary[2] if has else None,
        lat_min_ns=summary[0] if has else None,
        lat_max_ns=summary[1] if has else None,
        lat_kind="clat",
        percentiles_ns=percentiles if ios else {},
    )


_EMPTY = DirStats(0, 0, 0, 0.0, 0.0, None, None, None, "clat")


def _job(head: _Head, where: str) -> Measurement:
    width = _DIR_FIELDS[head.version]
    count = 2 if head.version == 3 else 3
    if len(head.fields) < width * count:
        raise OutputParseError(
            f"{where}: a terse v{head.version} line of job {head.name!r} has "
            f"{len(head.fields)} fields after its head, fewer than the {width * count} "
            "of its direction blocks",
            _HINT,
        )
    dirs = [_direction(head.fields[i * width : (i + 1) * width]) for i in range(count)]
    dirs += [_EMPTY] * (len(DIRECTIONS) - count)
    cpu = head.fields[width * count : width * count + 2]
    usr, sys = (float(c.rstrip("%")) for c in cpu) if len(cpu) == 2 else (None, None)
    return Measurement(
        name=head.name, groupid=head.groupid, error=head.error,
        read=dirs[0], write=dirs[1], trim=dirs[2], options={},
        usr_cpu=usr, sys_cpu=sys,
    )  # fmt: skip


def parse_fio_terse(lines: Iterable[str], source: str = "") -> list[EngineDocument]:
    """One EngineDocument per run found in terse lines (other lines are kept as messages).

    A run ends where the groupid sequence goes back or the fio version changes: terse has
    no other mark of a new invocation (lines with one name and group are jobs of one run).
    """
    where = source or "fio terse output"
    runs: list[tuple[str, list[Measurement], list[str]]] = []
    everyone: dict[int, Measurement] = {}  # run index -> fio's "All clients" line
    messages: list[str] = []
    last: tuple[str, int] | None = None
    start = 0  # first run since fio's last "All clients" line
    for lineno, line in enumerate(lines, start=1):
        if not is_terse_line(line):
            if line.strip().startswith("fio:"):
                messages.append(line.strip())
            continue
        try:
            head = _head(line)
            job = _job(head, f"{where}: line {lineno}")
        except (ValueError, IndexError) as exc:
            raise OutputParseError(f"{where}: line {lineno}: cannot read a terse field: {exc}",
                                _HINT) from exc  # fmt: skip
        if head.name == ALL_CLIENTS:  # fio --client: the sum of every group of every host
            # ends one client run: the hosts' lines since the last one (each host restarts
            # the groupid sequence) are jobs of that one run
            if len(runs) > start + 1:
                merged = [j for _, jobs, _ in runs[start:] for j in jobs]
                runs[start:] = [(runs[start][0], merged, runs[start][2])]
            if runs:
                everyone[len(runs) - 1] = job
            start, last = len(runs), None
            continue
        if last is None or head.fio != last[0] or head.groupid < last[1]:
            runs.append((head.fio, [], messages))
            messages = []
        runs[-1][1].append(job)
        last = (head.fio, head.groupid)
    if not runs:
        raise OutputParseError(f"{where}: no fio terse lines found", _HINT)
    note = (
        "terse output: block size inferred from bytes per I/O; job count and job options "
        "are not in terse output"
    )
    return [
        EngineDocument(
            engine_version=version,
            timestamp=None,
            timestamp_ms=None,
            global_options={},
            jobs=jobs,
            all_clients=everyone.get(index),
            disk_util=[],
            preamble="\n".join(pre),
            notes=(note,),
        )
        for index, (version, jobs, pre) in enumerate(runs)
    ]
