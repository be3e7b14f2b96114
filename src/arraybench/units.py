"""Sizes, durations and the display units arraybench reports in.

Block sizes follow the storage (and fio) convention: k, m, g, t are binary (8k = 8192 bytes).
Throughput is shown in MB/s = 10^6 bytes/s, latency in µs (ms from 10 000 µs on).
"""

from __future__ import annotations

import math
import re

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b)?\s*$", re.IGNORECASE)
_SIZE_FACTORS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|µs|ms|s|m|min|h|d)?\s*$", re.IGNORECASE)
_DURATION_FACTORS = {
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 0.001,
    "s": 1.0,
    "": 1.0,
    "m": 60.0,
    "min": 60.0,
    "h": 3600.0,
}
_DURATION_FACTORS["d"] = 86400.0


def parse_size(value: str | int) -> int:
    """Bytes from `8k`, `128KiB`, `1g`, `512` or an int; ValueError says what is accepted."""
    if isinstance(value, bool):
        raise ValueError("expected a size such as 8k, 1m or 1g, got a boolean")
    if isinstance(value, int):
        return value
    match = _SIZE_RE.match(str(value))
    if not match:
        raise ValueError(
            f"invalid size {value!r}: use a number with an optional unit k, m, g or t "
            "(binary: 8k = 8192 bytes)"
        )
    number, unit, _ = match.groups()
    result = float(number) * _SIZE_FACTORS[unit.lower()]
    if result != int(result):
        raise ValueError(f"invalid size {value!r}: it is not a whole number of bytes")
    return int(result)


def parse_duration(value: str | int | float) -> float:
    """Seconds from `5s`, `2m`, `1h`, `500ms` or a number of seconds."""
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 30s, 5m or 1h, got a boolean")
    if isinstance(value, int | float):
        return float(value)
    match = _DURATION_RE.match(str(value))
    if not match:
        raise ValueError(
            f"invalid duration {value!r}: use a number with us, ms, s, m or h, e.g. 30s"
        )
    number, unit = match.groups()
    return float(number) * _DURATION_FACTORS[(unit or "").lower()]


def format_size(nbytes: int) -> str:
    """`8 KiB`, `128 KiB`, `1 MiB`, `1.5 GiB`."""
    for unit, factor in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= factor:
            value = nbytes / factor
            return f"{value:g} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{nbytes} B"


def fio_size(nbytes: int) -> str:
    """A size as fio reads it, exact: `8k`, `128k`, `1m`, `512`."""
    for suffix, factor in (("t", 1 << 40), ("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10)):
        if nbytes >= factor and nbytes % factor == 0:
            return f"{nbytes // factor}{suffix}"
    return str(nbytes)


def format_duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def _three_significant(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _prefixed(value: float | None, mega: str, kilo: str, one: str) -> str:
    """A rate with k / M prefixes and three significant digits; `–` when unknown."""
    if value is None or math.isnan(value):
        return "–"
    if value >= 1e6:
        return f"{_three_significant(value / 1e6)} {mega}"
    if value >= 1e3:
        return f"{_three_significant(value / 1e3)} {kilo}"
    return f"{value:.0f} {one}"


def format_iops(iops: float | None) -> str:
    """`304 kIOPS`, `1.25 MIOPS`, `850 IOPS`."""
    return _prefixed(iops, "MIOPS", "kIOPS", "IOPS")


def format_ops(value: float | None) -> str:
    """Metadata operations: `850 ops/s`, `12.3 k ops/s`, `1.25 M ops/s`."""
    return _prefixed(value, "M ops/s", "k ops/s", "ops/s")


def format_mbps(mbps: float | None) -> str:
    """MB/s (10^6 bytes/s): `5234 MB/s`, `98.1 MB/s`."""
    if mbps is None or math.isnan(mbps):
        return "–"
    if mbps >= 1000:
        return f"{mbps:,.0f} MB/s"
    return f"{_three_significant(mbps)} MB/s"


def format_latency(us: float | None) -> str:
    """`98 µs`, `1 208 µs` under 10 ms, `12.3 ms` above."""
    if us is None or math.isnan(us):
        return "–"
    if us >= 10_000:
        return f"{us / 1000:.1f} ms"
    if us >= 100:
        return f"{us:,.0f} µs"
    return f"{us:.1f} µs"


def format_throughput(value: float | None, unit: str) -> str:
    return format_mbps(value) if unit == "MB/s" else format_iops(value)
