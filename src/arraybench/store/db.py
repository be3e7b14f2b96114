"""The results store: one SQLite file per results directory. The only module that speaks SQL."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import sqlite3
import stat
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import fields
from pathlib import Path
from typing import Any, Protocol

from arraybench.errors import RunLockedError, StoreError, StoreMachineError, utf8_safe
from arraybench.finding_kinds import check_finding
from arraybench.point_identity import from_key
from arraybench.records import (
    INJECTION_APPLYING,
    INJECTION_REVERT_FAILED,
    INJECTION_REVERTED,
    INJECTION_UNDONE_BY_HAND,
    CpuSample,
    Finding,
    HostSample,
    InjectionRow,
    NewPoint,
    PointRecord,
    RunRecord,
    Sample,
)
from arraybench.store import rows
from arraybench.store.migrations import MIGRATIONS
from arraybench.system.procs import pid_alive

# the records are imported from here by name too (``from arraybench.store.db import Sample``)
__all__ = [
    "CpuSample",
    "Finding",
    "HostSample",
    "InjectionRow",
    "NewPoint",
    "PointRecord",
    "RunRecord",
    "Sample",
    "Store",
    "store_error",
]

DB_NAME = "arraybench.db"
BUSY_S = 30.0  # how long a statement waits for another process's transaction
LOCK_NAME = ".arraybench.lock"  # in a run's folder, held by the process running it
LOCK_WAIT_S = 2.0  # a dead holder's child may keep the lock until its exec: waited for
# a point's metric columns, as migration 1 made them: the store's own schema, not imported
# from analysis (the lower layer); tests/unit/test_store.py checks that analysis's
# PointMetrics.as_dict() gives exactly these names
_METRIC_SCOPES = ("read", "write", "total")
_METRIC_NAMES = ("ios", "bytes", "iops", "mbps", "lat_mean_us", "lat_p50_us", "lat_p99_us",
                 "lat_p999_us", "lat_max_us")  # fmt: skip
METRIC_COLUMNS = [f"{scope}_{name}" for scope in _METRIC_SCOPES for name in _METRIC_NAMES]
_POINT_FIELDS = [f.name for f in fields(NewPoint) if f.name != "identity"]
IDENTITY_MIGRATION = 6  # the migration that gave a point's identity its columns


class PointValues(Protocol):
    """A point's metrics by column name (analysis/aggregate.py's PointMetrics is one)."""

    def as_dict(self) -> dict[str, float | int | None]: ...


class Store:
    """Owner of `arraybench.db`. Every write is its own committed transaction, except inside
    `atomic()`, where the writes join one."""

    _atomic = False  # inside atomic(): each write joins its transaction

    def __init__(self, results_dir: Path, create: bool = True) -> None:
        self.path = results_dir / DB_NAME
        self._locks: dict[str, int] = {}  # run id -> the open lock file
        if results_dir.exists() and not results_dir.is_dir():
            raise StoreError(f"results path {results_dir} is a file, not a directory",
                             "pass --results DIR naming a directory (new or existing)")  # fmt: skip
        if self.path.is_dir():
            raise StoreError(f"results store {self.path} is a directory, not a file",
                             "move it aside or pass another --results DIR")  # fmt: skip
        if not create and not self.path.exists():
            raise StoreError(
                f"no results store at {self.path}", "run a campaign first or pass --results DIR"
            )
        if not create and _read_only_fs(results_dir):
            self._open_read_only()
            return
        results_dir.mkdir(parents=True, exist_ok=True)
        self._db = _Connection(self.path)
        self._identity = _identity(self.path)
        # a new file switched to WAL by two processes at once: SQLite answers "locked" at once,
        # without waiting as it does for statements
        self._db.execute_when_free("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._migrate()

    def _open_read_only(self) -> None:
        """A store on read-only media (an archive, a read-only mount) can still be listed,
        shown and reported on. SQLite cannot make the WAL's shared-memory file there, so the
        file is opened as immutable: nobody can write it while we read."""
        self._db = _Connection(self.path, immutable=True)
        self._identity = _identity(self.path)
        self._check_version(self.schema_version)
        if self.schema_version < len(MIGRATIONS):
            raise StoreError(f"{self.path} needs an upgrade of its schema but is read-only",
                             "copy the results folder to a writable place")  # fmt: skip

    def close(self) -> None:
        for fd in self._locks.values():
            os.close(fd)  # closing the file releases its lock
        self._locks.clear()
        self._db.close()

    def lock_run(self, run_id: str) -> None:
        """Hold this run for this process until it ends: a second process running the same
        run (`--resume` twice) is refused instead of racing the first on the same files. The
        kernel drops the lock when the process dies, however it dies."""
        if run_id in self._locks:
            return
        folder = self.path.parent / "runs" / run_id
        folder.mkdir(parents=True, exist_ok=True)
        fd = _open_lock(folder / LOCK_NAME)
        try:
            _flock_soon(fd)
        except BlockingIOError:
            holder = _holder(fd) or "?"
            os.close(fd)
            raise RunLockedError(
                f"run {run_id} is being run by another arraybench process (pid {holder})",
                "wait for it to end or stop it, then `arraybench run --resume` it",
            ) from None
        except OSError:  # a filesystem without locks (some network mounts): run unguarded
            pass
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._locks[run_id] = fd

    def check_identity(self) -> None:
        """StoreMachineError when the file at the store's path is no longer the one opened: it
        was deleted or replaced (by garbage, another store) while this process had it open,
        and what it writes would go to an unlinked file. Called before every write, and by
        the run before each point."""
        now = _identity(self.path)
        if now != self._identity:
            what = "deleted" if now is None else "replaced by another file"
            raise StoreMachineError(
                f"results store {_shown(self.path)} was {what} while arraybench had it open; "
                "what was measured since cannot be stored there",
                "put the store back (or move the new file aside), then `arraybench run "
                "--resume` the run",
            )

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """The writes inside as ONE transaction: all stored, or none (an import: a failure
        half-way must leave no run behind)."""
        with self._transaction():
            self._atomic = True
            try:
                yield
            finally:
                self._atomic = False

    @contextmanager
    def _transaction(self, kind: str = "IMMEDIATE") -> Iterator[_Connection]:
        self.check_identity()
        if self._atomic:
            yield self._db
            return
        self._db.execute(f"BEGIN {kind}")
        try:
            yield self._db
            self._db.execute("COMMIT")  # a full disk fails here: roll back, leave no transaction
        except BaseException:
            self._db.rollback()
            raise

    def _check_version(self, version: int) -> None:
        if version > len(MIGRATIONS):
            raise StoreError(
                f"{self.path} was written by a newer arraybench (schema {version})",
                "upgrade arraybench",
            )

    def _migrate(self) -> None:
        """All pending migrations in one exclusive transaction, the version read again inside
        it: two processes opening a new store at once must not both run migration 1."""
        self._check_version(self.schema_version)
        if self.schema_version == len(MIGRATIONS):
            return
        with self._transaction("EXCLUSIVE") as db:
            version = self.schema_version
            self._check_version(version)
            for number in range(version, len(MIGRATIONS)):
                for statement in MIGRATIONS[number].split(";\n"):
                    if statement.strip():
                        db.execute(statement)
                if number + 1 == IDENTITY_MIGRATION:
                    _fill_identity(db)
                db.execute(f"PRAGMA user_version={number + 1}")

    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    # runs ---------------------------------------------------------------------------------
    def create_run(self, run: RunRecord) -> None:
        values = run.__dict__ | {
            "labels_json": json.dumps(run.labels),
            "targets_json": json.dumps(run.targets),
        }
        del values["labels"], values["targets"], values["damaged"]
        columns = ", ".join(values)
        marks = ", ".join(f":{c}" for c in values)
        with self._transaction() as db:
            db.execute(f"INSERT INTO runs ({columns}) VALUES ({marks})", values)

    def set_run_status(self, run_id: str, status: str, finished: str | None) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET status = ?, finished = ? WHERE id = ?", (status, finished, run_id)
            )

    def set_run_engine_version(self, run_id: str, version: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE runs SET engine_version = ? WHERE id = ?", (version, run_id))

    def get_run(self, run_id: str) -> RunRecord:
        row = self._db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise StoreError(
                f"no run {run_id!r} in {self.path}", "list runs with `arraybench runs`"
            )
        return rows.intact(rows.run_record(row, self.path.parent))

    def list_runs(self) -> list[tuple[RunRecord, int]]:
        found = self._db.execute(
            "SELECT runs.*, (SELECT COUNT(*) FROM points WHERE run_id = runs.id) AS done "
            "FROM runs ORDER BY started"
        ).fetchall()
        return [(rows.run_record(r, self.path.parent), int(r["done"])) for r in found]

    # points -------------------------------------------------------------------------------
    def add_point(
        self,
        point: NewPoint,
        metrics: PointValues,
        samples: Sequence[Sample],
        host: Sequence[HostSample] = (),
        cpu: Sequence[CpuSample] = (),
        findings: Sequence[Finding] = (),
    ) -> int:
        """Store a completed point with everything measured beside it: all or nothing."""
        if not isinstance(point, NewPoint):  # a dict would let a misspelt key store NULL
            raise TypeError(f"add_point takes a NewPoint, not {type(point).__name__}")
        for f in findings:  # before the transaction: a bad finding stores nothing
            check_finding(f.kind, f.data)
        values = {f: getattr(point, f) for f in _POINT_FIELDS} | metrics.as_dict()
        values |= rows.identity_columns(point.identity)
        columns = ", ".join(values)
        marks = ", ".join(f":{c}" for c in values)
        with self._transaction() as db:
            cursor = db.execute(f"INSERT INTO points ({columns}) VALUES ({marks})", values)
            point_id = int(cursor.lastrowid or 0)
            beside = {"samples": samples, "host_samples": host, "cpu_samples": cpu}
            for table, items in beside.items():
                if items:
                    width = len(items[0].__dict__) + 1
                    db.executemany(
                        f"INSERT INTO {table} VALUES ({', '.join('?' * width)})",
                        [(point_id, *item.__dict__.values()) for item in items],
                    )
            db.executemany(
                "INSERT INTO findings (run_id, point_id, kind, data_json) VALUES (?, ?, ?, ?)",
                [(point.run_id, point_id, f.kind, json.dumps(f.data)) for f in findings],
            )
        return point_id

    def add_report_files(
        self, point_id: int, bins: Mapping[int, int] | None, job_files: Mapping[str, str]
    ) -> None:
        """What a report reads of a stored point's folder: its merged latency bins
        (analysis/aggregate.py job_bins; None: it has none) and its job files (name -> text)."""
        binned = [(point_id, ns, n) for ns, n in sorted((bins or {}).items())]
        files = [(point_id, name, text) for name, text in job_files.items()]
        with self._transaction() as db:
            db.executemany("INSERT INTO latency_bins VALUES (?, ?, ?)", binned)
            db.executemany("INSERT INTO job_files VALUES (?, ?, ?)", files)

    def latency_bins(self, point_id: int) -> dict[int, int]:
        """The point's latency bins (ns -> count) as stored with it; empty: none stored."""
        rows = self._db.execute(
            "SELECT ns, count FROM latency_bins WHERE point_id = ? ORDER BY ns", (point_id,)
        )
        return {ns: n for ns, n in rows}

    def job_files(self, run_id: str) -> dict[int, dict[str, str]]:
        """Point id -> its job files (name -> text, in the order stored), for the run's points
        that have them stored."""
        found: dict[int, dict[str, str]] = {}
        for point_id, name, text in self._db.execute(
            "SELECT f.point_id, f.name, f.text FROM job_files f JOIN points p "
            "ON p.id = f.point_id WHERE p.run_id = ? ORDER BY f.point_id, f.rowid",
            (run_id,),
        ):
            found.setdefault(point_id, {})[name] = text
        return found

    def add_finding(self, run_id: str, finding: Finding) -> None:
        """A finding about the run as a whole (purge, preconditioning, rounds): built by its
        kind (`PURGE.new({...})`, finding_kinds.py), its keys checked against the kind's."""
        check_finding(finding.kind, finding.data)
        with self._transaction() as db:
            db.execute(
                "INSERT INTO findings (run_id, point_id, kind, data_json) VALUES (?, NULL, ?, ?)",
                (run_id, finding.kind, json.dumps(finding.data)),
            )

    def findings(self, run_id: str, kind: str | None = None) -> list[Finding]:
        found = self._db.execute(
            "SELECT id, point_id, kind, data_json FROM findings WHERE run_id = ? "
            "AND (? IS NULL OR kind = ?) ORDER BY id",
            (run_id, kind, kind),
        )
        return [rows.finding(r, run_id) for r in found]

    def host_samples(self, point_id: int) -> list[HostSample]:
        return self._sample_rows("host_samples", HostSample, point_id, "t, device")

    def _sample_rows(self, table: str, build: type, point_id: int, order: str) -> list[Any]:
        """A point's rows of a samples table as `build` records. Their types are checked by
        SQLite (`typeof`, in C: a long point has hundreds of thousands of rows) before any is
        built; one that is not what its column holds ends in DamagedStoreError."""
        bad = self._db.execute(f"SELECT * FROM {table} WHERE point_id = ? AND "
                               f"({rows.sample_types_wrong(build)}) LIMIT 1",
                               (point_id,)).fetchone()  # fmt: skip
        if bad is not None:
            raise rows.damaged_sample(bad, build, f"point {point_id}")
        cursor = self._db.execute(f"SELECT * FROM {table} WHERE point_id = ? ORDER BY {order}",
                                  (point_id,))  # fmt: skip
        cursor.row_factory = None  # plain tuples
        return [build(*row[1:]) for row in cursor]

    def host_totals(self, point_id: int, mbps: bool) -> dict[int, float]:
        """Per second, read + write summed over the point's devices (MB/s, else IOPS).

        The same sums, in the same order, as adding up `host_samples(point_id)` row by row, but
        without a HostSample per row: a 10-hour point on 8 hosts has 288,000 of them."""
        value = "read_mbps + write_mbps" if mbps else "read_iops + write_iops"
        cursor = self._db.execute(
            f"SELECT t, {value} FROM host_samples WHERE point_id = ? ORDER BY t, device",
            (point_id,),
        )
        cursor.row_factory = None  # plain tuples
        per_t: dict[int, float] = {}
        for t, v in cursor:
            if type(t) is not int or not (v is None or type(v) in (int, float)):  # hot: inline
                raise rows.DamagedStoreError(
                    f"point {point_id}: a stored host sample ({t!r}, {v!r}) cannot be read",
                    rows.HINT,
                )
            per_t[t] = per_t.get(t, 0.0) + (v or 0.0)
        return per_t

    def cpu_samples(self, point_id: int) -> list[CpuSample]:
        return self._sample_rows("cpu_samples", CpuSample, point_id, "t")

    def completed_keys(self, run_id: str) -> set[str]:
        found = self._db.execute("SELECT key FROM points WHERE run_id = ?", (run_id,))
        return {r["key"] for r in found}

    def points(self, run_id: str) -> list[PointRecord]:
        found = self._db.execute("SELECT * FROM points WHERE run_id = ? ORDER BY seq", (run_id,))
        return [self._point_record(r) for r in found]

    def point(self, run_id: str, key: str) -> PointRecord | None:
        row = self._db.execute(
            "SELECT * FROM points WHERE run_id = ? AND key = ?", (run_id, key)
        ).fetchone()
        return self._point_record(row) if row else None

    def samples(self, point_id: int) -> list[Sample]:
        return self._sample_rows("samples", Sample, point_id, "t")

    def _point_record(self, row: sqlite3.Row) -> PointRecord:
        return rows.point_record(row, self.path.parent, METRIC_COLUMNS)

    # injections ---------------------------------------------------------------------------
    def add_injection(
        self, run_id: str, point_key: str, kind: str, label: str, host: str,
        reach: dict[str, Any], undo: dict[str, Any], created: str,
    ) -> int:  # fmt: skip
        """Journal an injection before it is applied (committed, on disk: SIGKILL may follow)."""
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO injections (run_id, point_key, kind, label, host, reach_json, "
                "undo_json, state, created, owner_pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, point_key, kind, label, host, json.dumps(reach), json.dumps(undo),
                 INJECTION_APPLYING, created, os.getpid()),
            )  # fmt: skip
            return int(cursor.lastrowid or 0)

    def update_injection(self, entry: int, undo: dict[str, Any]) -> None:
        """Merge what the apply learned into the entry's undo data."""
        with self._transaction() as db:
            row = db.execute("SELECT undo_json FROM injections WHERE id = ?", (entry,)).fetchone()
            if row is not None:
                merged = json.loads(row["undo_json"]) | undo
                db.execute("UPDATE injections SET undo_json = ? WHERE id = ?",
                           (json.dumps(merged), entry))  # fmt: skip

    def injection_reverted(self, entry: int, when: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE injections SET state = ?, reverted = ? WHERE id = ?",
                       (INJECTION_REVERTED, when, entry))  # fmt: skip

    def mark_reverts_failed(self, run_id: str, owner_pid: int) -> None:
        """A run's process, its points ended (completed, failed or interrupted) and every
        revert tried: the entries it journaled and still pending failed to revert. Marked so:
        `revert` and the next run say it as it was (not a killed controller's)."""
        with self._transaction() as db:
            db.execute(
                "UPDATE injections SET state = ? WHERE run_id = ? AND state = ? AND owner_pid = ?",
                (INJECTION_REVERT_FAILED, run_id, INJECTION_APPLYING, owner_pid),
            )

    def injections_revert_failed(self, run_id: str) -> list[InjectionRow]:
        """The run's entries whose revert failed and that are still pending."""
        return [r for r in self.pending_injections(run_id) if r.state == INJECTION_REVERT_FAILED]

    def injection_undone_by_hand(self, entry: int, when: str) -> InjectionRow | None:
        """`revert --mark-undone ENTRY`: the user undid it; nothing is run. The entry as it
        was, or None when no pending entry has that id."""
        pending = [r for r in self.pending_injections() if r.id == entry]
        if not pending:
            return None
        with self._transaction() as db:
            db.execute("UPDATE injections SET state = ?, reverted = ? WHERE id = ?",
                       (INJECTION_UNDONE_BY_HAND, when, entry))  # fmt: skip
        return pending[0]

    def pending_injections(self, run_id: str | None = None) -> list[InjectionRow]:
        """Injections not marked reverted nor undone by hand (of one run, or of all), oldest
        first."""
        found = self._db.execute(
            "SELECT * FROM injections WHERE state NOT IN (?, ?) AND (? IS NULL OR run_id = ?) "
            "ORDER BY id", (INJECTION_REVERTED, INJECTION_UNDONE_BY_HAND, run_id, run_id),
        )  # fmt: skip
        return [rows.injection_row(r) for r in found]

    def run_locked_by_other(self, run_id: str) -> int | None:
        """The pid of another live process holding the run's lock (running it), else None."""
        if run_id in self._locks:
            return None
        path = self.path.parent / "runs" / run_id / LOCK_NAME
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:  # none, or a link planted there: no run's lock (FIFO: not waited on)
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            return int(holder) if holder.isdigit() else -1
        except OSError:
            return None
        finally:
            os.close(fd)
        return None


