"""The integrity writer: random block writes whose acknowledgements are journaled.

One thread, one write in flight: pick a random block of the region, fill it (see ``layout``),
write it with O_DSYNC (or write + fdatasync), and only when the device has acknowledged it
append (offset, generation, write time) to the journal. The journal is fsync'ed every
``journal_sync_records`` records or ``journal_sync_interval_s`` seconds and before the writer
reports stopped, so after any crash it claims at most what the device acknowledged.

A write that fails (EIO, ENOSPC, a vanished path...) is journaled as failed and the writer goes
on after a short pause: during a failover the interesting question is whether the writes the
device *did* acknowledge survive. Configuration errors (EINVAL from misaligned O_DIRECT, a bad
region) raise IntegrityError instead.

More: docs/internals.md, `integrity/writer.py`."""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import json
import mmap
import os
import random
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from arraybench.integrity.errors import IntegrityError
from arraybench.integrity.journal import (
    ACKED,
    FAILED,
    JournalAppender,
    JournalHeader,
    create_journal,
    scan_journal,
)
from arraybench.integrity.layout import DEFAULT_BLOCK_SIZE, SECTOR, check_block_size, fill_block
from arraybench.system.procs import communicate_or_kill
from arraybench.targets.safety import check_target

SYNC_MODES = ("dsync", "fdatasync")
ERROR_PAUSE_S = 0.01  # after a failed write, so a dead device does not flood the journal
MAX_ERROR_MESSAGES = 10
RESUME_GAP = 1 << 20  # generations skipped when a journal is continued (> journal_sync_records)
MAX_BITMAP_BLOCKS = 1 << 28  # distinct offsets are counted up to 256 Mi blocks (32 MiB bitmap)
STOP_TIMEOUT_S = 10.0
_CONFIG_ERRNOS = (errno.EINVAL, errno.EBADF, errno.EFAULT, errno.EROFS, errno.EPERM, errno.EACCES)


@dataclass(frozen=True, kw_only=True)
class WriterConfig:
    """Where and how to write. The region is [offset, offset + length) of ``path``."""

    path: str
    length: int
    offset: int = 0
    block_size: int = DEFAULT_BLOCK_SIZE
    direct: bool = False  # O_DIRECT (aligned buffers); not every filesystem supports it
    sync: str = "dsync"  # "dsync": open with O_DSYNC; "fdatasync": write then fdatasync
    iops: float | None = None  # rate limit; None = as fast as one write in flight allows
    seed: int | None = None  # offset sequence; None = random
    journal_sync_records: int = 1024
    journal_sync_interval_s: float = 0.1
    allow_destroy: tuple[str, ...] = ()  # block devices that may be overwritten (safety rule)

    @property
    def blocks(self) -> int:
        return self.length // self.block_size

    def validate(self) -> None:
        check_block_size(self.block_size)
        if self.offset < 0 or self.offset % SECTOR:
            raise IntegrityError(
                f"region offset {self.offset} is not a non-negative multiple of {SECTOR}"
            )
        if self.length < self.block_size:
            raise IntegrityError(
                f"region length {self.length} is shorter than one block ({self.block_size})"
            )
        if self.sync not in SYNC_MODES:
            raise IntegrityError(f"sync mode {self.sync!r} unknown", "use dsync or fdatasync")
        if self.iops is not None and self.iops <= 0:
            raise IntegrityError(f"iops limit {self.iops} must be positive")
        if not 1 <= self.journal_sync_records < RESUME_GAP or self.journal_sync_interval_s <= 0:
            raise IntegrityError(
                f"journal sync policy must be 1..{RESUME_GAP - 1} records and > 0 s"
            )


