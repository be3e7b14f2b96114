"""The results store: migrations, one transaction per point, no duplicate points."""

from __future__ import annotations

import dataclasses
import hashlib
import sqlite3
from pathlib import Path

import pytest

from arraybench.analysis.aggregate import DirMetrics, PointMetrics
from arraybench.errors import StoreError
from arraybench.finding_kinds import PURGE, FindingKeyError
from arraybench.point_identity import PointIdentity
from arraybench.store.db import (
    METRIC_COLUMNS,
    CpuSample,
    Finding,
    HostSample,
    NewPoint,
    PointRecord,
    RunRecord,
    Sample,
    Store,
)
from arraybench.store.migrations import MIGRATIONS


def _run(run_id: str = "r1") -> RunRecord:
    return RunRecord(
        id=run_id, plan_name="p", scenario="s", labels={"a": "b"}, plan_yaml="name: p\n",
        folder="/tmp/x", scale=1.0, status="running", started="2026-01-01T00:00:00+00:00",
        finished=None, total_points=2, engine_version=None, arraybench_version="0",
        host="h", kernel="k", targets=["/t"], latency_bound_us=1000.0, latency_stat="mean",
    )  # fmt: skip


def _metrics(iops: float) -> PointMetrics:
    d = DirMetrics(10, 81920, iops, iops * 8192 / 1e6, 100.0, 90.0, 200.0, 300.0, 400.0)
    return PointMetrics(read=d, write=DirMetrics(0, 0, 0, 0, None, None, None, None, None),
                        total=d)  # fmt: skip


def _fields(key: str, seq: int) -> NewPoint:
    return NewPoint(
        run_id="r1", seq=seq, identity=PointIdentity("w", key.removeprefix("w/")),
        family="Random 8 KiB", mix="Read",
        pattern="random", bs=8192, read_pct=100, region="backend", ioengine="libaio",
        unit="IOPS", workers=1, iodepth=1, jobs=1, targets="/t", folder="/tmp/x/p",
        started="a", finished="b", runtime_s=1.0, engine_version="fio-3.33", usr_cpu=1.0,
        sys_cpu=2.0, devices=None, steady_attained=None, ended_early=0, pause_s=0.0,
        kernel_iops=1200.0, kernel_mbps=9.8, cpu_busy_pct=12.5,
    )  # fmt: skip


def test_migrations_apply_once_and_a_newer_store_is_refused(tmp_path: Path):
    store = Store(tmp_path)
    assert store.schema_version == len(MIGRATIONS)
    store.close()
    assert Store(tmp_path).schema_version == len(MIGRATIONS)  # reopening migrates nothing
    with sqlite3.connect(tmp_path / "arraybench.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        db.execute(f"PRAGMA user_version={len(MIGRATIONS) + 1}")
    with pytest.raises(StoreError, match="newer arraybench"):
        Store(tmp_path)


def test_points_round_trip_and_duplicates_are_rejected(tmp_path: Path):
    store = Store(tmp_path)
    store.create_run(_run())
    samples = [Sample(100, 5.0, None, 0.04, None, 90.0, None), Sample(101, 6.0, 0, 0.05, 0, 1, 2)]
    host = [HostSample(100, "sdb", 5.0, 0.0, 0.04, 0.0, 0.2, 50.0)]
    cpu = [CpuSample(100, 10.0, 5.0, 1.0, 16.0)]
    findings = [Finding(None, "cliff", {"found": False, "seconds": 2})]
    point_id = store.add_point(_fields("w/w1-qd1", 1), _metrics(1234.5), samples, host, cpu,
                               findings)  # fmt: skip
    assert store.host_samples(point_id) == host and store.cpu_samples(point_id) == cpu
    assert store.findings("r1") == [Finding(point_id, "cliff", {"found": False, "seconds": 2})]
    assert store.findings("r1", "steady") == []
    assert store.completed_keys("r1") == {"w/w1-qd1"}
    [point] = store.points("r1")
    assert point.metric("total", "iops") == 1234.5 and point.metric("write", "lat_mean_us") is None
    assert point.metric("read", "lat_p999_us") == 300.0
    assert store.samples(point_id) == samples
    with pytest.raises(sqlite3.IntegrityError):
        store.add_point(_fields("w/w1-qd1", 1), _metrics(1.0), [])
    assert len(store.points("r1")) == 1  # the failed insert left nothing behind
    run = store.get_run("r1")
    assert run.labels == {"a": "b"} and run.targets == ["/t"]
    store.set_run_status("r1", "complete", "later")
    assert store.list_runs()[0][0].status == "complete" and store.list_runs()[0][1] == 1


def test_missing_store_and_run_are_user_errors(tmp_path: Path):
    with pytest.raises(StoreError, match="no results store"):
        Store(tmp_path / "nothing", create=False)
    with pytest.raises(StoreError, match="no run 'x'"):
        Store(tmp_path).get_run("x")


def test_a_misspelt_point_field_is_an_error_never_a_null(tmp_path: Path):
    store = Store(tmp_path)
    store.create_run(_run())
    good = dataclasses.asdict(_fields("w/w1-qd1", 1))
    misspelt = {("kernel_iop" if k == "kernel_iops" else k): v for k, v in good.items()}
    with pytest.raises(TypeError, match="kernel_iop"):
        NewPoint(**misspelt)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="kernel_iop"):
        dataclasses.replace(_fields("w/w1-qd1", 1), kernel_iop=5.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="NewPoint"):  # the old dict form: refused, not stored
        store.add_point(misspelt, _metrics(1.0), [])  # type: ignore[arg-type]
    assert store.points("r1") == []
    store.add_point(_fields("w/w1-qd1", 1), _metrics(1.0), [])
    [point] = store.points("r1")
    assert point.kernel_iops == 1200.0 and point.cpu_busy_pct == 12.5