_LOCK_HINT = "remove what is there; arraybench makes the file itself"


def _flock_soon(fd: int) -> None:
    """The run's lock; BlockingIOError when another process holds it. A run killed while it
    started a process leaves the lock to that child until its exec closes it (CLOEXEC): when
    the pid written in the file is gone, the lock is waited for (LOCK_WAIT_S), not refused
    (a resume right after the kill was, in CI)."""
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if _holder_alive(fd) or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


def _holder(fd: int) -> str:
    """The pid the lock's holder wrote in the file ("" before it has)."""
    return os.pread(fd, 32, 0).decode(errors="replace").strip()


def _holder_alive(fd: int) -> bool:
    text = _holder(fd)
    # no pid written yet: a process is taking the lock now
    return not text.isdigit() or pid_alive(int(text))


def _open_lock(path: Path) -> int:
    """The run's lock file opened to write its holder's pid: never through a link planted at
    its name (it would truncate the link's target), and a regular file."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     0o644)  # fmt: skip
    except OSError as exc:
        why = "a symbolic link" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        raise StoreError(f"{path}: cannot open the run's lock file ({why})", _LOCK_HINT) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise StoreError(f"{path}: the run's lock file is no regular file", _LOCK_HINT)
    return fd


def _fill_identity(db: _Connection) -> None:
    """Rows stored before migration 6: their identity columns from their keys, read back by
    the one module that may (point_identity), in the migration's transaction."""
    found = db.execute("SELECT id, key, workload, scenario FROM points").fetchall()
    filled = []
    for row_id, key, workload, scenario in found:
        if isinstance(key, str) and isinstance(workload, str):
            scenario = scenario if isinstance(scenario, str) else None
            filled.append({"id": row_id} | rows.identity_columns(from_key(key, workload, scenario)))
    if filled:
        db.executemany("UPDATE points SET level = :level, round = :round, repetition = "
                       ":repetition, plan_scenario = :plan_scenario WHERE id = :id",
                       filled)  # fmt: skip


