"""Every built-in methodology runs end to end at a small --scale, on files, as a user runs it.

The templates' expansion, order, tables and figures are the subject: those run on the test
engine (tests/fake_engine.py) and their figures are its model's. The fio-only parts (dbi-db's
interference, cscs's metadata) run real fio and are checked against fio's own totals.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import main_cli, needs_fio
from tests.crosscheck import assert_point_matches_fio
from tests.fake_engine import VERSION, assert_point_matches_model

on_fake = pytest.mark.usefixtures("fake_engine")
FAKE = ("--set", "engine=fake", "--set", "monitor=false")  # tests/fake_engine.py's PLAN_LINES


def _run(tmp_path: Path, *args: str) -> tuple[str, dict, str]:
    results = tmp_path / "res"
    targets = []
    for name in ("lun1.dat", "lun2.dat"):
        targets += ["--target", str(tmp_path / name)]
    done = main_cli("run", *args, *targets, "--results", str(results))
    assert done.returncode == 0, done.stderr
    runs = json.loads(main_cli("runs", "--results", str(results), "--format", "json").stdout)
    shown = main_cli("show", runs[0]["id"], "--results", str(results), "--format", "json")
    report = Path(done.stdout.split("HTML report:")[1].strip()).read_text()
    return done.stdout, json.loads(shown.stdout), report


def _job(point: dict) -> dict:
    return dict(json.loads((Path(point["folder"]) / "point.fake").read_text()))


def _check_model(points: list[dict]) -> None:
    assert points and {p["engine_version"] for p in points} == {VERSION}
    for point in points:
        assert_point_matches_model(point)


def _check_numbers(points: list[dict]) -> None:
    for point in points:
        metrics = {k: v for k, v in point.items() if k.startswith(("read_", "write_", "total_"))}
        metrics.pop("read_pct")
        assert_point_matches_fio(metrics, Path(point["folder"]) / "fio.json")


@on_fake
def test_inout_four_tables_frontend_backend_and_fabric_ceiling(tmp_path: Path):
    out, shown, report = _run(tmp_path, "inout", "--scale", "0.01", "--set", "load.workers=[1, 4]",
                              "--set", "fabric.links=['2 x FC 16G']", *FAKE)  # fmt: skip
    points = shown["points"]
    assert len(points) == 12 * 2
    for table in ("a. Frontend random 8 KiB", "b. Backend random 8 KiB",
                  "c. Frontend sequential 128 KiB", "d. Backend sequential 128 KiB"):  # fmt: skip
        assert table in out and table in report
    assert "R/W 50/50" in out and "of theoretical" in out
    # frontend: the first 1000 blocks of each of the 2 targets (test_frontend_region: fio's)
    frontend, backend = _job(points[0]), _job(points[6])
    assert (frontend["region"], frontend["frontend_blocks"], backend["region"]) == (
        "frontend", 1000, "backend")  # fmt: skip
    assert [Path(t).name for t in frontend["targets"]] == ["lun1.dat", "lun2.dat"]
    assert report.count("theoretical") >= 12
    _check_model(points)


@on_fake
def test_aerodisk_time_series_with_steady_state(tmp_path: Path):
    out, shown, report = _run(tmp_path, "aerodisk", "--scale", "0.002", *FAKE)
    points = shown["points"]
    assert [p["key"] for p in points] == [
        "oltp-4k-rw70/w16-qd32", "seq-128k-write/w16-qd32", "seq-128k-read/w16-qd32",
    ]  # fmt: skip
    assert "Time series" in report and report.count("SNIA steady state over the last") == 3
    assert "Test 1: OLTP random 4 KiB 70/30" in out
    _check_model(points)


@on_fake
def test_dbi_db_devices_by_parallelism(tmp_path: Path):
    out, shown, _report = _run(
        tmp_path,
        "dbi-db",
        "--scale",
        "0.01",
        "--set",
        "load.workers=[1, 5]",
        "--only",
        "randread-8k",
        "--only",
        "write-1m",
        "--set",
        "interference=null",  # its own test is below
        *FAKE,
    )
    points = shown["points"]
    keys = [p["key"] for p in points]
    assert keys == [
        "randread-8k/w1-qd1-d1", "randread-8k/w5-qd1-d1",
        "randread-8k/w1-qd1-d2", "randread-8k/w5-qd1-d2",
        "write-1m/w1-qd1-d1", "write-1m/w5-qd1-d1",
        "write-1m/w1-qd1-d2", "write-1m/w5-qd1-d2",
    ]  # fmt: skip
    two = _job(points[3])
    assert two["jobs"] == 10 and len(two["targets"]) == 2  # per_target: 5 jobs on each device
    assert points[3]["jobs"] == 10 and points[3]["devices"] == 2
    assert "2 devices" in out and "1 device" in out
    _check_model(points)


@on_fake
def test_hus_fmd_cliff_group_then_profiles_with_gc_pauses(tmp_path: Path):
    out, shown, report = _run(tmp_path, "hus-fmd", "--scale", "0.0002", "--only", "g1-cliff-4k",
                              "--only", "g2-rw70-*-8k", "--set", "load.workers=[1, 4]",
                              "--set", "gc_throughput=1g", *FAKE)  # fmt: skip
    points = shown["points"]
    assert [p["key"] for p in points][:3] == [
        "g1-cliff-4k/w64-qd64", "g2-rw70-sync-8k/w1-qd1", "g2-rw70-sync-8k/w4-qd1",
    ]  # fmt: skip
    assert len(points) == 7
    for point in points[1:]:  # pause = bytes written by the test / GC throughput (1 GiB/s)
        assert point["pause_s"] == pytest.approx(point["write_bytes"] / (1 << 30))
    assert "pausing" in out
    assert "Group 1: write cliff 4 KiB" in report and "write cliff" in report
    assert _job(points[1])["ioengine"] == "psync"
    # one chart per (mix, engine, depth) with one line per block size
    # the seed's form: IOPS, MB/s and mean latency against numjobs, each its own chart
    for what in ("IOPS", "MB/s", "mean latency"):
        assert f"Group 2: random 70/30, async qd64: {what}: against numjobs" in report
    assert _job(points[-1])["iodepth"] == 64
    _check_model(points)


@on_fake
def test_snia_pts_purge_precondition_rounds_and_window_matrix(tmp_path: Path):
    out, shown, report = _run(tmp_path, "snia-pts", "--only", "iops-4k-*", "--only", "tp-128k-*",
                              "--scale", "0.005", "--set", "rounds.max=4",
                              "--set", "rounds.window=3", *FAKE)  # fmt: skip
    points = shown["points"]
    rounds = sorted({int(p["key"].rsplit("@r", 1)[1]) for p in points})
    assert rounds[0] == 1 and 3 <= rounds[-1] <= 4  # at least one window, at most max
    assert len(points) == 9 * len(rounds)  # 7 IOPS mixes + 2 throughput tests per round
    assert "NOT done (a file cannot be purged" in " ".join(out.split())  # said, not skipped
    assert "preconditioned:" in out and "(2 x capacity)" in out
    assert "SNIA measurement window" in out and "IOPS test 4K" in out
    columns = out[out.index("┃ test") :].splitlines()[0]
    assert columns.index("Read") < columns.index("Write") < columns.index("R/W 95/5")
    assert columns.index("R/W 95/5") < columns.index("R/W 65/35") < columns.index("R/W 5/95")
    assert "SNIA steady state: iops-4k-w per round" in report
    assert ("steady state reached in round" in out) or ("NOT steady after 4 round" in out)
    pre = tmp_path / "res" / "runs"
    (job,) = pre.glob("*/precondition/point.fake")
    assert json.loads(job.read_text())["precondition"] == 2  # 2 x capacity
    _check_model(points)


@needs_fio
@pytest.mark.slow
def test_cscs_metadata_beside_an_iops_workload(tmp_path: Path):
    # one grid workload on fio beside the metadata test (the grid's figure forms: the test
    # engine's, test_seed_figures)
    out, shown, report = _run(tmp_path, "cscs", "--scale", "0.01", "--set", "load.pairs=[[4, 4]]",
                              "--set", "metadata.threads=[1, 2]",
                              "--only", "iops-4k-read")  # fmt: skip
    points = shown["points"]
    keys = [p["key"] for p in points]
    assert keys == ["iops-4k-read/w4-qd4", "metadata/t1", "metadata/t2"]
    assert "Metadata test: operations per second by threads" in out
    for op in ("File creation", "File stat", "File removal"):
        assert op in out and op in report
    meta = [p for p in points if p["pattern"] == "metadata"]
    # 50 files per thread (1000 x 0.01, raised to 50) in each of create, stat and delete
    assert [p["total_ios"] for p in meta] == [3 * 50, 3 * 100]
    assert not list((tmp_path / "res" / "scratch" / "metadata").iterdir())  # all removed
    _check_numbers(points[:1])


@needs_fio
@pytest.mark.slow
def test_dbi_db_mixed_workload_interference(tmp_path: Path):
    out, shown, report = _run(tmp_path, "dbi-db", "--only", "randread-8k", "--scale", "0.01",
                              "--set", "load.workers=[1]", "--set", "load.devices=[1]",
                              "--set", "interference.steps=2",
                              "--set", "interference.base_rate_iops=2000",
                              "--set", "interference.bg_rate_iops=20")  # fmt: skip
    points = shown["points"]
    assert [p["key"] for p in points] == ["randread-8k/w1-qd1-d1", "interference/base+steps"]
    assert "Mixed workload: the base load beside growing background streams" in out
    for window in ("base alone", "base + 1 x 1 MiB", "base + 2 x 1 MiB", "background alone"):
        assert window in out
    assert "the base load tolerates" in out
    assert "Mixed workload: base load IOPS and latency over time" in report
    inter = points[1]
    # the base load is rate-limited to 2000 IOPS in all; the background adds 20 IOPS per step
    assert inter["read_iops"] + inter["write_iops"] < 2000 * 1.1 + 2 * 20
