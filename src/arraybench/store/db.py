"""The results store: one SQLite file per results directory. The only module that speaks SQL."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arraybench.analysis.aggregate import METRIC_NAMES, SCOPES, PointMetrics
from arraybench.errors import StoreError
from arraybench.store.migrations import MIGRATIONS

DB_NAME = "arraybench.db"
METRIC_COLUMNS = [f"{scope}_{name}" for scope in SCOPES for name in METRIC_NAMES]


@dataclass(frozen=True)
class RunRecord:
    id: str
    plan_name: str
    scenario: str
    labels: dict[str, str]
    plan_yaml: str
    folder: str
    scale: float
    status: str
    started: str
    finished: str | None
    total_points: int
    fio_version: str | None
    arraybench_version: str
    host: str
    kernel: str
    targets: list[str]
    latency_bound_us: float
    latency_stat: str


@dataclass(frozen=True)
class PointRecord:
    """One stored point: identity, load level, and every metric column by name."""

    id: int
    run_id: str
    seq: int
    key: str
    workload: str
    family: str
    mix: str
    pattern: str
    bs: int
    read_pct: int
    region: str
    ioengine: str
    unit: str
    workers: int
    iodepth: int
    jobs: int
    targets: str
    folder: str
    started: str
    finished: str
    runtime_s: float
    fio_version: str | None
    usr_cpu: float | None
    sys_cpu: float | None
    devices: int | None  # the step of a device-count ladder, if any
    steady_attained: int | None  # fio's steadystate verdict: 1, 0, or None when not asked
    ended_early: int | None  # 1 when the point stopped before its duration (steady)
    pause_s: float | None  # pause taken after the point (GC rule)
    kernel_iops: float | None  # the kernel's view of the target devices (/proc/diskstats)
    kernel_mbps: float | None
    cpu_busy_pct: float | None  # host CPU busy, % of all CPUs
    hosts: int | None  # how many hosts ran the point together (None: local)
    partial: int | None  # 1 when a host failed and only the others' data is here
    failed_hosts: str | None  # comma-separated names
    start_spread_ms: float | None  # last host's start minus the first's
    metrics: dict[str, float | None]
    scenario: str | None = None  # imported points: the scenario the file name gave
    labels_json: str | None = None  # imported points: JSON object of label -> value

    @property
    def labels(self) -> dict[str, str]:
        return dict(json.loads(self.labels_json)) if self.labels_json else {}

    def metric(self, scope: str, name: str) -> float | None:
        return self.metrics.get(f"{scope}_{name}")

    def throughput(self, scope: str = "total") -> float:
        """IOPS or MB/s, whichever is the unit of this point's series."""
        return self.metric(scope, "iops" if self.unit == "IOPS" else "mbps") or 0.0


@dataclass(frozen=True)
class HostSample:
    t: int  # Unix seconds, same clock as Sample.t
    device: str
    read_iops: float
    write_iops: float
    read_mbps: float
    write_mbps: float
    await_ms: float | None
    util_pct: float


@dataclass(frozen=True)
class CpuSample:
    t: int
    user_pct: float
    system_pct: float
    iowait_pct: float
    busy_pct: float


@dataclass(frozen=True)
class Finding:
    point_id: int | None
    kind: str  # "cliff", "steady", "monitor", ...
    data: dict[str, Any]


@dataclass(frozen=True)
class Sample:
    t: int  # Unix seconds
    read_iops: float | None
    write_iops: float | None
    read_mbps: float | None
    write_mbps: float | None
    read_lat_us: float | None
    write_lat_us: float | None


_POINT_FIELDS = [f for f in PointRecord.__dataclass_fields__ if f not in ("id", "metrics")]


