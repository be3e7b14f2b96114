"""Read fio JSON output (``--output-format=json`` / ``json+``) of any fio version.

More: docs/internals.md, `engines/fio/parse.py`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from arraybench.engines.fio.logs import plat_idx_to_val
from arraybench.engines.measurement import DIRECTIONS, DirStats, EngineDocument, Measurement
from arraybench.errors import OutputParseError

ALL_CLIENTS = "All clients"
# fio wrote io_bytes in KiB up to 2.20; 2.21 switched to bytes and added io_kbytes.
_IO_BYTES_IN_BYTES_SINCE = (2, 21)
_VERSION_RE = re.compile(r"fio-(\d+)\.(\d+)")
# A fio document starts with "{" in column 0: nested objects are always indented.
_DOC_START_RE = re.compile(r"^\{", re.MULTILINE)
_ANY_START_RE = re.compile(
    r'\{\s*"(?:fio version|client_stats|disk_util|global options|jobs|time|timestamp)"\s*:'
)
# Each failed decode costs up to the length of the text (json builds its error message by
# counting lines): after this many, hostile text (512 KiB of "{") is given up on, linearly.
_MAX_FAILED_DECODES = 50
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.IGNORECASE)
_SIZE_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
# Keys client/server mode adds to each per-server "global options" object: not fio options.
_SERVER_KEYS = frozenset({"hostname", "port"})
_BINS_CONSTANTS = ("FIO_IO_U_PLAT_BITS", "FIO_IO_U_PLAT_VAL", "FIO_IO_U_PLAT_NR")


# --------------------------------------------------------------------------- documents


def parse_fio_json_file(path: str | Path) -> list[EngineDocument]:
    """``parse_fio_json`` on a file (undecodable bytes are replaced, not fatal)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise OutputParseError(
            f"cannot read fio output {path}: {exc.strerror or exc}", "check the path"
        ) from exc
    return parse_fio_json(text)


def parse_fio_json(text: str) -> list[EngineDocument]:
    """Every fio JSON document in ``text``, in order, with the text before each as preamble.

    Raises OutputParseError when the text holds no fio JSON document at all.
    """
    found = _split_documents(text, _DOC_START_RE.finditer(text))
    if not found:
        # Re-serialised or minified JSON need not start in column 0: try every "{" that
        # opens an object with one of fio's top-level keys.
        found = _split_documents(text, _ANY_START_RE.finditer(text))
    if not found:
        raise _no_json_error(text)
    docs = []
    for number, (raw, preamble) in enumerate(found, start=1):
        try:
            docs.append(_document(raw, preamble))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            # Valid JSON that is not shaped like fio's output (hand-edited, another tool's).
            raise OutputParseError(
                f"fio JSON document {number} is malformed: {type(exc).__name__}: {exc}",
                "was the file written by fio --output-format=json and left unedited?",
            ) from exc
    return docs


def last_document(docs: list[EngineDocument]) -> EngineDocument:
    """The final document: with SIGUSR1 / --status-interval dumps, the cumulative end result."""
    if not docs:
        raise OutputParseError("no fio JSON document to choose from", "parse the fio output first")
    return docs[-1]


def _split_documents(
    text: str, starts: Iterable[re.Match[str]]
) -> list[tuple[dict[str, Any], str]]:
    decoder = json.JSONDecoder()
    found: list[tuple[dict[str, Any], str]] = []
    end = 0
    failed = 0
    for match in starts:
        start = match.start()
        if start < end:
            continue  # inside a document already decoded
        try:
            raw, stop = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            # a "{" in an error message, a document cut short, or nesting deeper than
            # Python's stack (hostile input)
            failed += 1
            if failed >= _MAX_FAILED_DECODES:
                break
            continue
        if not _is_fio_document(raw):
            continue
        found.append((raw, text[end:start].strip()))
        end = stop
    return found


def _is_fio_document(raw: object) -> bool:
    return isinstance(raw, dict) and any(
        key in raw for key in ("fio version", "jobs", "client_stats")
    )


def _no_json_error(text: str) -> OutputParseError:
    lines = [line for line in text.splitlines() if line.strip()]
    first = lines[0].strip()[:60] if lines else "(empty output)"
    return OutputParseError(
        f"no fio JSON document found; the output starts with: {first!r}",
        "fio failed before writing results, or was not run with --output-format=json",
    )


def _document(raw: dict[str, Any], preamble: str) -> EngineDocument:
    version_text = str(raw.get("fio version", ""))
    version = _parse_version(version_text)
    global_options = _flatten_global_options(raw.get("global options"))
    jobs = [_job(entry, version, global_options) for entry in raw.get("jobs") or []]
    clients = list(raw.get("client_stats") or [])
    all_clients = None
    if clients and clients[-1].get("jobname") == ALL_CLIENTS:
        all_clients = _job(clients.pop(), version, global_options, keep_hostname=False)
    jobs += [_job(entry, version, global_options) for entry in clients]
    return EngineDocument(
        engine_version=version_text,
        timestamp=_opt_int(raw.get("timestamp")),
        timestamp_ms=_opt_int(raw.get("timestamp_ms")),
        global_options=global_options,
        jobs=jobs,
        all_clients=all_clients,
        disk_util=[d for d in raw.get("disk_util") or [] if isinstance(d, dict)],
        preamble=preamble,
    )