# sha256 of each shipped migration: a store made by an older arraybench has run these texts,
# so they never change (a new one is appended; its hash is added here when it ships)
SHIPPED = [
    "5a917b1ccb699a7102ce8092e9aaa6e67620f807db816c7cfb634e50c2447450",
    "5de1ca51c093221f76461c926d0ef9449386c966278efc2c7a071736eb96a1bc",
    "54f478a3434afd9a31f9bcc857ad4132ce59f8441f513101f0290df5ba6714c6",
    "641c89682144a2d3634a632c656c72eae159ea4b22e1d766fcc97c76b4d7b05b",
    "6ac7fc1a1c59db308770e80c685fc4416f56c529c3b108661e2d7a68a1cf1fae",
    "dd84c2e152fc15cc100f7b04e37ec0e74461b56e9be995a62aa493d8738d7fc4",  # 6: point identity
    "6081e59d83ba4fae5a332b053c6a5b383597ed9ad21302a1ecd63c5086c67094",  # 7: report files
    "2ed68c4404f2285e9a957a30b27e6d2f3a3afb1794ad33dd0095edc98f5b7193",  # 8: engine_version
]


OLD_VERSION_COLUMN = "fio_version"  # the tool's version column before migration 8


def test_a_store_made_before_the_version_column_was_renamed_opens_with_its_versions(
    tmp_path: Path,
):
    """Migration 8 renames the runs' and points' `engine_version` (any tool's version) to
    `engine_version`: a store at schema 7 opens, is migrated, and reads what it held."""
    store = Store(tmp_path)
    store.create_run(dataclasses.replace(_run(), engine_version="mdtest-4.0"))
    store.add_point(_fields("w/w1-qd1", 1), _metrics(100.0), [])
    store.close()
    with sqlite3.connect(tmp_path / "arraybench.db") as db:  # the store as schema 7 made it
        for table in ("runs", "points"):
            db.execute(f"ALTER TABLE {table} RENAME COLUMN engine_version TO {OLD_VERSION_COLUMN}")
        db.execute("PRAGMA user_version=7")
        made = [r[0] for r in db.execute("SELECT sql FROM sqlite_master WHERE name = 'runs'")]
    fresh = sqlite3.connect(":memory:")
    for migration in MIGRATIONS[:7]:
        fresh.executescript(migration)
    assert made == [
        r[0] for r in fresh.execute("SELECT sql FROM sqlite_master WHERE name = 'runs'")
    ]
    store = Store(tmp_path)
    assert store.schema_version == len(MIGRATIONS) == 8
    assert store.get_run("r1").engine_version == "mdtest-4.0"
    assert [p.engine_version for p in store.points("r1")] == ["fio-3.33"]
    columns = {
        r["name"] for t in ("runs", "points") for r in store._db.execute(f"PRAGMA table_info({t})")
    }
    assert "engine_version" in columns and OLD_VERSION_COLUMN not in columns


def test_shipped_migrations_never_change():
    hashes = [hashlib.sha256(m.encode()).hexdigest() for m in MIGRATIONS]
    assert hashes[: len(SHIPPED)] == SHIPPED


def test_the_store_columns_are_the_metrics_analysis_gives():
    """The store writes its metric columns itself (it does not import analysis): they are
    the names analysis's PointMetrics gives, in the same order, and migration 1 makes them."""
    assert list(_metrics(1.0).as_dict()) == METRIC_COLUMNS
    db = sqlite3.connect(":memory:")
    db.executescript(MIGRATIONS[0])
    columns = [row[1] for row in db.execute("PRAGMA table_info(points)")]
    assert [c for c in columns if c in METRIC_COLUMNS] == METRIC_COLUMNS


def test_what_goes_in_is_what_comes_out():
    """Every column of a new point is a field of the stored record, in the same order (its
    identity gives the key and the workload columns)."""
    written = ("id", "metrics", "key", "workload")
    stored = [f.name for f in dataclasses.fields(PointRecord) if f.name not in written]
    assert [f.name for f in dataclasses.fields(NewPoint)] == stored


def test_a_finding_with_a_misspelt_key_is_refused_and_nothing_is_stored(tmp_path: Path):
    store = Store(tmp_path)
    store.create_run(_run())
    bad = Finding(None, "purge", {"target": []})  # `targets`
    with pytest.raises(FindingKeyError, match=r"unknown key.s. target; missing key.s. targets"):
        store.add_finding("r1", bad)
    with pytest.raises(FindingKeyError, match="purge finding"):
        store.add_point(_fields("w/w1-qd1", 1), _metrics(1.0), [], findings=[bad])
    assert store.findings("r1") == [] and store.points("r1") == []
    store.add_finding("r1", PURGE.new({"targets": []}))
    assert PURGE.among(store.findings("r1")) == [{"targets": []}]
