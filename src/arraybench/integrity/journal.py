"""The writer's journal: which writes the target acknowledged, in order.

A journal is a small binary file: a 64-byte header naming the region and the stream, then one
32-byte record per write, appended only after the write returned (acknowledged) or failed::

    header  <8sIIIIQQQ12xI  magic, version, block size, stream id, flags(0),
                            region offset, region length, created (Unix ns), crc32
    record  <QQQHHI         offset, generation, write time (Unix ns), kind, reserved(0),
                            crc32 of the first 28 bytes seeded with the stream id

More: docs/internals.md, `integrity/journal.py`."""

from __future__ import annotations

import os
import struct
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arraybench.integrity.errors import IntegrityError

JOURNAL_MAGIC = b"ABJRNL\x00\x01"
JOURNAL_VERSION = 1
HEADER = struct.Struct("<8sIIIIQQQ12xI")
HEADER_SIZE = HEADER.size  # 64
RECORD = struct.Struct("<QQQHHI")
RECORD_SIZE = RECORD.size  # 32
_RECORD_BODY = RECORD_SIZE - 4
ACKED = 1
FAILED = 2
_READ_CHUNK = RECORD_SIZE * 32768  # 1 MiB


@dataclass(frozen=True)
class JournalHeader:
    block_size: int
    stream_id: int
    region_offset: int
    region_length: int
    created_ns: int
    version: int = JOURNAL_VERSION

    def pack(self) -> bytes:
        body = HEADER.pack(
            JOURNAL_MAGIC,
            self.version,
            self.block_size,
            self.stream_id,
            0,
            self.region_offset,
            self.region_length,
            self.created_ns,
            0,
        )
        return body[:-4] + struct.pack("<I", zlib.crc32(body[:-4]))

    @classmethod
    def unpack(cls, data: bytes, where: str) -> JournalHeader:
        if len(data) < HEADER_SIZE:
            raise IntegrityError(f"{where}: not an integrity journal (only {len(data)} bytes)")
        magic, version, bs, stream, _, r_off, r_len, created, crc = HEADER.unpack_from(data)
        if magic != JOURNAL_MAGIC:
            raise IntegrityError(f"{where}: not an integrity journal (bad magic)")
        if zlib.crc32(data[: HEADER_SIZE - 4]) != crc:
            raise IntegrityError(f"{where}: journal header is damaged (checksum mismatch)")
        if version != JOURNAL_VERSION:
            raise IntegrityError(f"{where}: journal version {version} is not supported")
        return cls(bs, stream, r_off, r_len, created, version)

    def same_region(self, other: JournalHeader) -> bool:
        return (self.block_size, self.region_offset, self.region_length) == (
            other.block_size,
            other.region_offset,
            other.region_length,
        )


def pack_record(stream_id: int, offset: int, generation: int, write_ns: int, kind: int) -> bytes:
    body = RECORD.pack(offset, generation, write_ns, kind, 0, 0)[:_RECORD_BODY]
    return body + struct.pack("<I", zlib.crc32(body, stream_id))


@dataclass
class JournalScan:
    """What a pass over a journal found (records are handed to a callback, not kept)."""

    header: JournalHeader
    records: int = 0  # valid records
    acked: int = 0
    failed: int = 0
    torn_records: int = 0  # invalid records (or partial bytes) at the end: tolerated
    damaged_records: int = 0  # invalid records followed by valid ones: unexpected
    valid_size: int = HEADER_SIZE  # bytes up to the end of the last valid record
    last_generation: int = 0
    torn_detail: str = ""


def read_header(path: Path) -> JournalHeader:
    try:
        with open(path, "rb") as fh:
            data = fh.read(HEADER_SIZE)
    except OSError as exc:
        raise IntegrityError(f"journal {path}: cannot read it ({exc.strerror or exc})") from exc
    return JournalHeader.unpack(data, f"journal {path}")


