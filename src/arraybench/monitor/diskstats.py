"""Block-device counters from /proc/diskstats and rates between two readings (a path's
device, by the name diskstats uses, is system/blockdev.py's `block_name`).

Line layout (Documentation/admin-guide/iostats.rst): ``major minor name`` then

More: docs/internals.md, `monitor/diskstats.py`."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

SECTOR_BYTES = 512
_MS_WRAP = 1 << 32
_MIN_FIELDS = 14


@dataclass(frozen=True)
class DiskCounters:
    """Cumulative counters of one block device (or partition), as the kernel printed them."""

    name: str
    major: int
    minor: int
    reads: int
    reads_merged: int
    sectors_read: int
    read_ms: int
    writes: int
    writes_merged: int
    sectors_written: int
    write_ms: int
    in_flight: int
    io_ticks_ms: int
    weighted_ms: int
    discards: int | None = None
    discard_sectors: int | None = None
    discard_ms: int | None = None
    flushes: int | None = None
    flush_ms: int | None = None


@dataclass(frozen=True)
class DiskRates:
    """One device over one interval, iostat-style. MB = 10**6 bytes.

    ``avg_wait_ms`` / ``r_await_ms`` / ``w_await_ms`` are the mean time an I/O spent in the
    block layer and device (queue + service, as iostat's await), None without completed I/O.
    ``util_pct`` is the share of the interval with at least one I/O in flight (capped at 100;
    on devices that serve many I/Os in parallel, 100 % is not saturation). ``queue`` is the
    average number of I/Os in flight (iostat's aqu-sz).
    """

    read_iops: float
    write_iops: float
    read_mbps: float
    write_mbps: float
    read_merges_ps: float
    write_merges_ps: float
    avg_wait_ms: float | None
    r_await_ms: float | None
    w_await_ms: float | None
    util_pct: float
    queue: float

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops

    @property
    def mbps(self) -> float:
        return self.read_mbps + self.write_mbps


def _counters(fields: list[str]) -> DiskCounters:
    major, minor, name = int(fields[0]), int(fields[1]), fields[2]
    v = [int(x) for x in fields[3:]]
    extra: dict[str, int] = {}
    if len(v) >= 15:
        extra.update(discards=v[11], discard_sectors=v[13], discard_ms=v[14])
    if len(v) >= 17:
        extra.update(flushes=v[15], flush_ms=v[16])
    return DiskCounters(name, major, minor, *v[:11], **extra)


def parse_diskstats(text: str, names: Collection[str] | None = None) -> dict[str, DiskCounters]:
    """Device name -> counters, for every device and partition line of /proc/diskstats text.

    Accepts the 14-, 18- and 20-field layouts (and ignores any fields a future kernel
    appends). Lines with fewer than 14 fields (pre-2.6.25 partitions) or non-numeric counters
    are skipped: one odd line must not cost the readings of every other device. ``names``
    keeps only those devices (cheaper on hosts with thousands of SAN paths).
    """
    result: dict[str, DiskCounters] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < _MIN_FIELDS or (names is not None and fields[2] not in names):
            continue
        try:
            counters = _counters(fields)
        except ValueError:
            continue
        result[counters.name] = counters
    return result


def _delta(before: int, after: int, what: str) -> int:
    if after < before:
        raise ValueError(
            f"diskstats {what} went backwards ({before} -> {after}): "
            "the device was removed and re-created between the two readings"
        )
    return after - before


def _ms_delta(before: int, after: int) -> int:
    """Delta of a 32-bit millisecond counter, across at most one wrap."""
    return (after - before) % _MS_WRAP


def _per_io(ms: int, ios: int) -> float | None:
    return ms / ios if ios else None


def disk_rates(before: DiskCounters, after: DiskCounters, seconds: float) -> DiskRates:
    """Rates of one device between two readings taken ``seconds`` apart.

    Raises ValueError when ``seconds`` is not positive, the readings are of different
    devices, or an I/O counter went backwards (device re-created).
    """
    if seconds <= 0:
        raise ValueError(f"interval must be positive, got {seconds} s")
    if (before.major, before.minor) != (after.major, after.minor):
        raise ValueError(f"readings of different devices: {before.name} and {after.name}")
    reads = _delta(before.reads, after.reads, "reads completed")
    writes = _delta(before.writes, after.writes, "writes completed")
    rsect = _delta(before.sectors_read, after.sectors_read, "sectors read")
    wsect = _delta(before.sectors_written, after.sectors_written, "sectors written")
    rmerge = _delta(before.reads_merged, after.reads_merged, "reads merged")
    wmerge = _delta(before.writes_merged, after.writes_merged, "writes merged")
    read_ms = _ms_delta(before.read_ms, after.read_ms)
    write_ms = _ms_delta(before.write_ms, after.write_ms)
    elapsed_ms = seconds * 1000
    return DiskRates(
        read_iops=reads / seconds,
        write_iops=writes / seconds,
        read_mbps=rsect * SECTOR_BYTES / 1e6 / seconds,
        write_mbps=wsect * SECTOR_BYTES / 1e6 / seconds,
        read_merges_ps=rmerge / seconds,
        write_merges_ps=wmerge / seconds,
        avg_wait_ms=_per_io(read_ms + write_ms, reads + writes),
        r_await_ms=_per_io(read_ms, reads),
        w_await_ms=_per_io(write_ms, writes),
        util_pct=min(100.0, _ms_delta(before.io_ticks_ms, after.io_ticks_ms) / elapsed_ms * 100),
        queue=_ms_delta(before.weighted_ms, after.weighted_ms) / elapsed_ms,
    )
