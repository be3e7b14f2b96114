"""The record every load engine's results take, and every importer's: one `Measurement` per
job (fio's job, a vdbench run, an elbencho phase, a DiskSpd timespan), grouped in a document.

Units are fixed here once: bytes, bytes/s, milliseconds of runtime, nanoseconds of latency.
The document has fio's shape, the one every engine and importer fills; its version field
holds the tool's own version string (`fio-3.33`, mdtest's, elbencho's, or none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DIRECTIONS = ("read", "write", "trim")


@dataclass(frozen=True)
class DirStats:
    """One direction (read, write or trim) of one fio job or one client_stats entry."""

    ios: int  # completed I/Os (total_ios; derived from io_bytes / bs for fio < 2.17)
    io_bytes: int  # bytes moved (fio < 2.21 reports KiB: already converted)
    runtime_ms: int  # fio's per-direction runtime
    iops: float
    bw_bytes: float  # bytes per second
    lat_mean_ns: float | None
    lat_min_ns: float | None
    lat_max_ns: float | None
    # mean/min/max are total latency ("lat": submission + completion) whenever fio reports
    # it; lat_kind names the source of percentiles_ns and bins_ns: "lat" when fio ran with
    # lat_percentiles=1 (arraybench's own runs), else "clat" (completion only)
    lat_kind: str
    percentiles_ns: dict[float, float] = field(default_factory=dict)  # 99.0 -> ns
    bins_ns: dict[int, int] | None = None  # json+ histogram: bin value (ns) -> count

    @property
    def empty(self) -> bool:
        return self.ios == 0 and self.io_bytes == 0


@dataclass(frozen=True)
class Measurement:
    """One entry of fio's `jobs` (or of `client_stats`, with its hostname)."""

    name: str
    groupid: int
    error: int
    read: DirStats
    write: DirStats
    trim: DirStats
    options: dict[str, str]  # the job's own options ("job options"), values as strings
    hostname: str | None = None
    elapsed_s: float | None = None
    job_runtime_ms: int | None = None
    usr_cpu: float | None = None  # percent
    sys_cpu: float | None = None  # percent
    steadystate: dict[str, Any] | None = None  # fio's steadystate block, raw
    total_err: int = 0  # I/O errors fio counted and went on with (continue_on_error)

    def direction(self, name: str) -> DirStats:
        return {"read": self.read, "write": self.write, "trim": self.trim}[name]


@dataclass(frozen=True)
class EngineDocument:
    """One JSON document written by fio (a file may hold several, e.g. SIGUSR1 dumps)."""

    engine_version: str
    timestamp: int | None  # Unix seconds
    timestamp_ms: int | None
    global_options: dict[str, str]  # merged; client/server lists are flattened
    jobs: list[Measurement]  # `jobs`, or `client_stats` without the "All clients" entry
    all_clients: Measurement | None  # fio's "All clients" entry: sums EVERY group of EVERY host
    disk_util: list[dict[str, Any]]
    preamble: str  # text fio printed before the JSON (errors, "terminating on signal 2")
    # True when fio printed this document as a later status of the run before it (SIGUSR1,
    # --status-interval): the results restart without a new invocation (no version line, no
    # "Starting N processes", no job list). Figures are cumulative: the last one counts.
    status_dump: bool = False
    # What the reader chose where fio's figures disagreed (e.g. a rounded io= against the
    # issued I/Os), one line each, for the import notes.
    notes: tuple[str, ...] = ()