def _parse_version(text: str) -> tuple[int, int] | None:
    """(major, minor) of "fio-3.30-63-g66087" / "fio-2.1.4"; None when unrecognised."""
    match = _VERSION_RE.search(text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _options(raw: object) -> dict[str, str]:
    if not isinstance(raw, dict):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in raw.items()}


def _flatten_global_options(raw: object) -> dict[str, str]:
    """One dict; a client/server list of per-server dicts is merged, the first server winning."""
    if isinstance(raw, dict):
        return _options(raw)
    merged: dict[str, str] = {}
    for server in raw if isinstance(raw, list) else []:
        for key, value in _options(server).items():
            if key not in _SERVER_KEYS:
                merged.setdefault(key, value)
    return merged


# --------------------------------------------------------------------------- jobs


def _job(
    raw: dict[str, Any],
    version: tuple[int, int] | None,
    global_options: dict[str, str],
    keep_hostname: bool = True,
) -> Measurement:
    options = _options(raw.get("job options"))
    directions = {
        name: _dir_stats(raw.get(name) or {}, version, _block_size(options, global_options, i))
        for i, name in enumerate(DIRECTIONS)
    }
    hostname = raw.get("hostname") if keep_hostname else None
    steadystate = raw.get("steadystate")
    return Measurement(
        name=str(raw.get("jobname", "")),
        groupid=int(raw.get("groupid", 0)),
        error=int(raw.get("error", 0)),
        read=directions["read"],
        write=directions["write"],
        trim=directions["trim"],
        options=options,
        hostname=None if hostname is None else str(hostname),
        elapsed_s=_opt_float(raw.get("elapsed")),
        job_runtime_ms=_opt_int(raw.get("job_runtime")),
        usr_cpu=_opt_float(raw.get("usr_cpu")),
        sys_cpu=_opt_float(raw.get("sys_cpu")),
        steadystate=steadystate if isinstance(steadystate, dict) else None,
        total_err=int(raw.get("total_err", 0) or 0),
    )


def _block_size(options: dict[str, str], global_options: dict[str, str], ddir: int) -> int | None:
    """Block size of one direction from bs=/blocksize= ("4k", or "4k,64k" per direction)."""
    for source in (options, global_options):
        value = source.get("bs") or source.get("blocksize")
        if not value:
            continue
        # fio: bs=read,write,trim. Missing trailing entries repeat the last one given; an
        # empty entry means fio's default, which the options do not show (-> unknown).
        parts = value.split(",")
        return _parse_size(parts[ddir] if ddir < len(parts) else parts[-1])
    return None


def _parse_size(text: str) -> int | None:
    """Bytes in "4k" / "16KiB" / "1M" / "512" (fio's default kb_base=1024); None for ranges."""
    match = _SIZE_RE.match(text)
    if not match:
        return None
    number, power, _ = match.groups()
    size = float(number) * 1024 ** _SIZE_POWERS[power.lower()]
    return int(size) if size > 0 else None


# --------------------------------------------------------------------------- directions


def _dir_stats(raw: dict[str, Any], version: tuple[int, int] | None, bs: int | None) -> DirStats:
    runtime_ms = int(raw.get("runtime", 0))
    iops = float(raw.get("iops", 0))
    io_bytes = int(raw.get("io_bytes", 0)) * _io_bytes_unit(raw, version)
    bw_bytes = float(raw["bw_bytes"]) if "bw_bytes" in raw else float(raw.get("bw", 0)) * 1024
    ios = _ios(raw, io_bytes, bs, iops, runtime_ms)
    lat = _latency(raw, ios)
    return DirStats(
        ios=ios,
        io_bytes=io_bytes,
        runtime_ms=runtime_ms,
        iops=iops,
        bw_bytes=bw_bytes,
        lat_mean_ns=lat.mean,
        lat_min_ns=lat.min,
        lat_max_ns=lat.max,
        lat_kind=lat.kind,
        percentiles_ns=lat.percentiles,
        bins_ns=lat.bins,
    )


def _io_bytes_unit(raw: dict[str, Any], version: tuple[int, int] | None) -> int:
    """1 when io_bytes is in bytes, 1024 when in KiB (fio < 2.21)."""
    if "io_kbytes" in raw:  # added together with the switch to bytes
        return 1
    if version is not None:
        return 1024 if version < _IO_BYTES_IN_BYTES_SINCE else 1
    # Unknown version: io_bytes in KiB is about bw (KiB/s) * runtime (s); in bytes, 1024x that.
    io_bytes = float(raw.get("io_bytes", 0))
    expected_kib = float(raw.get("bw", 0)) * int(raw.get("runtime", 0)) / 1000
    if io_bytes <= 0 or expected_kib <= 0:
        return 1
    return 1024 if io_bytes / expected_kib < 32 else 1  # 32 = geometric middle of 1 and 1024


