"""A logged warm-up (`timing.log_ramp`) on a many-host point: the ramp runs as its own gated
run on both hosts (real fio servers in network namespaces), its seconds are the hosts' sums,
the measured figures are the measured run's alone, the report draws the warm-up shaded and says
how long the load paused before the measured run; a point with events still ramps unlogged."""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.plan.expand import Point
from arraybench.progressbar import ProgressObserver
from tests.conftest import main_cli, needs_fio
from tests.netns import TestHosts, needs_netns, running_hosts, wait_until

pytestmark = [needs_fio, pytest.mark.slow, *needs_netns]

RATE = 1000  # IOPS per host: low enough to hold on a busy machine
LEAD_S = 2.0  # the start gate's lead: the pause between the warm-up and the measured run


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestHosts]:
    with running_hosts(2, tmp_path_factory.mktemp("hosts"), port=8811) as test_hosts:
        yield test_hosts


def _plan(tmp_path: Path, hosts: TestHosts) -> Path:
    declared = hosts.plan_hosts()
    load = f"pattern: random, bs: 4k, read: 100, ioengine: psync, rate_iops: {RATE}"
    path = tmp_path / "plan.yaml"
    path.write_text(
        f"name: warmhosts\nhosts:\n{declared}"
        f"host_sets: [[{', '.join(h.name for h in hosts.hosts)}]]\n"
        f"start_lead: {LEAD_S:g}s\n"
        "timing: {ramp: 3s, duration: 2s, log_ramp: true}\n"
        "load: {workers: [1], iodepth: [1]}\n"
        "workloads:\n"
        f"  - {{name: warm, {load}}}\n"
        f"  - {{name: ev, {load}, timing: {{ramp: 1s, duration: 2s, log_ramp: true}},\n"
        f"     events: [{{at: 2s, label: mark, run: {{argv: [{sys.executable}, -c, '0']}}}}]}}\n"
    )
    return path


def _stored(results: Path, kind: str) -> dict[str, dict]:
    with sqlite3.connect(results / "arraybench.db") as db:
        rows = db.execute(
            "SELECT p.key, f.data_json FROM findings f JOIN points p ON p.id = f.point_id "
            "WHERE f.kind = ?",
            (kind,),
        ).fetchall()
    return {key: json.loads(data) for key, data in rows}