@dataclass
class WriterStats:
    """One writer run. ``writes`` counts acknowledged writes (= acknowledged journal records)."""

    writes: int = 0
    write_errors: int = 0
    distinct_offsets: int | None = None  # None when the region is too large to keep a bitmap
    bytes_written: int = 0
    elapsed_s: float = 0.0
    journal_records: int = 0  # appended by this run (acknowledged + failed)
    journal_syncs: int = 0
    stream_id: int = 0
    first_generation: int = 0  # 0 when nothing was written
    last_generation: int = 0
    stopped_by: str = ""  # "duration", "stop", "signal SIGTERM", "killed by SIGKILL", ...
    direct: bool = False
    error_messages: list[str] = field(default_factory=list)

    @property
    def iops(self) -> float:
        return self.writes / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "iops": round(self.iops, 1)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WriterStats:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})


def supports_direct(path: str | os.PathLike[str]) -> bool:
    """Whether O_DIRECT can be used on ``path`` (or, if it does not exist, in its directory)."""
    target = Path(path)
    probe = target if target.exists() else target.parent / f".{target.name}.odirect-probe"
    created = not target.exists()
    try:
        flags = os.O_RDONLY | os.O_DIRECT
        if created:
            flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_DIRECT
        fd = os.open(probe, flags, 0o600)
    except OSError:
        return False
    else:
        os.close(fd)
        return True
    finally:
        if created:
            probe.unlink(missing_ok=True)


def _prepare_target(cfg: WriterConfig) -> tuple[int, int]:
    """Create or extend a regular file to hold the region; check a block device is allowed.
    Returns what was checked, (file type bits, device number of a block device), which the
    opened target must still be (`_open_target`)."""
    end = cfg.offset + cfg.length
    real = os.path.realpath(cfg.path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        try:
            with open(real, "xb") as fh:
                fh.truncate(end)
        except OSError as exc:
            raise IntegrityError(
                f"integrity target {cfg.path}: cannot create it ({exc.strerror or exc})"
            ) from exc
        return stat.S_IFREG, 0
    except OSError as exc:
        raise IntegrityError(
            f"integrity target {cfg.path}: cannot stat it ({exc.strerror or exc})"
        ) from exc
    if stat.S_ISREG(st.st_mode):
        if st.st_size < end:
            try:
                os.truncate(real, end)
            except OSError as exc:
                raise IntegrityError(
                    f"integrity target {cfg.path}: cannot extend it to {end} bytes "
                    f"({exc.strerror or exc})"
                ) from exc
        return stat.S_IFREG, 0
    if not stat.S_ISBLK(st.st_mode):
        raise IntegrityError(f"integrity target {cfg.path} is not a regular file or block device")
    info = check_target(cfg.path, writes=True, allow_destroy=cfg.allow_destroy, phase="verify")
    if os.stat(info.real_path).st_rdev != st.st_rdev:  # swapped while it was being checked
        raise IntegrityError(f"integrity target {cfg.path} changed while it was checked")
    fd = os.open(real, os.O_RDONLY)
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)
    if end > size:
        raise IntegrityError(
            f"integrity region [{cfg.offset}, {end}) does not fit on {cfg.path} ({size} bytes)"
        )
    return stat.S_IFBLK, st.st_rdev


def _open_journal(cfg: WriterConfig, journal: Path) -> tuple[JournalAppender, int]:
    """Continue an existing journal of the same region, or create a new one (new stream id).

    Returns the appender and the first generation to write. A continued journal skips
    RESUME_GAP generations: a machine crash may have lost journal records of writes the
    device still holds (at most one sync batch), and their generations must never be reused.
    """
    wanted = JournalHeader(
        block_size=cfg.block_size,
        stream_id=random.SystemRandom().randrange(1, 1 << 32),
        region_offset=cfg.offset,
        region_length=cfg.length,
        created_ns=time.time_ns(),
    )
    if journal.exists() and journal.stat().st_size > 0:
        scan = scan_journal(journal)
        if not scan.header.same_region(wanted):
            h = scan.header
            raise IntegrityError(
                f"journal {journal} belongs to another region (offset {h.region_offset}, "
                f"length {h.region_length}, block size {h.block_size})",
                "use a new journal path for a new region",
            )
        if scan.damaged_records:
            raise IntegrityError(
                f"journal {journal} is damaged ({scan.damaged_records} invalid records "
                "followed by valid ones); not appending to it",
                "check it with check_region, then start a new journal",
            )
        header = scan.header
        valid_size = scan.valid_size
        first = scan.last_generation + RESUME_GAP
    else:
        create_journal(journal, wanted)
        header = wanted
        valid_size = len(wanted.pack())
        first = 1
    appender = JournalAppender(
        journal,
        header,
        valid_size=valid_size,
        sync_records=cfg.journal_sync_records,
        sync_interval_s=cfg.journal_sync_interval_s,
    )
    return appender, first