def _ios(raw: dict[str, Any], io_bytes: int, bs: int | None, iops: float, runtime_ms: int) -> int:
    if "total_ios" in raw:
        return int(raw["total_ios"])
    if bs:
        return round(io_bytes / bs)
    # fio < 2.17 without a known bs: the (integer) iops times the runtime is all there is.
    return round(iops * runtime_ms / 1000)


@dataclass
class _Latency:
    """The latency figures chosen for one direction (see the module docstring)."""

    mean: float | None = None
    min: float | None = None
    max: float | None = None
    kind: str = "clat"
    percentiles: dict[float, float] = field(default_factory=dict)
    bins: dict[int, int] | None = None


def _lat_block(raw: dict[str, Any], name: str) -> tuple[dict[str, Any], int] | None:
    """fio's ``<name>_ns`` block (scale 1) or the usec-era ``<name>`` block (scale 1000)."""
    block = raw.get(f"{name}_ns")
    if isinstance(block, dict):
        return block, 1
    block = raw.get(name)
    if isinstance(block, dict):
        return block, 1000
    return None


def _has_distribution(found: tuple[dict[str, Any], int] | None) -> bool:
    return found is not None and ("percentile" in found[0] or "bins" in found[0])


def _measured(block: dict[str, Any]) -> bool:
    """False for a block fio printed without samples (N == 0, or all zero before N existed)."""
    if "N" in block:
        return int(block["N"]) > 0
    return any(float(block.get(k, 0)) != 0 for k in ("min", "max", "mean"))


def _latency(raw: dict[str, Any], ios: int) -> _Latency:
    lat = _Latency()
    total, completion = _lat_block(raw, "lat"), _lat_block(raw, "clat")
    dist, lat.kind = (total, "lat") if _has_distribution(total) else (completion, "clat")
    if ios == 0:
        return lat
    summary = next((f for f in (total, completion) if f is not None and _measured(f[0])), None)
    if summary is not None:
        block, scale = summary
        lat.mean = float(block["mean"]) * scale
        lat.min = float(block["min"]) * scale
        lat.max = float(block["max"]) * scale
        if not _has_distribution(dist):
            lat.kind = "lat" if summary is total else "clat"
    if dist is not None and _has_distribution(dist):
        block, scale = dist
        lat.percentiles = _percentiles(block.get("percentile"), scale)
        lat.bins = _bins(block.get("bins"), scale)
    return lat


def _percentiles(raw: object, scale: int) -> dict[float, float]:
    if not isinstance(raw, dict):
        return {}
    result: dict[float, float] = {}
    for key, value in raw.items():
        pct = float(key)
        # Old fio pads the list with "0.00" : 0 entries (JSON duplicates): not percentiles.
        if pct > 0:
            result[pct] = float(value) * scale
    return result


def _bins(raw: object, scale: int) -> dict[int, int] | None:
    """json+ histogram -> {latency ns: count}, zero counts dropped."""
    if not isinstance(raw, dict):
        return None
    # fio 2.x json+ keys every bucket by INDEX and adds the geometry constants; fio 3.x keys
    # the non-empty buckets by their latency value.
    by_index = "FIO_IO_U_PLAT_NR" in raw
    bins: dict[int, int] = {}
    for key, count in raw.items():
        if key in _BINS_CONSTANTS or not int(count):
            continue
        value = plat_idx_to_val(int(key)) if by_index else int(key)
        bins[value * scale] = bins.get(value * scale, 0) + int(count)
    return bins


# --------------------------------------------------------------------------- percentiles


def percentile_from_bins(bins: dict[int, int], pct: float) -> float | None:
    """The ``pct`` percentile of a json+ histogram, by fio's own rule (stat.c
    calc_clat_percentiles): walk the bins in ascending value summing counts; the answer is
    the first bin whose running sum reaches ``pct / 100 * total``. None for an empty histogram.

    fio compares in ``long double``; exact rational arithmetic gives the same answer as x86's
    80-bit long double (a platform with 64-bit long double can differ by one bin when
    ``pct / 100 * total`` lands within rounding error of a whole number).
    """
    if not 0 <= pct <= 100:
        raise ValueError(f"percentile must be within 0..100, got {pct}")
    total = sum(bins.values())
    if total == 0:
        return None
    threshold = Fraction(pct) / 100 * total
    running = 0
    for value in sorted(bins):
        running += bins[value]
        if running >= threshold:
            return float(value)
    return float(max(bins))  # not reached: the last bin brings running to total


# --------------------------------------------------------------------------- helpers


def _opt_int(value: object) -> int | None:
    return int(value) if isinstance(value, int | float | str) else None


def _opt_float(value: object) -> float | None:
    return float(value) if isinstance(value, int | float | str) else None