def _storable(value: object) -> object:
    """A path with a byte that is not UTF-8 (a surrogate escape) cannot be SQLite text: stored
    with that byte written as `\\xNN`. Stored folders are rebuilt from where the store is
    (store.rows.relocated), so nothing is read back through the escaped text."""
    return utf8_safe(value) if isinstance(value, str) else value


def _identity(path: Path) -> tuple[int, int] | None:
    """The file's device and inode; None when it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _shown(path: Path) -> str:
    """A path for a message: a byte that is not UTF-8 shown escaped, never an encode error."""
    return utf8_safe(str(path))


def store_error(exc: sqlite3.Error, path: Path) -> StoreError:
    """SQLite's words for a failure -> one line naming the store and what to do."""
    text = str(exc)
    if "disk I/O error" in text and _truncated(path):
        text = "file is truncated"
    if "disk I/O error" in text and _no_space(path.parent):
        text = "database or disk is full"
    if "not a database" in text or "malformed" in text or "truncated" in text:
        return StoreError(f"{path} is not a usable arraybench store ({text})",
                          "move the file aside or pass another --results DIR")  # fmt: skip
    if "full" in text:
        return StoreMachineError(f"results store {path}: the filesystem is full ({text})",
                                 "free space there or pass another --results DIR")  # fmt: skip
    if "disk I/O error" in text:
        return StoreMachineError(f"results store {path}: {text}",
                                 "check the disk (dmesg) and its free space, or pass another "
                                 "--results DIR")  # fmt: skip
    if "readonly" in text or "unable to open" in text:
        return StoreError(f"results store {path}: {text} (read-only or not writable?)",
                          "pass --results DIR on a writable filesystem")  # fmt: skip
    if "locked" in text or "busy" in text:
        return StoreMachineError(f"results store {path}: {text}",
                                 "another process holds it; try again when it is done")  # fmt: skip
    return StoreMachineError(f"results store {path}: {text}", "check the file and its disk")


