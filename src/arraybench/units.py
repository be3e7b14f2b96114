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


# ---------------------------------------------------------------- the one number formatter
# Every report format (terminal, HTML, PDF, Markdown, Excel, chart labels and ticks) formats
# numbers here, so one value has one text everywhere: 1,250,000 IOPS is "1.25 MIOPS",
# 8.46 µs is "8.46 µs", 123,456 µs is "123 ms".

DASH = "–"
MS_FROM_US = 10_000.0  # latency is shown in ms from 10 ms on
LATENCY_UNITS = ("µs", "us", "ms")


def _known(value: float | None) -> bool:
    return value is not None and not isinstance(value, bool) and math.isfinite(value)


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def significant(value: float) -> str:
    """Three significant digits, never fewer than the integer digits, thousands separated:
    8.46, 98.1, 208, 1,208, 123,457; trailing zeros dropped (2.5, not 2.50)."""
    a = abs(value)
    if a >= 99.95:
        return f"{value:,.0f}"
    if a >= 9.995:
        return _trim(f"{value:.1f}")
    if a >= 0.9995 or a == 0:
        return _trim(f"{value:.2f}")
    return _trim(f"{value:.3g}") if a >= 1e-4 else f"{value:.2g}"


def _prefixed(value: float | None, mega: str, kilo: str, one: str) -> str:
    """A rate with k / M prefixes and three significant digits; `–` when unknown."""
    if value is None or not _known(value):
        return DASH
    a = abs(value)
    if a >= 999_500:
        return f"{significant(value / 1e6)} {mega}"
    if a >= 999.5:
        return f"{significant(value / 1e3)} {kilo}"
    return f"{value:.0f} {one}"


def format_iops(iops: float | None) -> str:
    """`304 kIOPS`, `1.25 MIOPS`, `850 IOPS`."""
    return _prefixed(iops, "MIOPS", "kIOPS", "IOPS")


def format_ops(value: float | None) -> str:
    """Metadata operations: `850 ops/s`, `12.3 k ops/s`, `1.25 M ops/s`."""
    return _prefixed(value, "M ops/s", "k ops/s", "ops/s")


def format_mbps(mbps: float | None) -> str:
    """MB/s (10^6 bytes/s): `5,234 MB/s`, `98.1 MB/s`."""
    if mbps is None or not _known(mbps):
        return DASH
    return f"{significant(mbps)} MB/s"


def format_latency(us: float | None) -> str:
    """`8.46 µs`, `98.1 µs`, `1,208 µs` under 10 ms, `12.3 ms`, `123 ms` above."""
    if us is None or not _known(us):
        return DASH
    if abs(us) >= MS_FROM_US:
        return f"{significant(us / 1000)} ms"
    return f"{significant(us)} µs"


def format_pct(value: float | None, *, signed: bool = False) -> str:
    """`12.3 %`, `-93 %`; with `signed` a gain shows its `+`."""
    if value is None or not _known(value):
        return DASH
    if abs(value) < 1e-9:  # a float's rounding left-over of an equal pair (-1.1e-14) is 0 %
        return "0 %"
    text = significant(value)
    return f"+{text} %" if signed and value > 0 else f"{text} %"


def format_gb(gb: float | None) -> str:
    """Data volumes in GB (10^9 bytes): `0.5 GB`, `123 GB`, `12.3 TB` from 10,000 GB."""
    if gb is None or not _known(gb):
        return DASH
    if abs(gb) >= 10_000:
        return f"{significant(gb / 1000)} TB"
    return f"{significant(gb)} GB"


def format_throughput(value: float | None, unit: str) -> str:
    if unit == "ops/s":  # a metadata point's: operations of their kind, not I/Os
        return format_ops(value)
    return format_mbps(value) if unit == "MB/s" else format_iops(value)


def format_quantity(value: float | None, unit: str) -> str:
    """Any reported quantity with its unit: the dispatcher every writer uses."""
    if unit == "IOPS":
        return format_iops(value)
    if unit == "MB/s":
        return format_mbps(value)
    if unit in ("µs", "us"):
        return format_latency(value)
    if unit == "ms":
        return format_latency(None if value is None else value * 1000)
    if unit == "ops/s":
        return format_ops(value)
    if unit == "%":
        return format_pct(value)
    if unit == "GB":
        return format_gb(value)
    if value is None or not _known(value):
        return DASH
    return f"{significant(value)} {unit}".rstrip()


def format_number(value: float | None) -> str:
    """A table cell under a heading that states the unit: `1,250,000`, `8.46`, `123,456`."""
    if value is None or not _known(value):
        return DASH
    if float(value).is_integer() or abs(value) >= 99.95:
        return f"{value:,.0f}"
    return significant(value)


def format_tick(value: float, unit: str = "") -> str:
    """An axis tick (the axis title states the unit): `250k`, `1.25M`, `2.5`; latency ticks
    are never prefixed (`1,000` µs, the axis switches to ms at 10 ms)."""
    if unit in LATENCY_UNITS:
        return significant(value)
    a = abs(value)
    if a >= 999_500:
        return significant(value / 1e6) + "M"
    if a >= 999.5:
        return significant(value / 1e3) + "k"
    return significant(value)
