"""Read DiskSpd's text results (``diskspd ... -Rtext``, the default) into fio's records.

DiskSpd (Microsoft's storage load tool) prints, per timespan: its input parameters (block
size, random or sequential, write share, outstanding I/Os per thread, threads per file, for
each target) or the command line, then ``Results for timespan N``: ``actual test time``,
``thread count``, and the tables ``Total IO``, ``Read IO``, ``Write IO`` with one row per
thread and target and a ``total:`` row (bytes, I/Os, MiB/s, I/O per s, AvgLat in ms,
IopsStdDev, LatStdDev), then a latency distribution in ms (min, 25th ... 99th, 3-nines ...
9-nines, max) per direction.

The totals become one job of an EngineDocument (units of engines/measurement.py: bytes, ms, ns):
I/Os and bytes as printed, runtime = I/Os / (I/O per s) (more precise than the printed test time,
which has two decimals), mean latency = the total row's AvgLat (DiskSpd weighs it by I/Os),
percentiles from the distribution. Job options say what DiskSpd ran (rw, bs, rwmixread,
iodepth = outstanding I/Os per thread, numjobs = thread count, ioengine "diskspd").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from arraybench.engines.measurement import DirStats, EngineDocument, Measurement
from arraybench.errors import OutputParseError
from arraybench.importer.format import Format, Sniffed
from arraybench.importer.limits import out_of_range, refuse
from arraybench.importer.lines import read_lines

TOOL = "diskspd"
_TIMESPAN_RE = re.compile(r"^Results for timespan (\d+):")
_TABLE_RE = re.compile(r"^(Total|Read|Write) IO\s*$")
_TOTAL_RE = re.compile(
    r"^total:\s+(\d+)\s*\|\s*(\d+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|"
)
_PCT_ROW_RE = re.compile(r"^\s*(min|max|\d+th|\d-nines)\s*\|\s*(\S+)\s*\|\s*(\S+)\s*\|")
_PCT = {"25th": 25.0, "50th": 50.0, "75th": 75.0, "90th": 90.0, "95th": 95.0, "99th": 99.0,
        "3-nines": 99.9, "4-nines": 99.99, "5-nines": 99.999, "6-nines": 99.9999}  # fmt: skip
_HINT = "is this DiskSpd's text output (-Rtext)?"


def looks_like_diskspd(text: str) -> bool:
    head = text.lstrip("\ufeff\n")
    return "Results for timespan" in text and (
        head.startswith("Input parameters:") or "diskspd" in head[:300].lower()
    )


@dataclass
class _Params:
    bs: int | None = None
    write_pct: int | None = None
    random: bool | None = None
    outstanding: int | None = None
    threads: int | None = None


@dataclass
class _Span:
    test_time_s: float | None = None
    threads: int | None = None
    totals: dict[str, tuple[int, int, float, float, float]] = field(default_factory=dict)
    pct: dict[str, dict[str, float]] = field(default_factory=dict)  # read/write -> key -> ms


def _size(text: str) -> int | None:
    match = re.match(r"(\d+)\s*(KiB|MiB|K|M)?", text.strip())
    if not match:
        return None
    factor = {"KiB": 1024, "K": 1024, "MiB": 1 << 20, "M": 1 << 20}.get(match.group(2) or "", 1)
    return int(match.group(1)) * factor


def _params(line: str, params: _Params) -> None:
    text = line.strip()
    if text.startswith("block size:") and params.bs is None:
        params.bs = _size(text.split(":", 1)[1])
    elif "performing mix test" in text:
        mix = re.search(r"ratio: (\d+)/(\d+)", text)
        if mix and params.write_pct is None:
            params.write_pct = int(mix.group(2))
    elif text == "performing write test" and params.write_pct is None:
        params.write_pct = 100
    elif text == "performing read test" and params.write_pct is None:
        params.write_pct = 0
    elif text.startswith("using random I/O") and params.random is None:
        params.random = True
    elif text.startswith("using sequential I/O") and params.random is None:
        params.random = False
    elif text.startswith("number of outstanding I/O operations") and params.outstanding is None:
        params.outstanding = int(text.rsplit(":", 1)[1])
    elif text.startswith("Command Line:"):
        _command_line(text, params)


def _command_line(text: str, params: _Params) -> None:
    """Flags of the DiskSpd command line, for what the parameter block does not say."""
    for flag in text.split()[1:]:
        if flag.startswith("-b") and params.bs is None:
            params.bs = _size(flag[2:])
        elif flag.startswith("-w") and flag[2:].isdigit() and params.write_pct is None:
            params.write_pct = int(flag[2:])
        elif flag.startswith("-o") and flag[2:].isdigit() and params.outstanding is None:
            params.outstanding = int(flag[2:])
        elif flag.startswith("-r") and params.random is None:
            params.random = True


def _read(lines: Iterable[str], source: str) -> tuple[_Params, list[_Span]]:
    params, spans = _Params(), []
    table: str | None = None
    in_pct = False
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n").lstrip("\ufeff")
        span = _TIMESPAN_RE.match(line)
        if span:
            spans.append(_Span())
            continue
        if not spans:
            _params(line, params)
            _check(f"{source}:{number}", vars(params))
            continue
        _span_line(line, spans[-1], table, in_pct)
        _check(f"{source}:{number}", vars(spans[-1]))
        heading = _TABLE_RE.match(line)
        table = heading.group(1).lower() if heading else table
        if "%-ile" in line:
            in_pct = True
    return params, spans


def _check(where: str, figures: dict[str, object]) -> None:
    """The numbers read so far (a line adds at most a few): in range, or ImportRefused at
    the line that brought them (limits.py)."""
    for name, value in figures.items():
        inner = value.values() if isinstance(value, dict) else [value]
        for item in inner:
            numbers = item if isinstance(item, tuple) else (
                item.values() if isinstance(item, dict) else [item])  # fmt: skip
            for number in numbers:
                why = out_of_range(number)
                if why:
                    raise refuse(where, name.replace("_", " "), why)


def _span_line(line: str, span: _Span, table: str | None, in_pct: bool) -> None:
    text = line.strip()
    if text.startswith("actual test time:"):
        span.test_time_s = float(text.split(":", 1)[1].strip().rstrip("s"))
    elif text.startswith("thread count:"):
        span.threads = int(text.split(":", 1)[1])
    elif table and (total := _TOTAL_RE.match(text)):
        moved, ios = int(total.group(1)), int(total.group(2))
        span.totals[table] = (moved, ios, float(total.group(3)), float(total.group(4)),
                              float(total.group(5)))  # fmt: skip
    elif in_pct and (row := _PCT_ROW_RE.match(line)):
        for ddir, value in (("read", row.group(2)), ("write", row.group(3))):
            if value != "N/A":
                span.pct.setdefault(ddir, {})[row.group(1)] = float(value)


def _direction(span: _Span, ddir: str) -> DirStats:
    moved, ios, _mibs, iops, lat_ms = span.totals.get(ddir, (0, 0, 0.0, 0.0, 0.0))
    if not ios:
        return DirStats(0, 0, 0, 0.0, 0.0, None, None, None, "lat")
    runtime_s = ios / iops if iops else (span.test_time_s or 0.0)
    pct = span.pct.get(ddir, {})
    return DirStats(
        ios=ios,
        io_bytes=moved,
        runtime_ms=round(runtime_s * 1000),
        iops=ios / runtime_s if runtime_s else 0.0,
        bw_bytes=moved / runtime_s if runtime_s else 0.0,
        lat_mean_ns=lat_ms * 1e6,
        lat_min_ns=pct["min"] * 1e6 if "min" in pct else None,
        lat_max_ns=pct["max"] * 1e6 if "max" in pct else None,
        lat_kind="lat",
        percentiles_ns={_PCT[k]: v * 1e6 for k, v in pct.items() if k in _PCT},
    )


def _options(params: _Params, span: _Span) -> dict[str, str]:
    write = params.write_pct if params.write_pct is not None else 0
    kind = "rand" if params.random else ""
    rw = f"{kind}write" if write == 100 else f"{kind}read" if write == 0 else f"{kind}rw"
    if rw == "rw":
        rw = "readwrite"
    options = {"rw": rw, "ioengine": TOOL, "rwmixread": str(100 - write)}
    if params.bs:
        options["bs"] = str(params.bs)
    if params.outstanding:
        options["iodepth"] = str(params.outstanding)
    if span.threads:
        options["numjobs"] = str(span.threads)
    return options


def parse_diskspd(lines: Iterable[str], source: str = "") -> list[EngineDocument]:
    """One EngineDocument per DiskSpd timespan (one job: the totals of every thread and target)."""
    params, spans = _read(lines, source or "DiskSpd output")
    spans = [s for s in spans if s.totals]
    if not spans:
        raise OutputParseError(f"{source or 'DiskSpd output'}: no DiskSpd results found", _HINT)
    docs = []
    for number, span in enumerate(spans, start=1):
        job = Measurement(
            name=f"diskspd-timespan{number}", groupid=0, error=0,
            read=_direction(span, "read"), write=_direction(span, "write"),
            trim=DirStats(0, 0, 0, 0.0, 0.0, None, None, None, "lat"),
            options=_options(params, span),
        )  # fmt: skip
        docs.append(EngineDocument(
            engine_version="", timestamp=None, timestamp_ms=None, global_options={}, jobs=[job],
            all_clients=None, disk_util=[], preamble="",
            notes=("DiskSpd results: one point per timespan, the totals of all its threads",),
        ))  # fmt: skip
    return docs


def _read_file(sniffed: Sniffed) -> list[EngineDocument]:
    return read_lines(sniffed.path, parse_diskspd)


FORMAT = Format(
    name=TOOL,
    tool=TOOL,
    label="DiskSpd",
    what="text",
    how="-Rtext",
    detect=lambda s: looks_like_diskspd(s.head),
    read=_read_file,
)
