"""Through the library: points, metrics = the engine's totals (fio's on small files; the
fake engine's model where the campaign's order and rules are the subject), samples."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from arraybench.plan.catalog import resolve
from arraybench.run.campaign import Campaign
from arraybench.run.context import Observer
from arraybench.store.db import Store
from tests.conftest import needs_fio, small_plan
from tests.crosscheck import assert_point_matches_fio
from tests.fake_engine import PLAN_LINES, VERSION, assert_point_matches_model


class Recorder(Observer):
    def __init__(self) -> None:
        self.events: list[str] = []

    def campaign_started(self, run, todo, skipped):
        self.events.append(f"start {len(todo)} {skipped}")

    def target_preparing(self, path, size):
        self.events.append(f"prepare {size}")

    def point_started(self, point, index, total):
        self.events.append(f"point {index}/{total}")

    def point_tick(self, point, elapsed_s):
        pass

    def point_finished(self, point, metrics, unit):
        self.events.append(f"done {point.key}")

    def warning(self, text):
        self.events.append(f"warning {text}")

    def pausing(self, point, seconds):
        self.events.append(f"pause {seconds:.3f}")


@pytest.mark.usefixtures("fake_engine")  # the campaign and the store are the subject, not fio
def test_campaign_stores_every_point_with_the_engines_totals(tmp_path: Path):
    plan = resolve(str(small_plan(tmp_path, extra=PLAN_LINES)))
    store = Store(tmp_path / "results")
    recorder = Recorder()
    result = Campaign(store, tmp_path / "results", recorder).start(plan, 1.0)
    assert result.status == "complete" and result.points_run == 4
    assert recorder.events[0] == f"prepare {32 << 20}"
    assert (tmp_path / "target.dat").stat().st_size == 32 << 20
    assert recorder.events[-1] == "done seq-128k-read/w2-qd2"

    points = store.points(result.run_id)
    assert [p.key for p in points] == [
        "rand-8k-rw70/w1-qd2", "rand-8k-rw70/w2-qd2",
        "seq-128k-read/w1-qd2", "seq-128k-read/w2-qd2",
    ]  # fmt: skip
    for point in points:
        assert (Path(point.folder) / "point.fake").exists() and point.jobs == point.workers
        assert_point_matches_model({"folder": point.folder, "key": point.key, **point.metrics})
        [sample] = store.samples(point.id)  # a 1-second point: one second, the point's figure
        assert sample.read_iops == pytest.approx(point.metric("read", "iops"))
    rw = points[1]
    assert rw.metric("total", "iops") == pytest.approx(
        rw.metric("read", "iops") + rw.metric("write", "iops")
    )
    seq = points[2]
    assert seq.metric("write", "ios") == 0 and seq.unit == "MB/s"
    run = store.get_run(result.run_id)
    assert run.status == "complete" and run.engine_version == VERSION
    assert (Path(run.folder) / "plan.yaml").read_text() == run.plan_yaml


@needs_fio
def test_campaign_stores_every_point_with_fio_totals(tmp_path: Path):
    """fio's own totals, per point: one point of each workload (a 70/30 mix, a sequential
    read); the campaign's order and ladder are the fake engine's test above."""
    plan = resolve(str(small_plan(tmp_path, workers="[1]")))
    store = Store(tmp_path / "results")
    began = time.time()
    result = Campaign(store, tmp_path / "results", Recorder()).start(plan, 1.0)
    assert result.status == "complete" and result.points_run == 2
    points = store.points(result.run_id)
    assert [p.key for p in points] == ["rand-8k-rw70/w1-qd2", "seq-128k-read/w1-qd2"]
    for point in points:
        folder = Path(point.folder)
        assert (folder / "point.fio").exists() and (folder / "fio.json").exists()
        assert point.jobs == point.workers
        assert_point_matches_fio(point.metrics, folder / "fio.json")
        samples = store.samples(point.id)
        # 1-second points: fio does not log its last window, so there may be no full second
        assert all(began - 5 <= s.t <= time.time() + 5 for s in samples)  # Unix seconds
    rw, seq = points
    assert rw.metric("read", "iops") > rw.metric("write", "iops") > 0  # 70/30 mix
    assert rw.metric("total", "iops") == pytest.approx(
        rw.metric("read", "iops") + rw.metric("write", "iops")
    )
    assert seq.metric("write", "ios") == 0 and seq.unit == "MB/s"
    run = store.get_run(result.run_id)
    assert run.status == "complete" and run.engine_version and run.engine_version.startswith("fio-")


@needs_fio
def test_sequential_workers_get_their_own_stripes(tmp_path: Path):
    plan = resolve(str(small_plan(tmp_path, workers="[4]", workloads=(
        "  - {name: seq-write, pattern: sequential, bs: 128k, read: 0}\n"
    ))))  # fmt: skip
    store = Store(tmp_path / "r")
    result = Campaign(store, tmp_path / "r", Recorder()).start(plan, 1.0)
    point = store.points(result.run_id)[0]
    jobfile = (Path(point.folder) / "point.fio").read_text()
    assert "offset_increment=8m" in jobfile and "size=8m" in jobfile
    assert point.metric("write", "ios") > 0


@pytest.mark.paced  # steady within 10 % in time to end early
@needs_fio
def test_steady_stop_ends_a_point_early_and_is_recorded(tmp_path: Path):
    plan = resolve(str(small_plan(tmp_path, workers="[1]", workloads=(
        "  - {name: steady-read, pattern: random, bs: 8k, read: 100, analysis: [steady],\n"
        "     timing: {ramp: 0s, duration: 20s, steady: {limit: 90, window: 4s}}}\n"
    ))))  # fmt: skip
    store = Store(tmp_path / "r")
    began = time.monotonic()
    result = Campaign(store, tmp_path / "r", Recorder()).start(plan, 1.0)
    assert time.monotonic() - began < 15  # far less than the 20 s duration
    point = store.points(result.run_id)[0]
    assert point.steady_attained == 1 and point.ended_early == 1
    assert "steadystate=iops:90%" in (Path(point.folder) / "point.fio").read_text()
    [steady] = store.findings(result.run_id, "steady")
    assert steady.point_id == point.id and steady.data["window"] == 5
    samples = store.samples(point.id)
    assert len(samples) >= 2 and [s.t for s in samples] == list(
        range(samples[0].t, samples[-1].t + 1)
    )
    mean = sum(s.read_iops or 0 for s in samples) / len(samples)
    # whole seconds only (every job logged): their mean is the point's rate, no ramp or tail
    assert mean == pytest.approx(point.metric("read", "iops"), rel=0.25)


@pytest.mark.usefixtures("fake_engine")  # the campaign's rules are the subject, not fio
def test_gc_pause_rule_and_device_ladder(tmp_path: Path):
    second = tmp_path / "second.dat"
    plan_path = small_plan(tmp_path, workers="[1]", extra=(
        PLAN_LINES + "gc_throughput: 1g\n"
    ), workloads=(
        "  - {name: w, pattern: random, bs: 8k, read: 0, pause_after: gc, analysis: [cliff],\n"
        "     load: {workers: [1], iodepth: [2], devices: [1, 2]}}\n"
    ))  # fmt: skip
    text = plan_path.read_text().replace(
        "    size: 32m\n", f"    size: 32m\n  - path: {second}\n    size: 16m\n", 1
    )
    plan_path.write_text(text)
    store = Store(tmp_path / "r")
    recorder = Recorder()
    result = Campaign(store, tmp_path / "r", recorder).start(resolve(str(plan_path)), 1.0)
    one, two = store.points(result.run_id)
    assert (one.key, two.key) == ("w/w1-qd2-d1", "w/w1-qd2-d2")
    assert (one.devices, two.devices) == (1, 2)
    assert one.targets == str(tmp_path / "target.dat")
    assert two.targets == f"{tmp_path / 'target.dat'},{second}"
    for point in (one, two):  # HUS VM rule: pause = bytes written / GC throughput
        assert point.pause_s == pytest.approx(point.metric("write", "bytes") / (1 << 30))
        assert point.pause_s > 0
        assert f"pause {point.pause_s:.3f}" in recorder.events
    cliffs = store.findings(result.run_id, "cliff")
    assert len(cliffs) == 2 and all(not c.data["found"] for c in cliffs)


def test_device_ladder_longer_than_the_targets_is_a_plan_error(tmp_path: Path):
    from arraybench.errors import PlanError

    plan = resolve(str(small_plan(tmp_path, extra="", workloads=(
        "  - {name: w, pattern: random, bs: 8k, read: 100, load: {devices: [1, 4]}}\n"
    ))))  # fmt: skip
    with pytest.raises(PlanError, match=r"devices: asks for 4 devices but the plan has 1"):
        Campaign(Store(tmp_path / "r"), tmp_path / "r", Recorder()).start(plan, 1.0)
