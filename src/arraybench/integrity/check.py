"""Checking a region against its journal: was any acknowledged write lost?

More: docs/internals.md, `integrity/check.py`."""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arraybench.integrity.errors import IntegrityError
from arraybench.integrity.journal import ACKED, read_header, scan_journal
from arraybench.integrity.layout import verify_block

LOST = "lost"
CORRUPT = "corrupt"
UNREADABLE = "unreadable"
KINDS = (LOST, CORRUPT, UNREADABLE)
MAX_BATCH_BYTES = 1 << 20
MAX_GAP_BYTES = 64 << 10
MAX_STORED_PROBLEMS = 1000


def format_ns(ns: int) -> str:
    """Unix ns as an ISO UTC time with microseconds."""
    stamp = datetime.fromtimestamp(ns / 1e9, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class BlockProblem:
    offset: int
    kind: str  # "lost" | "corrupt" | "unreadable"
    expected_generation: int
    found_generation: int | None  # the generation found, for "lost"; else None
    written_at_ns: int  # when the acknowledged (expected) generation was written
    detail: str
    after_failed_write: bool = False  # a later write of this block failed (content undefined)

    def line(self) -> str:
        return f"offset {self.offset}: {self.kind}: {self.detail}"


@dataclass
class IntegrityReport:
    path: str
    journal: str
    block_size: int
    region_offset: int
    region_length: int
    stream_id: int
    direct: bool
    checked: int = 0  # distinct acknowledged offsets read back
    ok: int = 0
    problems: list[BlockProblem] = field(default_factory=list)
    journal_records: int = 0  # valid records (acknowledged + failed)
    torn_records: int = 0  # invalid records at the end of the journal, ignored
    damaged_records: int = 0  # invalid records followed by valid ones, or outside the region
    failed_writes: int = 0  # writes journaled as failed
    newer: int = 0  # ok blocks holding a newer generation than acknowledged
    bytes_read: int = 0
    elapsed_s: float = 0.0
    torn_detail: str = ""

    def count(self, kind: str) -> int:
        return sum(1 for p in self.problems if p.kind == kind)

    @property
    def lost(self) -> int:
        return self.count(LOST)

    @property
    def corrupt(self) -> int:
        return self.count(CORRUPT)

    @property
    def unreadable(self) -> int:
        return self.count(UNREADABLE)

    @property
    def clean(self) -> bool:
        """No problem found and the journal is intact (a torn tail is tolerated)."""
        return not self.problems and not self.damaged_records

    def as_dict(self, max_problems: int | None = MAX_STORED_PROBLEMS) -> dict[str, Any]:
        """JSON-able; counts are always complete, the problem list stops at ``max_problems``."""
        data = asdict(self)
        kept = self.problems if max_problems is None else self.problems[:max_problems]
        data["problems"] = [asdict(p) for p in kept]
        data["problems_omitted"] = len(self.problems) - len(kept)
        data.update(
            clean=self.clean, lost=self.lost, corrupt=self.corrupt, unreadable=self.unreadable
        )
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IntegrityReport:
        """The report ``as_dict`` gave (its problem list as stored: maybe cut short)."""
        names = set(cls.__dataclass_fields__) - {"problems"}
        report = cls(**{k: v for k, v in data.items() if k in names})
        report.problems = [BlockProblem(**p) for p in data.get("problems", [])]
        return report

    def summary_line(self) -> str:
        line = (
            f"integrity: {self.checked:,} acknowledged blocks checked, {self.lost:,} lost, "
            f"{self.corrupt:,} corrupt, {self.unreadable:,} unreadable"
        )
        if self.torn_records:
            line += f"; {self.torn_records} torn journal record(s) ignored"
        if self.damaged_records:
            line += f"; journal DAMAGED: {self.damaged_records} invalid record(s)"
        return line


class _Checker:
    def __init__(self, report: IntegrityReport, fd: int, expected: dict[int, tuple[int, int, int]]):
        self.report = report
        self.fd = fd
        self.expected = expected
        self.bs = report.block_size

    def problem(self, offset: int, kind: str, detail: str, found: int | None = None) -> None:
        generation, written_ns, failed = self.expected[offset]
        if failed:
            detail += f"; a later write (generation {failed}) failed, so its content is undefined"
        self.report.problems.append(
            BlockProblem(offset, kind, generation, found, written_ns, detail, bool(failed))
        )

    def classify(self, offset: int, block: memoryview) -> None:
        generation, written_ns, _ = self.expected[offset]
        header, why = verify_block(block)
        if header is None:
            self.problem(offset, CORRUPT, why)
        elif header.stream_id != self.report.stream_id:
            self.problem(
                offset,
                CORRUPT,
                f"block of another stream (id {header.stream_id}, offset {header.offset}, "
                f"generation {header.generation})",
            )
        elif header.offset != offset:
            self.problem(
                offset,
                CORRUPT,
                f"misdirected: holds the block of offset {header.offset} "
                f"(generation {header.generation})",
            )
        elif header.generation < generation:
            self.problem(
                offset,
                LOST,
                f"holds generation {header.generation} written {format_ns(header.write_ns)}, "
                f"not the acknowledged generation {generation} written {format_ns(written_ns)}",
                header.generation,
            )
        else:
            self.report.ok += 1
            if header.generation > generation:
                self.report.newer += 1

    def read(self, view: memoryview, offset: int) -> tuple[int, str]:
        """(bytes read, "") or (0, why the read failed); no exception object is kept (its
        traceback would pin the buffer)."""
        try:
            got = os.preadv(self.fd, [view], offset)
        except OSError as exc:
            name = errno.errorcode.get(exc.errno or 0, str(exc.errno))
            return 0, f"read failed: {exc.strerror or exc} ({name})"
        self.report.bytes_read += got
        return got, ""

    def single(self, view: memoryview, offset: int) -> None:
        block = view[: self.bs]
        got, error = self.read(block, offset)
        if error:
            self.problem(offset, UNREADABLE, error)
        elif got < self.bs:
            where = " (beyond the end of the target)" if got == 0 else ""
            self.problem(offset, UNREADABLE, f"short read: {got} of {self.bs} bytes{where}")
        else:
            self.classify(offset, block)
        block.release()

    def batch(self, view: memoryview, offsets: list[int]) -> None:
        first = offsets[0]
        length = offsets[-1] + self.bs - first
        got = 0
        if len(offsets) > 1:
            got, _ = self.read(view[:length], first)
        for offset in offsets:
            start = offset - first
            if start + self.bs <= got:
                self.classify(offset, view[start : start + self.bs])
            else:
                self.single(view, offset)


def _batches(offsets: list[int], bs: int, max_batch: int, max_gap: int) -> list[list[int]]:
    batches: list[list[int]] = []
    current: list[int] = []
    for offset in offsets:
        if current and (
            offset + bs - current[0] > max_batch or offset - (current[-1] + bs) > max_gap
        ):
            batches.append(current)
            current = []
        current.append(offset)
    if current:
        batches.append(current)
    return batches


def check_region(
    path: str | os.PathLike[str],
    journal: str | os.PathLike[str],
    *,
    direct: bool = True,
    max_batch_bytes: int = MAX_BATCH_BYTES,
    max_gap_bytes: int = MAX_GAP_BYTES,
) -> IntegrityReport:
    """Read back every block the journal says was acknowledged and classify it.

    ``direct`` reads with O_DIRECT (the device's content, not the page cache); filesystems
    without O_DIRECT support need ``direct=False``. Raises IntegrityError when the journal or
    the target cannot be used at all; findings about blocks go into the report.
    """
    started = time.monotonic()
    journal = Path(journal)
    expected: dict[int, tuple[int, int, int]] = {}  # offset -> (generation, write ns, failed gen)
    outside = 0
    head = read_header(journal)
    bs = head.block_size
    region_end = head.region_offset + head.region_length

    def visit(offset: int, generation: int, write_ns: int, kind: int) -> None:
        nonlocal outside
        if (
            offset < head.region_offset
            or offset + bs > region_end
            or (offset - head.region_offset) % bs
        ):
            outside += 1
            return
        known = expected.get(offset)
        if kind == ACKED:
            if known is None or generation > known[0]:
                expected[offset] = (generation, write_ns, 0)
        elif known is not None and generation > known[0] and generation > known[2]:
            expected[offset] = (known[0], known[1], generation)

    scan = scan_journal(journal, visit)
    max_batch = max(bs, max_batch_bytes - max_batch_bytes % bs)
    report = IntegrityReport(
        path=str(path),
        journal=str(journal),
        block_size=bs,
        region_offset=head.region_offset,
        region_length=head.region_length,
        stream_id=head.stream_id,
        direct=direct,
        journal_records=scan.records,
        torn_records=scan.torn_records,
        damaged_records=scan.damaged_records + outside,
        failed_writes=scan.failed,
        torn_detail=scan.torn_detail,
    )
    flags = os.O_RDONLY | os.O_CLOEXEC | (os.O_DIRECT if direct else 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        hint = (
            "use direct=False on this filesystem" if direct and exc.errno == errno.EINVAL else None
        )
        raise IntegrityError(
            f"integrity target {path}: cannot open it for reading ({exc.strerror or exc})", hint
        ) from exc
    buf = mmap.mmap(-1, max_batch)  # page-aligned, as O_DIRECT needs
    try:
        view = memoryview(buf)
        try:
            checker = _Checker(report, fd, expected)
            for offsets in _batches(sorted(expected), bs, max_batch, max_gap_bytes):
                checker.batch(view, offsets)
        finally:
            view.release()
    finally:
        os.close(fd)
        with contextlib.suppress(BufferError):  # a view pinned by a traceback: GC frees it
            buf.close()
    report.checked = len(expected)
    report.elapsed_s = time.monotonic() - started
    return report