def _open_target(cfg: WriterConfig, checked: tuple[int, int]) -> int:
    """The target opened for writing, verified (on the open descriptor, before any write) to
    be what `_prepare_target` checked: a link swapped in between cannot lead the writer to a
    device that was never checked."""
    fd = _open_flags(cfg)
    st = os.fstat(fd)
    if (stat.S_IFMT(st.st_mode), st.st_rdev if stat.S_ISBLK(st.st_mode) else 0) != checked:
        os.close(fd)
        raise IntegrityError(
            f"integrity target {cfg.path} changed since it was checked (a link or a device "
            "node swapped in): nothing was written",
            "find out what changed it, then run again",
        )
    return fd


def _open_flags(cfg: WriterConfig) -> int:
    flags = os.O_WRONLY | os.O_CLOEXEC
    if cfg.sync == "dsync":
        flags |= os.O_DSYNC
    if cfg.direct:
        flags |= os.O_DIRECT
    try:
        return os.open(os.path.realpath(cfg.path), flags)
    except OSError as exc:
        hint = "run without direct (O_DIRECT)" if cfg.direct and exc.errno == errno.EINVAL else None
        raise IntegrityError(
            f"integrity target {cfg.path}: cannot open it for writing ({exc.strerror or exc})",
            hint,
        ) from exc