def scan_journal(
    path: Path, on_record: Callable[[int, int, int, int], None] | None = None
) -> JournalScan:
    """Validate every record of a journal; call ``on_record(offset, gen, ns, kind)`` per valid one.

    Streams the file in 1 MiB chunks, so journals of any length need constant memory.
    """
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below, read in chunks
    except OSError as exc:
        raise IntegrityError(f"journal {path}: cannot open it ({exc.strerror or exc})") from exc
    with fh:
        header = JournalHeader.unpack(fh.read(HEADER_SIZE), f"journal {path}")
        scan = JournalScan(header)
        stream = header.stream_id
        crc32 = zlib.crc32
        unpack = RECORD.unpack_from
        kinds = (ACKED, FAILED)
        pending = 0  # invalid records since the last valid one
        position = HEADER_SIZE
        rest = b""
        while True:
            chunk = fh.read(_READ_CHUNK)
            if not chunk:
                break
            data = rest + chunk if rest else chunk
            whole = len(data) - len(data) % RECORD_SIZE
            for start in range(0, whole, RECORD_SIZE):
                offset, generation, write_ns, kind, _, crc = unpack(data, start)
                if crc32(data[start : start + _RECORD_BODY], stream) != crc or kind not in kinds:
                    pending += 1
                    continue
                if pending:
                    scan.damaged_records += pending
                    pending = 0
                scan.records += 1
                if kind == ACKED:
                    scan.acked += 1
                else:
                    scan.failed += 1
                if generation > scan.last_generation:
                    scan.last_generation = generation
                if on_record is not None:
                    on_record(offset, generation, write_ns, kind)
                scan.valid_size = position + start + RECORD_SIZE
            position += whole
            rest = data[whole:]
    scan.torn_records = pending + (1 if rest else 0)
    if scan.torn_records:
        parts = []
        if pending:
            parts.append(f"{pending} invalid record(s)")
        if rest:
            parts.append(f"a partial record of {len(rest)} bytes")
        scan.torn_detail = " and ".join(parts) + " at the end of the journal, ignored"
    return scan


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_journal(path: Path, header: JournalHeader) -> None:
    """Create a journal holding only its header, durably (temporary file, fsync, rename)."""
    tmp = path.with_name(path.name + ".creating")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, header.pack())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except OSError as exc:
        raise IntegrityError(
            f"journal {path}: cannot create it ({exc.strerror or exc})",
            "put the journal in a writable directory (not on the target under test)",
        ) from exc


class JournalAppender:
    """Appends records to an existing journal and keeps it durable on a schedule.

    ``append`` issues one write(2) per record; the file is fsync'ed when ``sync_records``
    records are pending, when ``sync_interval_s`` has passed since the last sync (checked on
    append and by a small timer thread, so records do not stay volatile while the writer is
    stuck in a write to a hung device), and on close.
    """

    def __init__(
        self,
        path: Path,
        header: JournalHeader,
        *,
        valid_size: int,
        sync_records: int = 1024,
        sync_interval_s: float = 0.1,
    ) -> None:
        self.path = path
        self.header = header
        self.sync_records = max(1, sync_records)
        self.sync_interval_s = sync_interval_s
        self.appended = 0
        self.syncs = 0
        self._pending = 0
        self._last_sync = time.monotonic()
        self._lock = threading.Lock()
        self._failure: IntegrityError | None = None
        self._closing = threading.Event()
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        except OSError as exc:
            raise IntegrityError(f"journal {path}: cannot open it for appending") from exc
        try:
            if os.fstat(self._fd).st_size != valid_size:
                os.ftruncate(self._fd, valid_size)  # drop a torn tail before appending
                os.fsync(self._fd)
        except OSError as exc:
            os.close(self._fd)
            raise IntegrityError(f"journal {path}: cannot truncate its torn tail") from exc
        self._timer = threading.Thread(target=self._sync_on_time, name="journal-sync", daemon=True)
        self._timer.start()

    def append(self, offset: int, generation: int, write_ns: int, kind: int = ACKED) -> None:
        if self._failure is not None:
            raise self._failure
        data = pack_record(self.header.stream_id, offset, generation, write_ns, kind)
        try:
            written = os.write(self._fd, data)
        except OSError as exc:
            raise IntegrityError(
                f"journal {self.path}: append failed ({exc.strerror or exc})",
                "the journal must live on reliable storage with free space",
            ) from exc
        if written != RECORD_SIZE:
            raise IntegrityError(f"journal {self.path}: short append ({written} bytes)")
        self.appended += 1
        with self._lock:
            self._pending += 1
            due = (
                self._pending >= self.sync_records
                or time.monotonic() - self._last_sync >= self.sync_interval_s
            )
        if due:
            self.sync()

    def sync(self) -> None:
        """fsync now if records are pending (they all are durable when this returns)."""
        with self._lock:
            pending, self._pending = self._pending, 0
            self._last_sync = time.monotonic()
        if not pending:
            return
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise IntegrityError(f"journal {self.path}: fsync failed ({exc.strerror})") from exc
        with self._lock:
            self.syncs += 1

    def _sync_on_time(self) -> None:
        while not self._closing.wait(self.sync_interval_s / 2):
            with self._lock:
                due = self._pending and (time.monotonic() - self._last_sync >= self.sync_interval_s)
            if due:
                try:
                    self.sync()
                except IntegrityError as exc:
                    self._failure = exc
                    return

    def close(self) -> None:
        if self._fd < 0:
            return
        self._closing.set()
        self._timer.join()
        try:
            self.sync()
        finally:
            os.close(self._fd)
            self._fd = -1
        if self._failure is not None:
            raise self._failure
