"""The array's own performance data (an exported CSV of its monitor) on the run's clock.

Expected format (any column order, a header row, one row per sample; other columns ignored):

    Time,Total IOPS,Bandwidth (MB/s),Avg latency (us),CPU (%)
    2026-11-24T09:01:05+00:00,20511,84.0,48.2,31
    1795510865,20470,83.8,48.9,30            # Unix seconds work too (milliseconds as well)

`--map time=Time,iops=Total IOPS,mbps=...,latency_us=...,cpu_pct=...,reduction_ratio=...`
names the columns (reduction_ratio: the array's data-reduction ratio, x:1);
`time` and at least one value are required. A time without a zone is read as UTC; `--offset`
seconds are added to every time (an array clock 2 s behind: `--offset 2`), and stated.

More: docs/internals.md, `monitor/arrayside.py`."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from arraybench.errors import ArraybenchError
from arraybench.userfiles import read_whole

FIELDS = ("iops", "mbps", "latency_us", "cpu_pct", "reduction_ratio")
DISAGREE_PCT = 10.0  # as the kernel check: beyond this the point is flagged
MAX_CSV_BYTES = 64 << 20  # read whole: about a million rows, 12 days of 1-second samples
MAX_VALUE = 1e15  # IOPS, MB/s, us, %: no array reports more; sums over a point stay finite
MAX_TIME = 253_402_300_799.0  # 9999-12-31 23:59:59 UTC, the last second datetime holds
MAX_OFFSET_S = 366 * 86400.0  # a year: beyond, the clock is not behind, the data is another's


@dataclass(frozen=True)
class ArraySample:
    t: float  # Unix seconds on the run's clock (offset applied)
    values: dict[str, float]


@dataclass(frozen=True)
class Agreement:
    """fio against the array over one point's measured seconds. Bytes first, as fio against
    the kernel (docs/validity.md): where both sides give MB/s, they decide; the same bytes in
    another count of I/Os is the array counting requests its own way (splitting 1 MiB I/O
    into its stripe's pieces, merging), not a disagreement. IOPS decide only without MB/s."""

    fio_iops: float
    array_iops: float
    diff_pct: float  # (array - fio) / fio IOPS, in %
    samples: int  # array samples inside the point
    fio_mbps: float | None = None
    array_mbps: float | None = None

    @property
    def mbps_diff_pct(self) -> float | None:
        """(array - fio) / fio MB/s in %, None unless both sides have MB/s."""
        if self.fio_mbps is None or self.array_mbps is None or not self.fio_mbps:
            return None
        return (self.array_mbps - self.fio_mbps) / self.fio_mbps * 100

    @property
    def flagged(self) -> bool:
        bytes_pct = self.mbps_diff_pct
        decides = self.diff_pct if bytes_pct is None else bytes_pct
        return abs(decides) > DISAGREE_PCT

    @property
    def verdict(self) -> str:
        """`agree`, `DISAGREE`, or `agree: same bytes, other I/O count` (MB/s within the
        tolerance, IOPS not)."""
        if self.flagged:
            return "DISAGREE"
        if self.mbps_diff_pct is not None and abs(self.diff_pct) > DISAGREE_PCT:
            return "agree: same bytes, other I/O count"
        return "agree"


def parse_map(text: str) -> dict[str, str]:
    """`time=Time,iops=Total IOPS` -> {time: Time, iops: Total IOPS} (field -> column)."""
    found: dict[str, str] = {}
    for part in text.split(","):
        field, sep, column = part.partition("=")
        field = field.strip()
        if not sep or not column.strip():
            raise ArraybenchError(f"--map {part!r}: give FIELD=COLUMN",
                                  "e.g. --map time=Time,iops=Total IOPS")  # fmt: skip
        if field not in ("time", *FIELDS):
            raise ArraybenchError(f"--map: unknown field {field!r}",
                                  f"use time and any of {', '.join(FIELDS)}")  # fmt: skip
        found[field] = column.strip()
    if "time" not in found or len(found) < 2:
        raise ArraybenchError("--map needs time= and at least one value column",
                              f"values: {', '.join(FIELDS)}")  # fmt: skip
    return found


def parse_time(text: str) -> float:
    """Unix seconds (or milliseconds), or ISO 8601 (no zone: UTC); ValueError beyond the
    years 1970-9999 or when not finite."""
    try:
        number = float(text)
    except ValueError:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        number = moment.timestamp()
    else:
        if not math.isfinite(number):
            raise ValueError("not a finite number")
        number = number / 1000 if number > 1e11 else number
    if not 0 <= number <= MAX_TIME:
        raise ValueError("outside the years 1970-9999")
    return number


def check_offset(offset_s: float) -> None:
    """--offset: a finite number of seconds, at most MAX_OFFSET_S either way."""
    if not math.isfinite(offset_s) or abs(offset_s) > MAX_OFFSET_S:
        raise ArraybenchError(
            f"--offset {offset_s:g}: give a finite number of seconds, at most "
            f"{MAX_OFFSET_S:,.0f} (a year) either way",
            "the seconds the array's clock is behind the run's (--offset 2), or ahead (-2)",
        )


def _value(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    if not 0 <= value <= MAX_VALUE:
        raise ValueError(f"out of range (0 to {MAX_VALUE:g})")
    return value


def read_csv(path: Path, columns: dict[str, str], offset_s: float = 0.0) -> list[ArraySample]:
    """The mapped columns of every row; a value that cannot be read (not a number, NaN, inf,
    negative, beyond MAX_VALUE, a time outside 1970-9999) is an error located at its file,
    line and column. Only a regular file of at most MAX_CSV_BYTES is read (userfiles.py)."""
    check_offset(offset_s)
    text = read_whole(path, "the array monitor CSV", MAX_CSV_BYTES).decode("utf-8-sig", "replace")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        names = list(reader.fieldnames or [])
        missing = [c for c in columns.values() if c not in names]
        if missing:
            raise ArraybenchError(f"{path}: no column {missing[0]!r}",
                                  f"columns: {', '.join(names)}")  # fmt: skip
        return [_sample(path, reader.line_num, row, columns, names, offset_s) for row in reader]
    except csv.Error as exc:
        raise ArraybenchError(f"{path}:{reader.line_num}: not CSV ({exc})",
                              "export the monitor's data as CSV") from None  # fmt: skip


def _sample(
    path: Path,
    line: int,
    row: dict[str, str],
    columns: dict[str, str],
    names: list[str],
    offset_s: float,
) -> ArraySample:
    values: dict[str, float] = {}
    t = 0.0
    for field, column in columns.items():
        text = row.get(column)
        if field != "time" and text in ("", None):
            continue
        try:
            if field == "time":
                t = parse_time(text or "") + offset_s
                if not 0 <= t <= MAX_TIME:
                    raise ValueError(f"outside the years 1970-9999 with --offset {offset_s:g}")
            else:
                values[field] = _value(text or "")
        except (ValueError, TypeError, OverflowError) as exc:
            where = f"{path}:{line}:{names.index(column) + 1}"
            raise ArraybenchError(
                f"{where}: {column!r} = {(text or '')[:40]!r} is no usable "
                f"{'time' if field == 'time' else 'number'}: {exc}",
                "fix or remove the row",
            ) from None
    return ArraySample(t, values)


def stored_samples(raw: object) -> list[ArraySample]:
    """An attached series as the store holds it ([[t, {field: value}], ...]), samples that are
    not finite numbers of the right shape dropped: a series attached before they were refused
    (or a hand-edited store) must not stop a report."""
    found = []
    for item in raw if isinstance(raw, list) else []:
        if not (isinstance(item, list | tuple) and len(item) == 2 and isinstance(item[1], dict)):
            continue
        t, values = item
        if not _finite(t) or not 0 <= t <= MAX_TIME:
            continue
        kept = {k: float(v) for k, v in values.items() if k in FIELDS and _finite(v)}
        found.append(ArraySample(float(t), kept))
    return found


def stored_offset(raw: object) -> float:
    """The stored --offset, 0 when it is no finite number (a hand-edited store)."""
    return float(raw) if _finite(raw) else 0.0  # type: ignore[arg-type]


def _finite(value: object) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and abs(value) <= MAX_TIME)  # fmt: skip


def agreement(
    fio_seconds: Sequence[tuple[int, float]], array: Sequence[ArraySample],
    fio_mbps: float | None = None,
) -> Agreement | None:  # fmt: skip
    """fio's per-second IOPS (t, iops) against the array's samples inside those seconds, and
    fio's MB/s over them (`fio_mbps`) against the array's where it has MB/s; None when the
    array has no IOPS sample there."""
    if not fio_seconds:
        return None
    start, end = min(t for t, _ in fio_seconds), max(t for t, _ in fio_seconds) + 1
    within = [s.values for s in array if start <= s.t < end]
    inside = [v["iops"] for v in within if "iops" in v]
    fio = sum(v for _, v in fio_seconds) / len(fio_seconds)
    if not inside or not fio:
        return None
    mean = sum(inside) / len(inside)
    mbps = [v["mbps"] for v in within if "mbps" in v]
    array_mbps = sum(mbps) / len(mbps) if mbps and fio_mbps is not None else None
    return Agreement(fio, mean, (mean - fio) / fio * 100, len(inside), fio_mbps, array_mbps)