def _truncated(path: Path) -> bool:
    """Shorter than its header's page size x page count says: SQLite reads past the end and
    calls that a disk I/O error."""
    try:
        with open(path, "rb") as f:
            header = f.read(100)
            size = os.fstat(f.fileno()).st_size
    except OSError:
        return False
    if len(header) < 100 or not header.startswith(b"SQLite format 3\0"):
        return False
    page = int.from_bytes(header[16:18], "big")
    page = 65536 if page == 1 else page
    return size < page * int.from_bytes(header[28:32], "big")


def _read_only_fs(folder: Path) -> bool:
    """Mounted read-only: nobody can change the store there (a folder we may not write on a
    writable filesystem is not that: its owner may be writing it)."""
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _no_space(folder: Path) -> bool:
    try:
        return os.statvfs(folder).f_bavail == 0
    except OSError:
        return False


class _Connection:
    """The SQLite connection, every failure raised as a StoreError naming the file."""

    def __init__(self, path: Path, immutable: bool = False) -> None:
        self.path = path
        where: str | Path = f"{path.resolve().as_uri()}?immutable=1" if immutable else path
        try:
            self._conn = sqlite3.connect(where, timeout=BUSY_S, isolation_level=None,
                                         uri=immutable)  # fmt: skip
        except sqlite3.Error as exc:
            raise store_error(exc, path) from None
        self._conn.row_factory = sqlite3.Row
        # text a hand edit left that is not UTF-8: read with the bad bytes shown escaped
        self._conn.text_factory = lambda data: data.decode("utf-8", "backslashreplace")

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        if isinstance(params, dict):
            params = {k: _storable(v) for k, v in params.items()}
        else:
            params = [_storable(v) for v in params]
        try:
            return self._conn.execute(sql, params)
        except sqlite3.IntegrityError:
            raise  # a constraint says the caller's data is wrong: not a failure of the file
        except sqlite3.Error as exc:
            raise store_error(exc, self.path) from None

    def execute_when_free(self, sql: str) -> None:
        """`sql`, tried again while another connection holds the file, up to BUSY_S."""
        deadline = time.monotonic() + BUSY_S
        while True:
            try:
                self._conn.execute(sql)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise store_error(exc, self.path) from None
            time.sleep(0.02)

    def executemany(
        self, sql: str, rows: Sequence[Sequence[Any]] | Sequence[dict[str, Any]]
    ) -> sqlite3.Cursor:
        try:
            return self._conn.executemany(sql, rows)
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            raise store_error(exc, self.path) from None

    def rollback(self) -> None:
        """After a failed statement: a full or broken disk may already have ended it."""
        if self._conn.in_transaction:
            with suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")

    def close(self) -> None:
        self._conn.close()