class Store:
    """Owner of `arraybench.db`. Every write is its own committed transaction."""

    def __init__(self, results_dir: Path, create: bool = True) -> None:
        self.path = results_dir / DB_NAME
        if not create and not self.path.exists():
            raise StoreError(
                f"no results store at {self.path}", "run a campaign first or pass --results DIR"
            )
        results_dir.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._migrate()

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _migrate(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise StoreError(
                f"{self.path} was written by a newer arraybench (schema {version})",
                "upgrade arraybench",
            )
        for number in range(version, len(MIGRATIONS)):
            with self._transaction() as db:
                for statement in MIGRATIONS[number].split(";\n"):
                    if statement.strip():
                        db.execute(statement)
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
        del values["labels"], values["targets"]
        columns = ", ".join(values)
        marks = ", ".join(f":{c}" for c in values)
        with self._transaction() as db:
            db.execute(f"INSERT INTO runs ({columns}) VALUES ({marks})", values)

    def set_run_status(self, run_id: str, status: str, finished: str | None) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET status = ?, finished = ? WHERE id = ?", (status, finished, run_id)
            )

    def set_run_fio_version(self, run_id: str, version: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE runs SET fio_version = ? WHERE id = ?", (version, run_id))

    def get_run(self, run_id: str) -> RunRecord:
        row = self._db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise StoreError(
                f"no run {run_id!r} in {self.path}", "list runs with `arraybench runs`"
            )
        return _run_record(row)

    def list_runs(self) -> list[tuple[RunRecord, int]]:
        rows = self._db.execute(
            "SELECT runs.*, (SELECT COUNT(*) FROM points WHERE run_id = runs.id) AS done "
            "FROM runs ORDER BY started"
        ).fetchall()
        return [(_run_record(r), int(r["done"])) for r in rows]

    # points -------------------------------------------------------------------------------
    def add_point(
        self,
        record: dict[str, Any],
        metrics: PointMetrics,
        samples: Sequence[Sample],
        host: Sequence[HostSample] = (),
        cpu: Sequence[CpuSample] = (),
        findings: Sequence[Finding] = (),
    ) -> int:
        """Store a completed point with everything measured beside it: all or nothing."""
        values = {f: record.get(f) for f in _POINT_FIELDS} | metrics.as_dict()
        columns = ", ".join(values)
        marks = ", ".join(f":{c}" for c in values)
        with self._transaction() as db:
            cursor = db.execute(f"INSERT INTO points ({columns}) VALUES ({marks})", values)
            point_id = int(cursor.lastrowid or 0)
            rows = {"samples": samples, "host_samples": host, "cpu_samples": cpu}
            for table, items in rows.items():
                if items:
                    width = len(items[0].__dict__) + 1
                    db.executemany(
                        f"INSERT INTO {table} VALUES ({', '.join('?' * width)})",
                        [(point_id, *item.__dict__.values()) for item in items],
                    )
            db.executemany(
                "INSERT INTO findings (run_id, point_id, kind, data_json) VALUES (?, ?, ?, ?)",
                [(record["run_id"], point_id, f.kind, json.dumps(f.data)) for f in findings],
            )
        return point_id

    def add_finding(self, run_id: str, kind: str, data: dict[str, Any]) -> None:
        """A finding about the run as a whole (purge, preconditioning, rounds)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO findings (run_id, point_id, kind, data_json) VALUES (?, NULL, ?, ?)",
                (run_id, kind, json.dumps(data)),
            )

    def findings(self, run_id: str, kind: str | None = None) -> list[Finding]:
        rows = self._db.execute(
            "SELECT point_id, kind, data_json FROM findings WHERE run_id = ? "
            "AND (? IS NULL OR kind = ?) ORDER BY id",
            (run_id, kind, kind),
        )
        return [Finding(r["point_id"], r["kind"], json.loads(r["data_json"])) for r in rows]

    def host_samples(self, point_id: int) -> list[HostSample]:
        rows = self._db.execute(
            "SELECT * FROM host_samples WHERE point_id = ? ORDER BY t, device", (point_id,)
        )
        return [HostSample(*tuple(r)[1:]) for r in rows]

    def host_totals(self, point_id: int, mbps: bool) -> dict[int, float]:
        """Per second, read + write summed over the point's devices (MB/s, else IOPS).

        The same sums, in the same order, as adding up `host_samples(point_id)` row by row, but
        without a HostSample per row: a 10-hour point on 8 hosts has 288,000 of them."""
        value = "read_mbps + write_mbps" if mbps else "read_iops + write_iops"
        rows = self._db.execute(
            f"SELECT t, {value} FROM host_samples WHERE point_id = ? ORDER BY t, device",
            (point_id,),
        )
        rows.row_factory = None  # plain tuples
        per_t: dict[int, float] = {}
        for t, v in rows:
            per_t[t] = per_t.get(t, 0.0) + v
        return per_t

    def cpu_samples(self, point_id: int) -> list[CpuSample]:
        rows = self._db.execute(
            "SELECT * FROM cpu_samples WHERE point_id = ? ORDER BY t", (point_id,)
        )
        return [CpuSample(*tuple(r)[1:]) for r in rows]

    def completed_keys(self, run_id: str) -> set[str]:
        rows = self._db.execute("SELECT key FROM points WHERE run_id = ?", (run_id,))
        return {r["key"] for r in rows}

    def points(self, run_id: str) -> list[PointRecord]:
        rows = self._db.execute("SELECT * FROM points WHERE run_id = ? ORDER BY seq", (run_id,))
        return [_point_record(r) for r in rows]

    def point(self, run_id: str, key: str) -> PointRecord | None:
        row = self._db.execute(
            "SELECT * FROM points WHERE run_id = ? AND key = ?", (run_id, key)
        ).fetchone()
        return _point_record(row) if row else None

    def samples(self, point_id: int) -> list[Sample]:
        rows = self._db.execute(
            "SELECT * FROM samples WHERE point_id = ? ORDER BY t", (point_id,)
        ).fetchall()
        return [Sample(*tuple(r)[1:]) for r in rows]


def _run_record(row: sqlite3.Row) -> RunRecord:
    skip = ("labels_json", "targets_json", "done")
    data = {k: row[k] for k in row.keys() if k not in skip}  # noqa: SIM118 (Row iterates values)
    return RunRecord(
        **data, labels=json.loads(row["labels_json"]), targets=json.loads(row["targets_json"])
    )


def _point_record(row: sqlite3.Row) -> PointRecord:
    base = {f: row[f] for f in _POINT_FIELDS}
    return PointRecord(id=row["id"], **base, metrics={c: row[c] for c in METRIC_COLUMNS})
