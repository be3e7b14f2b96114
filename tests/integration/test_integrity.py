"""arraybench.integrity end to end: real writes, real journals, real read-back.

Nothing is mocked: the writer writes files (O_DIRECT where the filesystem allows it) and loop
devices, the tests damage blocks behind its back with plain pwrite, kill it with SIGKILL, read
through a device-mapper ``error`` target where the kernel has device-mapper, and get real EIO
on reads and writes from a tiny FUSE filesystem (raw /dev/fuse protocol) that fails a range.
Loop devices, device-mapper and FUSE need root; those tests skip with the reason otherwise.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import shutil
import signal
import stat
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from arraybench.integrity import (
    IntegrityError,
    WriterConfig,
    WriterStats,
    check_region,
    run_writer,
    scan_journal,
    spawn_writer,
    stop_writer,
    supports_direct,
    verify_block,
)
from arraybench.integrity.journal import ACKED, RECORD_SIZE, pack_record
from arraybench.integrity.writer import RESUME_GAP
from tests.journal import read_records
from tests.loopdev import attached, sparse_file

pytestmark = pytest.mark.timeout(120)


BS = 4096
LOOP_SIZE = 32 << 20


def _latest(journal: Path) -> dict[int, int]:
    """offset -> latest acknowledged generation, straight from the journal records."""
    latest: dict[int, int] = {}
    for rec in read_records(journal)[1]:
        if rec.kind == ACKED:
            latest[rec.offset] = max(rec.generation, latest.get(rec.offset, 0))
    return latest


def _pread(path: str | Path, offset: int, length: int = BS) -> bytes:
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.pread(fd, length, offset)
    finally:
        os.close(fd)


def _pwrite(path: str | Path, offset: int, data: bytes) -> None:
    """A write behind the writer's back: plain buffered pwrite, then fsync."""
    fd = os.open(path, os.O_WRONLY)
    try:
        assert os.pwrite(fd, data, offset) == len(data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _file_target(tmp_path: Path, size: int) -> tuple[Path, bool]:
    """A file of zeros (allocated, so O_DSYNC writes are overwrites) and whether O_DIRECT works."""
    target = tmp_path / "target.dat"
    with open(target, "wb") as fh:
        for _ in range(0, size, 1 << 20):
            fh.write(bytes(min(1 << 20, size - fh.tell())))
        os.fsync(fh.fileno())
    return target, supports_direct(target)


def _write_at_least(
    cfg: WriterConfig, journal: Path, writes: int, *, min_s: float = 0.3, max_s: float = 20.0
) -> WriterStats:
    """run_writer for at least ``min_s`` and until ``writes`` more journal records exist (so a
    slow or busy disk makes the test slower, not wrong); gives up after ``max_s``."""
    stop = threading.Event()

    def records() -> int:
        return max(0, journal.stat().st_size - 64) // RECORD_SIZE if journal.exists() else 0

    base = records()

    def watch() -> None:
        start = time.monotonic()
        while not stop.wait(0.02):
            elapsed = time.monotonic() - start
            if (elapsed >= min_s and records() - base >= writes) or elapsed >= max_s:
                stop.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        return run_writer(cfg, journal, stop=stop)
    finally:
        stop.set()
        watcher.join()


def _run(*cmd: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False, env=env)


@pytest.fixture
def loopdev(tmp_path: Path) -> Iterator[str]:
    """A blank loop device (backing file on tmpfs when there is one, so O_DSYNC is cheap)."""
    shm = Path("/dev/shm")
    fd, name = tempfile.mkstemp(
        prefix="arraybench-integrity-", dir=shm if shm.is_dir() else tmp_path
    )
    os.close(fd)
    backing = sparse_file(Path(name), LOOP_SIZE)
    try:
        with attached(backing) as dev:
            yield dev
    finally:
        backing.unlink(missing_ok=True)


# --- (a) clean runs --------------------------------------------------------------------------


def test_clean_run_on_a_file_in_a_subprocess(tmp_path: Path) -> None:
    target, direct = _file_target(tmp_path, 17 << 20)
    journal = tmp_path / "w.jrnl"
    cfg = WriterConfig(path=str(target), offset=1 << 20, length=16 << 20, direct=direct)
    proc = spawn_writer(cfg, journal, duration_s=2.0)
    proc.wait(timeout=30)
    stats = stop_writer(proc)
    assert proc.returncode == 0
    assert stats.stopped_by == "duration"
    assert stats.writes > 20, stats
    assert stats.write_errors == 0
    assert stats.direct == direct
    latest = _latest(journal)
    assert stats.distinct_offsets == len(latest)
    assert stats.journal_records == stats.writes == sum(1 for _ in read_records(journal)[1])

    report = check_region(target, journal, direct=direct)
    assert report.clean, report.problems[:5]
    assert report.checked == len(latest) == report.ok
    assert report.journal_records == stats.writes
    assert report.torn_records == 0
    assert report.summary_line() == (
        f"integrity: {len(latest):,} acknowledged blocks checked, 0 lost, 0 corrupt, 0 unreadable"
    )
    json.dumps(report.as_dict())


@pytest.mark.root
def test_clean_run_on_a_loop_device_stopped_by_event(loopdev: str, tmp_path: Path) -> None:
    journal = tmp_path / "loop.jrnl"
    cfg = WriterConfig(path=loopdev, offset=0, length=LOOP_SIZE, direct=True)
    stop = threading.Event()
    result: list[WriterStats] = []
    thread = threading.Thread(target=lambda: result.append(run_writer(cfg, journal, stop=stop)))
    thread.start()
    time.sleep(2.0)
    stop.set()
    thread.join(timeout=30)
    assert not thread.is_alive()
    stats = result[0]
    assert stats.stopped_by == "stop"
    assert stats.writes > 20
    latest = _latest(journal)
    assert stats.distinct_offsets == len(latest)

    report = check_region(loopdev, journal, direct=True)
    assert report.clean, report.problems[:5]
    assert report.checked == len(latest) == report.ok


# --- (b) real lost writes ------------------------------------------------------------------------


def test_old_content_restored_behind_the_writers_back_is_lost(tmp_path: Path) -> None:
    blocks = 128
    region = 64 << 10
    target, direct = _file_target(tmp_path, region + blocks * BS)
    journal = tmp_path / "lost.jrnl"
    cfg = WriterConfig(path=str(target), offset=region, length=blocks * BS, direct=direct, seed=1)
    first = _write_at_least(cfg, journal, 200)
    assert first.writes >= 200
    before = _latest(journal)
    saved = {off: _pread(target, off) for off in before}
    for off, block in saved.items():  # what is on disk is what the journal says
        header, why = verify_block(block)
        assert header is not None, why
        assert header.generation == before[off]

    limited = replace(cfg, seed=2, iops=4000)
    second = _write_at_least(limited, journal, 200)
    assert second.first_generation == first.last_generation + RESUME_GAP
    assert second.stream_id == first.stream_id
    assert 200 <= second.writes <= 4000 * second.elapsed_s * 1.05 + 5, second  # the rate limit
    for seed in range(3, 8):  # on a slow disk, write on until enough blocks were rewritten
        after = _latest(journal)
        rewritten = sorted(off for off in before if after[off] > before[off])
        if len(rewritten) >= 8:
            break
        _write_at_least(replace(cfg, seed=seed), journal, 200)
    assert len(rewritten) >= 8
    restored, zeroed, misdirected = rewritten[:3], rewritten[3:6], rewritten[6]
    for off in restored:
        _pwrite(target, off, saved[off])  # old, valid content: a lost acknowledged write
    for off in zeroed:
        _pwrite(target, off, bytes(BS))
    _pwrite(target, misdirected, _pread(target, rewritten[7]))  # another block's content

    report = check_region(target, journal, direct=direct)
    found = {(p.offset, p.kind) for p in report.problems}
    assert found == {(off, "lost") for off in restored} | {
        (off, "corrupt") for off in [*zeroed, misdirected]
    }
    for problem in report.problems:
        assert problem.expected_generation == after[problem.offset]
        if problem.kind == "lost":
            assert problem.found_generation == before[problem.offset]
            assert f"holds generation {before[problem.offset]}" in problem.detail
        else:
            assert problem.found_generation is None
        assert problem.written_at_ns > 0
    details = {p.offset: p.detail for p in report.problems}
    assert all("zeros" in details[off] for off in zeroed)
    assert f"misdirected: holds the block of offset {rewritten[7]}" in details[misdirected]
    assert not report.clean
    assert report.checked == len(after)
    assert report.ok == report.checked - 7
    assert "3 lost, 4 corrupt, 0 unreadable" in report.summary_line()
    data = json.loads(json.dumps(report.as_dict()))
    assert data["lost"] == 3 and data["corrupt"] == 4 and len(data["problems"]) == 7


# --- (c) a crash -------------------------------------------------------------------------------


def test_sigkill_mid_run_leaves_a_consistent_journal(tmp_path: Path) -> None:
    target, direct = _file_target(tmp_path, 8 << 20)
    journal = tmp_path / "crash.jrnl"
    cfg = WriterConfig(
        path=str(target), length=8 << 20, direct=direct, sync="fdatasync", journal_sync_records=64
    )
    proc = spawn_writer(cfg, journal)  # no duration: runs until stopped
    deadline = time.monotonic() + 20
    while journal.exists() is False or journal.stat().st_size < 64 + 100 * RECORD_SIZE:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, "the writer did not start writing"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    stats = stop_writer(proc)
    assert stats.stopped_by == "killed by SIGKILL"
    assert stats.writes >= 100
    assert stats.distinct_offsets == len(_latest(journal))

    # a machine crash can also tear the last record: simulate one on top of the kill
    with open(journal, "ab") as fh:
        fh.write(pack_record(stats.stream_id, 0, stats.last_generation + 1, time.time_ns(), 1)[:20])
    report = check_region(target, journal, direct=direct)
    assert report.clean, report.problems[:5]
    assert report.torn_records == 1
    assert "partial record of 20 bytes" in report.torn_detail
    assert report.checked == len(_latest(journal)) == report.ok
    assert report.summary_line().endswith("; 1 torn journal record(s) ignored")

    # the writer continues the journal: torn tail dropped, generations past any lost record
    proc = spawn_writer(cfg, journal, duration_s=0.3)
    proc.wait(timeout=30)
    again = stop_writer(proc)
    assert again.stopped_by == "duration" and again.writes > 0
    assert again.first_generation == stats.last_generation + RESUME_GAP
    scan = scan_journal(journal)
    assert scan.torn_records == 0 and scan.damaged_records == 0
    report = check_region(target, journal, direct=direct)
    assert report.clean and report.torn_records == 0
    assert report.checked == len(_latest(journal))


def test_sigterm_stops_cleanly_with_stats(tmp_path: Path) -> None:
    target, direct = _file_target(tmp_path, 4 << 20)
    journal = tmp_path / "term.jrnl"
    proc = spawn_writer(WriterConfig(path=str(target), length=4 << 20, direct=direct), journal)
    deadline = time.monotonic() + 20
    while not journal.exists() or journal.stat().st_size < 64 + 50 * RECORD_SIZE:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    stats = stop_writer(proc)
    assert proc.returncode == 0
    assert stats.stopped_by == "signal SIGTERM"
    assert stats.writes == scan_journal(journal).acked
    assert check_region(target, journal, direct=direct).clean


# --- (d) unreadable blocks ---------------------------------------------------------------------


def test_blocks_past_the_end_are_unreadable(tmp_path: Path) -> None:
    target, direct = _file_target(tmp_path, 128 * BS)
    journal = tmp_path / "short.jrnl"
    cfg = WriterConfig(path=str(target), length=128 * BS, direct=direct)
    _write_at_least(cfg, journal, 200)
    latest = _latest(journal)
    cut = 100 * BS
    os.truncate(target, cut)
    report = check_region(target, journal, direct=direct)
    gone = {off for off in latest if off >= cut}
    assert gone
    assert {p.offset for p in report.problems} == gone
    assert all(p.kind == "unreadable" and "short read" in p.detail for p in report.problems)
    assert report.ok == len(latest) - len(gone)


def _device_mapper_missing() -> str | None:
    """Why a device-mapper test cannot run here, or None."""
    if os.geteuid() != 0:
        return "device-mapper needs root"
    if shutil.which("dmsetup") is None:
        return "dmsetup missing (apt-get install dmsetup)"
    misc = Path("/proc/misc")
    if "device-mapper" not in misc.read_text():
        if shutil.which("modprobe") is not None:  # kmod is not on every machine
            _run("modprobe", "dm_mod")
        if "device-mapper" not in misc.read_text():
            return (
                "device-mapper is not available in this kernel (no device-mapper in /proc/misc "
                "and modprobe dm_mod failed), so no dm error target can be built"
            )
    return None


@pytest.mark.root
def test_eio_through_a_device_mapper_error_target(loopdev: str, tmp_path: Path) -> None:
    reason = _device_mapper_missing()
    if reason:
        pytest.skip(reason)
    journal = tmp_path / "dm.jrnl"
    _write_at_least(WriterConfig(path=loopdev, length=LOOP_SIZE, direct=True), journal, 2000)
    latest = _latest(journal)
    sectors = LOOP_SIZE // 512
    bad_start, bad_len = (8 << 20) // 512, (1 << 20) // 512  # 1 MiB of EIO at 8 MiB
    table = (
        f"0 {bad_start} linear {loopdev} 0\n"
        f"{bad_start} {bad_len} error\n"
        f"{bad_start + bad_len} {sectors - bad_start - bad_len} linear {loopdev} "
        f"{bad_start + bad_len}\n"
    )
    name = f"arraybench-integrity-{os.getpid()}"
    env = dict(os.environ, DM_DISABLE_UDEV="1")
    proc = subprocess.run(
        ["dmsetup", "create", name],
        input=table,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    if proc.returncode != 0:
        pytest.skip(f"dmsetup create failed here: {proc.stderr.strip()}")
    try:
        dev = f"/dev/mapper/{name}"
        if not os.path.exists(dev):
            _run("dmsetup", "mknodes", name, env=env)
        report = check_region(dev, journal, direct=True)
    finally:
        for _ in range(10):
            if _run("dmsetup", "remove", name, env=env).returncode == 0:
                break
            time.sleep(0.2)
    bad = {off for off in latest if bad_start * 512 <= off < (bad_start + bad_len) * 512}
    assert bad
    assert {p.offset for p in report.problems} == bad
    assert all(p.kind == "unreadable" and "EIO" in p.detail for p in report.problems)
    assert report.ok == len(latest) - len(bad)


class FaultyFuse:
    """A minimal FUSE filesystem (raw /dev/fuse protocol, no library) serving one file,
    ``disk.img``, from a backing file, with faults: reads touching ``bad_read`` get EIO; writes
    touching a ``bad_writes`` range get EIO after doing nothing ("fail"), after writing the data
    anyway ("land") or after zeroing it ("zero").

    Real kernel EIO for the checker and the writer, where device-mapper is missing.
    """

    IN = struct.Struct("<IIQQIIIHH")  # fuse_in_header
    OUT = struct.Struct("<IiQ")  # fuse_out_header
    ATTR = struct.Struct("<QQQQQQIIIIIIIIII")  # fuse_attr
    INIT_OUT = struct.Struct("<IIIIHHIIHHII24x")  # fuse_init_out, protocol 7.31
    IO_IN = struct.Struct("<QQIIQII")  # fuse_read_in / fuse_write_in
    LOOKUP, FORGET, GETATTR, OPEN, READ, WRITE, RELEASE, FLUSH, INIT, BATCH_FORGET = (
        1, 2, 3, 14, 15, 16, 18, 25, 26, 42,
    )  # fmt: skip
    FOPEN_DIRECT_IO = 1
    NAME = "disk.img"

    def __init__(self, backing: Path, mountpoint: Path) -> None:
        self.backing = backing
        self.mountpoint = mountpoint
        self.path = mountpoint / self.NAME
        self.bad_read = (0, 0)
        self.bad_writes: list[tuple[int, int, str]] = []
        self.size = backing.stat().st_size
        self.fd = -1
        self.thread: threading.Thread | None = None
        self.reads_failed = 0
        self.writes_failed = 0

    def __enter__(self) -> FaultyFuse:
        libc = ctypes.CDLL(None, use_errno=True)
        try:
            self.fd = os.open("/dev/fuse", os.O_RDWR | os.O_CLOEXEC)
        except OSError as exc:
            pytest.skip(f"/dev/fuse cannot be opened here: {exc}")
        opts = f"fd={self.fd},rootmode=40000,user_id=0,group_id=0"
        self.mountpoint.mkdir()
        rc = libc.mount(
            b"arraybench-faulty", str(self.mountpoint).encode(), b"fuse", 2 | 4, opts.encode()
        )  # MS_NOSUID | MS_NODEV
        if rc != 0:
            os.close(self.fd)
            pytest.skip(f"cannot mount a FUSE filesystem here: {os.strerror(ctypes.get_errno())}")
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.umount2(str(self.mountpoint).encode(), 1 | 2)  # MNT_FORCE aborts, MNT_DETACH
        if self.thread is not None:
            self.thread.join(timeout=10)
        os.close(self.fd)

    def _attr(self, node: int) -> bytes:
        if node == 1:
            mode, size, links = stat.S_IFDIR | 0o755, 0, 2
        else:
            mode, size, links = stat.S_IFREG | 0o644, self.size, 1
        return self.ATTR.pack(
            node, size, size // 512, 0, 0, 0, 0, 0, 0, mode, links, 0, 0, 0, 4096, 0
        )

    def _write(self, offset: int, data: bytes) -> tuple[int, bytes]:
        for start, end, mode in self.bad_writes:
            if offset < end and offset + len(data) > start:
                self.writes_failed += 1
                if mode != "fail":
                    with open(self.backing, "r+b") as fh:
                        fh.seek(offset)
                        fh.write(data if mode == "land" else bytes(len(data)))
                return errno.EIO, b""
        with open(self.backing, "r+b") as fh:
            fh.seek(offset)
            fh.write(data)
        return 0, struct.pack("<II", len(data), 0)

    def _answer(self, opcode: int, node: int, body: bytes) -> tuple[int, bytes]:
        if opcode == self.INIT:
            _, _, readahead, _ = struct.unpack_from("<IIII", body)
            return 0, self.INIT_OUT.pack(7, 31, readahead, 0, 16, 12, 1 << 17, 1, 0, 0, 0, 0)
        if opcode == self.LOOKUP:
            if node != 1 or body.rstrip(b"\0") != self.NAME.encode():
                return errno.ENOENT, b""
            return 0, struct.pack("<QQQQII", 2, 0, 60, 60, 0, 0) + self._attr(2)
        if opcode == self.GETATTR:
            return 0, struct.pack("<QII", 60, 0, 0) + self._attr(node)
        if opcode == self.OPEN:
            return 0, struct.pack("<QII", 0, self.FOPEN_DIRECT_IO, 0)
        if opcode == self.READ:
            _, offset, size, *_ = self.IO_IN.unpack_from(body)
            if offset < self.bad_read[1] and offset + size > self.bad_read[0]:
                self.reads_failed += 1
                return errno.EIO, b""
            with open(self.backing, "rb") as fh:
                fh.seek(offset)
                return 0, fh.read(size)
        if opcode == self.WRITE:
            _, offset, size, *_ = self.IO_IN.unpack_from(body)
            return self._write(offset, body[self.IO_IN.size : self.IO_IN.size + size])
        if opcode in (self.FLUSH, self.RELEASE):
            return 0, b""
        return errno.ENOSYS, b""  # fsync, access, xattrs...: "not implemented" is fine

    def _serve(self) -> None:
        while True:
            try:
                request = os.read(self.fd, (1 << 20) + 4096)
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.EINTR, errno.EAGAIN):
                    continue
                return  # ENODEV: unmounted
            length, opcode, unique, node, *_ = self.IN.unpack_from(request)
            if opcode in (self.FORGET, self.BATCH_FORGET) or unique == 0:
                continue
            try:
                error, payload = self._answer(opcode, node, request[self.IN.size : length])
            except Exception:
                error, payload = errno.EIO, b""
            reply = self.OUT.pack(self.OUT.size + len(payload), -error, unique) + payload
            with contextlib.suppress(OSError):  # the request was interrupted
                os.write(self.fd, reply)


def _fuse_backing(tmp_path: Path, size: int) -> Path:
    if os.geteuid() != 0:
        pytest.skip("mounting FUSE needs root")
    backing = tmp_path / "backing.img"
    with open(backing, "wb") as fh:
        fh.truncate(size)
    return backing


@pytest.mark.root
def test_eio_on_read_through_fuse_is_unreadable(tmp_path: Path) -> None:
    backing = _fuse_backing(tmp_path, 8 << 20)
    journal = tmp_path / "fuse.jrnl"
    cfg = WriterConfig(path=str(backing), length=8 << 20, direct=supports_direct(backing))
    _write_at_least(cfg, journal, 1000)
    latest = _latest(journal)
    bad = (3 << 20, (3 << 20) + (256 << 10))  # 256 KiB of EIO at 3 MiB
    with FaultyFuse(backing, tmp_path / "mnt") as fuse:
        fuse.bad_read = bad
        report = check_region(fuse.path, journal, direct=False)
    expected = {off for off in latest if bad[0] <= off < bad[1]}
    assert expected
    assert fuse.reads_failed >= len(expected)
    assert {p.offset for p in report.problems} == expected
    assert all(p.kind == "unreadable" and "(EIO)" in p.detail for p in report.problems)
    assert report.ok == len(latest) - len(expected)
    assert f"{len(expected)} unreadable" in report.summary_line()


@pytest.mark.root
def test_failed_writes_are_journaled_and_not_blamed(tmp_path: Path) -> None:
    """Writes that return EIO: the writer goes on; a failed write that did nothing or landed
    anyway is no problem, one that destroyed the block is corrupt but flagged as such."""
    backing = _fuse_backing(tmp_path, 1 << 20)
    journal = tmp_path / "wfail.jrnl"
    cfg = WriterConfig(path=str(tmp_path / "mnt" / FaultyFuse.NAME), length=1 << 20, seed=3)
    ranges = {"fail": (0, 64 << 10), "land": (256 << 10, 320 << 10), "zero": (512 << 10, 576 << 10)}
    with FaultyFuse(backing, tmp_path / "mnt") as fuse:
        first = _write_at_least(cfg, journal, 500)
        assert first.write_errors == 0 and first.writes >= 500
        before = _latest(journal)
        fuse.bad_writes = [(start, end, mode) for mode, (start, end) in ranges.items()]
        second = _write_at_least(cfg, journal, 1000)
        fuse.bad_writes = []
        report = check_region(fuse.path, journal, direct=False)
    assert second.write_errors == fuse.writes_failed > 0
    assert second.writes > 0
    assert "Input/output error" in second.error_messages[0]
    failed_after: dict[int, int] = {}
    for rec in read_records(journal)[1]:
        if rec.kind != ACKED and rec.offset in before:
            failed_after[rec.offset] = rec.generation
    assert report.failed_writes == second.write_errors

    def hit(mode: str) -> set[int]:
        start, end = ranges[mode]
        return {off for off in failed_after if start <= off < end}

    assert hit("fail") and hit("land") and hit("zero")
    assert report.newer == len(hit("land"))  # the failed write is there after all: fine
    assert {p.offset for p in report.problems} == hit("zero")
    for problem in report.problems:
        assert problem.kind == "corrupt" and problem.after_failed_write
        assert "zeros" in problem.detail and "failed" in problem.detail
        assert problem.expected_generation == before[problem.offset]
    assert report.checked == len(_latest(journal))


# --- refusals and journal damage -------------------------------------------------------------


def test_damaged_journal_is_reported_and_not_continued(tmp_path: Path) -> None:
    target, direct = _file_target(tmp_path, 64 * BS)
    journal = tmp_path / "damaged.jrnl"
    cfg = WriterConfig(path=str(target), length=64 * BS, direct=direct)
    _write_at_least(cfg, journal, 20, min_s=0.1)
    assert scan_journal(journal).records >= 20
    with open(journal, "r+b") as fh:  # flip a byte in the 5th record
        fh.seek(64 + 4 * RECORD_SIZE + 3)
        byte = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([byte[0] ^ 0xFF]))
    report = check_region(target, journal, direct=direct)
    assert report.damaged_records == 1 and report.torn_records == 0
    assert not report.problems and not report.clean
    assert "journal DAMAGED" in report.summary_line()
    with pytest.raises(IntegrityError, match="damaged"):
        run_writer(cfg, journal, duration_s=0.1)
    with pytest.raises(IntegrityError, match="another region"):
        run_writer(WriterConfig(path=str(target), length=32 * BS), journal, duration_s=0.1)
