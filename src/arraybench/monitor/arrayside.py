"""The array's own performance data (an exported CSV of its monitor) on the run's clock.

Expected format (any column order, a header row, one row per sample; other columns ignored):

    Time,Total IOPS,Bandwidth (MB/s),Avg latency (us),CPU (%)
    2026-11-24T09:01:05+00:00,20511,84.0,48.2,31
    1795510865,20470,83.8,48.9,30            # Unix seconds work too (milliseconds as well)

`--map time=Time,iops=Total IOPS,mbps=...,latency_us=...,cpu_pct=...` names the columns;
`time` and at least one value are required. A time without a zone is read as UTC; `--offset`
seconds are added to every time (an array clock 2 s behind: `--offset 2`), and stated.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from arraybench.errors import ArraybenchError

FIELDS = ("iops", "mbps", "latency_us", "cpu_pct")
DISAGREE_PCT = 10.0  # as the kernel check: beyond this the point is flagged


@dataclass(frozen=True)
class ArraySample:
    t: float  # Unix seconds on the run's clock (offset applied)
    values: dict[str, float]


@dataclass(frozen=True)
class Agreement:
    """fio against the array over one point's measured seconds."""

    fio_iops: float
    array_iops: float
    diff_pct: float  # (array - fio) / fio, in %
    samples: int  # array samples inside the point

    @property
    def flagged(self) -> bool:
        return abs(self.diff_pct) > DISAGREE_PCT


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
    """Unix seconds (or milliseconds), or ISO 8601 (no zone: UTC)."""
    try:
        number = float(text)
    except ValueError:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.timestamp()
    if not math.isfinite(number):
        raise ValueError(text)
    return number / 1000 if number > 1e11 else number


def read_csv(path: Path, columns: dict[str, str], offset_s: float = 0.0) -> list[ArraySample]:
    """The mapped columns of every row; a row that cannot be read is a located error."""
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in columns.values() if c not in (reader.fieldnames or [])]
        if missing:
            raise ArraybenchError(f"{path}: no column {missing[0]!r}",
                                  f"columns: {', '.join(reader.fieldnames or [])}")  # fmt: skip
        samples = []
        for row in reader:
            line = reader.line_num
            try:
                t = parse_time(row[columns["time"]]) + offset_s
                values = {f: float(row[c]) for f, c in columns.items()
                          if f != "time" and row[c] not in ("", None)}  # fmt: skip
            except (ValueError, TypeError) as exc:
                raise ArraybenchError(f"{path}:{line}: cannot read this row ({exc})",
                                      "fix or remove the row") from None  # fmt: skip
            samples.append(ArraySample(t, values))
    return samples


def agreement(
    fio_seconds: Sequence[tuple[int, float]], array: Sequence[ArraySample]
) -> Agreement | None:
    """fio's per-second IOPS (t, iops) against the array's samples inside those seconds;
    None when the array has no IOPS sample there."""
    if not fio_seconds:
        return None
    start, end = min(t for t, _ in fio_seconds), max(t for t, _ in fio_seconds) + 1
    inside = [s.values["iops"] for s in array if start <= s.t < end and "iops" in s.values]
    fio = sum(v for _, v in fio_seconds) / len(fio_seconds)
    if not inside or not fio:
        return None
    mean = sum(inside) / len(inside)
    return Agreement(fio, mean, (mean - fio) / fio * 100, len(inside))