def test_the_warmup_runs_on_every_host_and_is_drawn_before_the_measured_seconds(
    tmp_path: Path, hosts: TestHosts, monkeypatch: pytest.MonkeyPatch
):
    ticks: list[tuple[str, float]] = []  # the progress display's point clock, as it is told

    def tick(self: ProgressObserver, point: Point, elapsed: float) -> None:
        ticks.append((point.key, elapsed))

    monkeypatch.setattr(ProgressObserver, "point_tick", tick)
    results = tmp_path / "res"
    done = main_cli("run", str(_plan(tmp_path, hosts)), "--results", str(results))
    assert done.returncode == 0, done.stderr
    # many-host points tick like local ones: through the warm-up (0 -> 3 s), then the measured
    # run counted after it (3 s + its own seconds), never backwards within a phase
    warm_ticks = [e for key, e in ticks if key == "warm/w1-qd1-h2"]
    assert len(warm_ticks) >= 10 and max(warm_ticks) >= 3 + 1, warm_ticks
    assert any(0 < e < 3 for e in warm_ticks) and any(e > 3 for e in warm_ticks), warm_ticks
    run_id = json.loads(main_cli("runs", "--results", str(results), "--format", "json").stdout)
    shown = json.loads(main_cli("show", run_id[0]["id"], "--results", str(results),
                                "--format", "json").stdout)  # fmt: skip
    points = {p["key"]: p for p in shown["points"]}
    warm, ev = points["warm/w1-qd1-h2"], points["ev/w1-qd1-h2"]
    assert not warm["partial"] and not ev["partial"]
    # the warm-up: a job file per host in warmup/, 3 s and no ramp; the measured one: no ramp
    folder = Path(warm["folder"])
    for h in hosts.hosts:
        text = (folder / "warmup" / f"point-{h.name}.fio").read_text()
        assert f"filename=t-{h.name}.dat" in text and "exec_prerun=" in text
        assert "runtime=3\n" in text and "ramp_time=0\n" in text
        measured = (folder / f"point-{h.name}.fio").read_text()
        assert "runtime=2\n" in measured and "ramp_time=0\n" in measured
    # the point with events ramped inside its measured job, as on one host: no warm-up run
    ev_folder = Path(ev["folder"])
    assert not (ev_folder / "warmup").exists()
    assert "ramp_time=1\n" in (ev_folder / f"point-{hosts.hosts[0].name}.fio").read_text()
    # its seconds: the hosts' sums, about 2 x RATE each; fio often leaves out a run's last
    # 1-second window when the run ends on it, and only seconds both hosts logged are totals
    found = _stored(results, "warmup")
    assert set(found) == {"warm/w1-qd1-h2"}  # the point with events ramped unlogged
    data = found["warm/w1-qd1-h2"]
    assert data["hosts"] == [h.name for h in hosts.hosts] and data["failed_hosts"] == []
    rows = data["samples"]
    assert 2 <= len(rows) <= 4, rows
    iops = [r[1] for r in rows]
    assert sum(iops) / len(iops) == pytest.approx(2 * RATE, rel=0.1), rows
    assert all(0.5 * 2 * RATE < v < 1.5 * 2 * RATE for v in iops), rows
    # the pause in the load: about the start lead (plus fio's client starting again), real
    gap = data["gap_s"]
    assert LEAD_S * 0.5 < gap < LEAD_S + 5, gap
    # the figures: the measured run's alone (2 s at 2 x RATE), its seconds after the warm-up's
    assert warm["total_iops"] == pytest.approx(2 * RATE, rel=0.1)
    with sqlite3.connect(results / "arraybench.db") as db:
        seconds = [t for (t,) in db.execute(
            "SELECT s.t FROM samples s JOIN points p ON p.id = s.point_id "
            "WHERE p.key = 'warm/w1-qd1-h2'")]  # fmt: skip
    assert seconds and min(seconds) > max(r[0] for r in rows)
    assert min(seconds) - max(r[0] for r in rows) >= int(gap)
    # the report: the warm-up shaded on the point's chart, the pause said
    report = Path(done.stdout.split("HTML report:")[1].strip()).read_text()
    assert report.count("warm-up, not in the figures") == 1
    assert 'class="shade"' in report and "seconds since the warm-up started" in report
    said = f"the measured run started {gap:.1f} s after the warm-up on 2 hosts ended"
    assert said in report


def test_a_host_killed_in_the_warmup_leaves_a_partial_point(tmp_path: Path, hosts: TestHosts):
    """As a host killed in the measured run: the point goes on with the others, stored as
    partial, its warm-up finding and the report naming the host."""
    results = tmp_path / "res"
    plan = _plan(tmp_path, hosts)
    text = plan.read_text().split("  - {name: ev")[0]  # the logged point alone
    plan.write_text("on_host_failure: continue\n" + text)
    victim = hosts.hosts[1].name

    def kill_in_warmup() -> None:
        # once the warm-up's job files are written and the victim's server holds the job
        wait_until(lambda: any(results.glob(f"runs/*/points/*/warmup/point-{victim}.fio")), 60)
        wait_until(lambda: hosts.job_running(1), 5)
        hosts.kill_server(1)

    killer = threading.Thread(target=kill_in_warmup)
    killer.start()
    try:
        done = main_cli("run", str(plan), "--results", str(results))
    finally:
        killer.join()
        hosts.start_server(1)  # back for any later test
    assert done.returncode == 0, done.stderr
    assert f"host(s) {victim} failed in the warm-up" in done.stderr, done.stderr
    assert "stored as partial" in done.stderr
    run_id = json.loads(main_cli("runs", "--results", str(results), "--format", "json").stdout)
    shown = json.loads(main_cli("show", run_id[0]["id"], "--results", str(results),
                                "--format", "json").stdout)  # fmt: skip
    [point] = shown["points"]
    assert point["partial"] == 1 and point["failed_hosts"] == victim
    assert point["total_iops"] == pytest.approx(RATE, rel=0.1)  # the surviving host's
    data = _stored(results, "warmup")["warm/w1-qd1-h2"]
    assert data["failed_hosts"] == [victim]
    report = Path(done.stdout.split("HTML report:")[1].strip()).read_text()
    assert f"warm-up failed on host(s) {victim}: not warmed up before the measured run" in report