def run_writer(
    cfg: WriterConfig,
    journal: Path,
    stop: threading.Event | None = None,
    duration_s: float | None = None,
    on_ready: Callable[[int], None] | None = None,
) -> WriterStats:
    """Write and journal blocks until ``stop`` is set or ``duration_s`` has passed.

    An existing journal of the same region is continued (same stream, higher generations, a
    torn tail dropped first); otherwise a new journal with a new stream id is created.
    ``on_ready(stream id)`` is called once the target and the journal are open, before the
    first write (a file target has its full size by then).
    """
    cfg.validate()
    if stop is None and duration_s is None:
        raise IntegrityError("run_writer needs a stop event or a duration")
    journal = Path(journal)
    checked = _prepare_target(cfg)
    appender, first_generation = _open_journal(cfg, journal)
    stream = appender.header.stream_id
    stats = WriterStats(stream_id=stream, direct=cfg.direct)
    try:
        fd = _open_target(cfg, checked)
    except IntegrityError:
        appender.close()
        raise
    if on_ready is not None:
        on_ready(stream)
    buf = mmap.mmap(-1, cfg.block_size)  # page-aligned, as O_DIRECT needs
    bs = cfg.block_size
    blocks = cfg.blocks
    bitmap = bytearray((blocks + 7) // 8) if blocks <= MAX_BITMAP_BLOCKS else None
    distinct = 0
    rng = random.Random(cfg.seed)
    randrange = rng.randrange
    fdatasync = cfg.sync == "fdatasync"
    generation = first_generation - 1
    interval = 1.0 / cfg.iops if cfg.iops else 0.0
    start = time.monotonic()
    deadline = start + duration_s if duration_s is not None else None
    next_due = start

    def pause(seconds: float) -> None:
        if stop is not None:
            stop.wait(seconds)
        else:
            time.sleep(seconds)

    try:
        while True:
            if stop is not None and stop.is_set():
                stats.stopped_by = "stop"
                break
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                stats.stopped_by = "duration"
                break
            if interval:
                if next_due > now:
                    limit = next_due if deadline is None else min(next_due, deadline)
                    pause(limit - now)
                    continue
                next_due = max(next_due + interval, now - 1.0)  # at most 1 s of catch-up
            index = randrange(blocks)
            offset = cfg.offset + index * bs
            generation += 1
            write_ns = time.time_ns()
            fill_block(
                buf,
                block_size=bs,
                stream_id=stream,
                offset=offset,
                generation=generation,
                write_ns=write_ns,
            )
            try:
                written = os.pwrite(fd, buf, offset)
                if fdatasync:
                    os.fdatasync(fd)
            except OSError as exc:
                if exc.errno in _CONFIG_ERRNOS:
                    hint = "with direct, region offset and block size must be aligned to the "
                    hint += "device's logical block size"
                    raise IntegrityError(
                        f"integrity writer: write of {bs} bytes at {offset} on {cfg.path} "
                        f"refused ({exc.strerror or exc})",
                        hint if cfg.direct and exc.errno == errno.EINVAL else None,
                    ) from exc
                message = f"write at {offset}: {exc.strerror or exc}"
                written = -1
            if written != bs:
                appender.append(offset, generation, write_ns, FAILED)
                stats.write_errors += 1
                if len(stats.error_messages) < MAX_ERROR_MESSAGES:
                    if written >= 0:
                        message = f"short write at {offset}: {written} of {bs} bytes"
                    stats.error_messages.append(message)
                pause(ERROR_PAUSE_S)
                continue
            appender.append(offset, generation, write_ns, ACKED)
            if not stats.first_generation:
                stats.first_generation = generation
            stats.last_generation = generation
            stats.writes += 1
            if bitmap is not None:
                byte, bit = index >> 3, 1 << (index & 7)
                if not bitmap[byte] & bit:
                    bitmap[byte] |= bit
                    distinct += 1
    finally:
        stats.elapsed_s = time.monotonic() - start
        os.close(fd)
        with contextlib.suppress(BufferError):  # a view pinned by a traceback: GC frees it
            buf.close()
        appender.close()
    stats.bytes_written = stats.writes * bs
    stats.distinct_offsets = distinct if bitmap is not None else None
    stats.journal_records = appender.appended
    stats.journal_syncs = appender.syncs
    return stats


# --- as a subprocess -------------------------------------------------------------------------


class WriterProcess(subprocess.Popen[bytes]):
    """A writer subprocess, with what ``stop_writer`` needs to report on it."""

    journal: Path
    stats_path: Path
    base_generation: int  # last generation in the journal before this run
    stream_id: int


def stats_path_for(journal: Path) -> Path:
    return journal.with_name(journal.name + ".stats.json")


def writer_argv(
    cfg: WriterConfig,
    journal: Path,
    duration_s: float | None,
    stats_path: Path,
    python: str | None = None,
) -> list[str]:
    """The writer's command line (``python``: another interpreter, e.g. a remote host's)."""
    argv = [
        python or sys.executable,
        "-m",
        "arraybench.integrity.writer",
        "--path",
        str(cfg.path),
        "--offset",
        str(cfg.offset),
        "--length",
        str(cfg.length),
        "--bs",
        str(cfg.block_size),
        "--journal",
        str(journal),
        "--stats",
        str(stats_path),
        "--sync",
        cfg.sync,
        "--journal-sync-records",
        str(cfg.journal_sync_records),
        "--journal-sync-interval",
        str(cfg.journal_sync_interval_s),
    ]
    if duration_s is not None:
        argv += ["--duration", str(duration_s)]
    if cfg.iops is not None:
        argv += ["--iops", str(cfg.iops)]
    if cfg.seed is not None:
        argv += ["--seed", str(cfg.seed)]
    if cfg.direct:
        argv.append("--direct")
    for path in cfg.allow_destroy:
        argv += ["--allow-destroy", path]
    return argv


def spawn_writer(
    cfg: WriterConfig, journal: Path, duration_s: float | None = None
) -> subprocess.Popen[bytes]:
    """Start ``python -m arraybench.integrity.writer`` on ``cfg``; stop it with stop_writer."""
    cfg.validate()
    journal = Path(journal)
    stats_path = stats_path_for(journal)
    stats_path.unlink(missing_ok=True)
    base, stream = 0, 0
    if journal.exists() and journal.stat().st_size > 0:
        scan = scan_journal(journal)
        base, stream = scan.last_generation, scan.header.stream_id
    src = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    try:
        proc = WriterProcess(
            writer_argv(cfg, journal, duration_s, stats_path),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
        )
    except OSError as exc:
        raise IntegrityError(f"cannot start the integrity writer: {exc}") from exc
    proc.journal = journal
    proc.stats_path = stats_path
    proc.base_generation = base
    proc.stream_id = stream
    return proc


def _stats_from_journal(proc: WriterProcess, stopped_by: str) -> WriterStats:
    """Stats of a writer that left no stats file (killed): its records in the journal."""
    stats = WriterStats(stopped_by=stopped_by)
    offsets: set[int] = set()
    times: list[int] = []

    def visit(offset: int, generation: int, write_ns: int, kind: int) -> None:
        if generation <= proc.base_generation:
            return
        stats.journal_records += 1
        if kind != ACKED:
            stats.write_errors += 1
            return
        stats.writes += 1
        offsets.add(offset)
        stats.first_generation = stats.first_generation or generation
        stats.last_generation = generation
        if len(times) < 2:
            times.append(write_ns)
        else:
            times[1] = write_ns

    if not proc.journal.exists():
        return stats
    scan = scan_journal(proc.journal, visit)
    stats.stream_id = scan.header.stream_id
    stats.distinct_offsets = len(offsets)
    stats.bytes_written = stats.writes * scan.header.block_size
    if len(times) == 2:
        stats.elapsed_s = (times[1] - times[0]) / 1e9
    return stats


def stop_writer(proc: subprocess.Popen[bytes], timeout_s: float = STOP_TIMEOUT_S) -> WriterStats:
    """SIGTERM a writer subprocess (if still running), wait for it and return its stats.

    A writer that does not stop within ``timeout_s`` (e.g. stuck in a write to a hung device)
    is killed; its stats then come from the journal. A writer that failed raises
    IntegrityError with its message.
    """
    if not isinstance(proc, WriterProcess):
        raise IntegrityError("stop_writer needs a process started by spawn_writer")
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    _, err, _ = communicate_or_kill(proc, timeout_s)
    code = proc.returncode
    if proc.stats_path.exists():
        try:
            data = json.loads(proc.stats_path.read_text())
        except (OSError, ValueError) as exc:
            raise IntegrityError(f"integrity writer stats {proc.stats_path} unreadable") from exc
        return WriterStats.from_dict(data)
    message = (err or b"").decode(errors="replace").strip().splitlines()
    if code is not None and code > 0:
        raise IntegrityError(
            f"integrity writer exited with code {code}: {message[-1] if message else 'no message'}"
        )
    name = signal.Signals(-code).name if code is not None and code < 0 else f"code {code}"
    return _stats_from_journal(proc, f"killed by {name}")


# --- the entry point -------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    from arraybench.units import parse_duration, parse_size

    p = argparse.ArgumentParser(
        prog="python -m arraybench.integrity.writer",
        description="Write checkable blocks at random offsets of a region and journal every "
        "acknowledged write. SIGTERM/SIGINT stop it cleanly.",
    )
    p.add_argument("--path", required=True, help="file or block device")
    p.add_argument("--offset", type=parse_size, default=0, help="region start (bytes, 1m...)")
    p.add_argument("--length", type=parse_size, required=True, help="region length")
    p.add_argument("--bs", type=parse_size, default=DEFAULT_BLOCK_SIZE, help="block size")
    p.add_argument("--journal", type=Path, required=True, help="journal file (not on target)")
    p.add_argument("--duration", type=parse_duration, default=None, help="stop after (s, 5m)")
    p.add_argument("--iops", type=float, default=None, help="rate limit, writes per second")
    p.add_argument("--direct", action="store_true", help="O_DIRECT")
    p.add_argument(
        "--direct-if-supported",
        action="store_true",
        help="O_DIRECT where the target's filesystem supports it",
    )
    p.add_argument("--sync", choices=SYNC_MODES, default="dsync")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--stats", type=Path, default=None, help="stats JSON written at exit")
    p.add_argument("--journal-sync-records", type=int, default=1024)
    p.add_argument("--journal-sync-interval", type=float, default=0.1, help="seconds")
    p.add_argument("--allow-destroy", action="append", default=[], help="device to overwrite")
    p.add_argument(
        "--stop-on-eof",
        action="store_true",
        help="stop cleanly when stdin closes (an SSH session that ends or dies)",
    )
    p.add_argument(
        "--print-stats",
        action="store_true",
        help="print one JSON line when ready to write, and the stats as one JSON line at exit",
    )
    return p


def _lock_journal(journal: Path) -> int | None:
    """An exclusive lock (``JOURNAL.lock``, held until this process ends), or None when
    another writer holds it: two writers appending to one journal would break it (a point
    run again while the writer of an interrupted attempt still runs on a hung host)."""
    fd = os.open(journal.with_name(journal.name + ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                 0o644)  # fmt: skip
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _stop_on_eof(stop: threading.Event, received: list[str]) -> None:
    """Stop when stdin reaches its end: over SSH, the controller closing the session (or the
    session, the controller or the connection dying) ends the writer, nothing stays behind."""

    def watch() -> None:
        with contextlib.suppress(OSError, ValueError):
            while os.read(sys.stdin.fileno(), 4096):
                pass
        received.append("stdin closed")
        stop.set()

    threading.Thread(target=watch, name="stdin-eof", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cfg = WriterConfig(
        path=args.path,
        offset=args.offset,
        length=args.length,
        block_size=args.bs,
        direct=args.direct or (args.direct_if_supported and supports_direct(args.path)),
        sync=args.sync,
        iops=args.iops,
        seed=args.seed,
        journal_sync_records=args.journal_sync_records,
        journal_sync_interval_s=args.journal_sync_interval,
        allow_destroy=tuple(args.allow_destroy),
    )
    stop = threading.Event()
    received: list[str] = []

    def on_signal(signum: int, _frame: object) -> None:
        received.append(signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    stats_path = args.stats or stats_path_for(args.journal)
    if args.stop_on_eof:
        _stop_on_eof(stop, received)
    try:
        args.journal.parent.mkdir(parents=True, exist_ok=True)  # a host's journal folder
        lock = _lock_journal(args.journal)
    except OSError as exc:
        print(f"arraybench integrity writer: journal folder {args.journal.parent}: "
              f"{exc.strerror or exc}", file=sys.stderr)  # fmt: skip
        return 2
    if lock is None:
        print(f"arraybench integrity writer: journal {args.journal} is in use by another "
              "writer (one still running from an earlier attempt?); not appending to it",
              file=sys.stderr)  # fmt: skip
        return 2

    def ready(stream: int) -> None:  # the controller waits for this line before the load
        with contextlib.suppress(OSError):
            print(json.dumps({"ready": True, "stream_id": stream, "direct": cfg.direct}),
                  flush=True)  # fmt: skip

    try:
        stats = run_writer(cfg, args.journal, stop=stop, duration_s=args.duration,
                           on_ready=ready if args.print_stats else None)  # fmt: skip
    except IntegrityError as exc:
        print(f"arraybench integrity writer: {exc.one_line()}", file=sys.stderr)
        return 2
    if received:
        word = received[0]
        stats.stopped_by = word if word == "stdin closed" else f"signal {word}"
    tmp = stats_path.with_name(stats_path.name + ".tmp")
    tmp.write_text(json.dumps(stats.to_dict(), indent=1) + "\n")
    os.replace(tmp, stats_path)
    if args.print_stats:  # the reader may be gone (a dead SSH session): the file has them
        with contextlib.suppress(OSError):
            print(json.dumps(stats.to_dict()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
