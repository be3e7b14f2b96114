"""Failure under load through `arraybench run`: lost writes found at their offsets, a clean
run clean, commands that fail or hang recorded while the load goes on, a throttle's dip and
recovery on a loop device, and every event reverted when the run is interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import main_cli, needs_fio, run_cli
from tests.records import stored_findings

pytestmark = [needs_fio, pytest.mark.slow]
LOST_WRITES = Path(__file__).with_name("lost_writes.py")


def _plan(tmp_path: Path, target: str, events: str, extra: str = "", seconds: int = 6) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(
        "name: failover\n"
        f"targets: [{{path: {target}, size: 96m}}]\n"
        f"{extra}"
        f"timing: {{ramp: 0s, duration: {seconds}s}}\n"
        "load: {workers: [1], iodepth: [4]}\n"
        "workloads:\n"
        "  - name: rw\n    pattern: random\n    bs: 4k\n    read: 50\n    rate_iops: 2000\n"
        "    verify: {region: 4m, iops: 800}\n"
        f"    events:\n{events}"
    )
    return path


def test_lost_and_corrupt_writes_are_reported_at_their_offsets(tmp_path: Path):
    target = tmp_path / "t.dat"
    argv = f"[{sys.executable}, {LOST_WRITES}, save, {target}]"
    revert = f"[{sys.executable}, {LOST_WRITES}, restore, {target}]"
    events = f"      - {{at: 1s, label: failback, run: {{argv: {argv}, revert: {revert}}}}}\n"
    results = tmp_path / "res"
    done = run_cli("run", str(_plan(tmp_path, str(target), events)), "--results", str(results))
    assert done.returncode == 3, done.stdout + done.stderr  # a verdict failed
    [integrity] = stored_findings(results, "integrity")
    [expected_file] = list(results.glob("runs/*/points/*/expected.json"))
    expected = json.loads(expected_file.read_text())
    assert expected["lost"] and expected["corrupt"]  # the test did lose and corrupt writes
    found = {kind: sorted(p["offset"] for p in integrity["problems"] if p["kind"] == kind)
             for kind in ("lost", "corrupt", "unreadable")}  # fmt: skip
    assert found == {"lost": sorted(expected["lost"]), "corrupt": sorted(expected["corrupt"]),
                     "unreadable": []}  # fmt: skip
    assert "FAIL" in done.stdout and "no acknowledged write lost" in done.stdout


def test_a_clean_run_reports_no_problem_and_failed_commands_do_not_stop_the_load(
    tmp_path: Path, each_fio: str
):
    """Events and verify on the system's fio and on fio 3.42 (`each_fio`)."""
    events = (
        '      - {at: 1s, label: broken-cli, run: ["false"]}\n'
        "      - {at: 2s, label: hung-cli, run: {argv: [sleep, '30'], timeout: 1s}}\n"
    )
    results = tmp_path / "res"
    target = str(tmp_path / "t.dat")
    done = run_cli("run", str(_plan(tmp_path, target, events)), "--results", str(results))
    assert done.returncode == 0, done.stdout + done.stderr
    [integrity] = stored_findings(results, "integrity")
    assert integrity["clean"] and integrity["checked"] > 100 and not integrity["problems"]
    [events_found] = stored_findings(results, "events")
    outcomes = {r["label"]: r["outcome"] for r in events_found["records"]}
    assert outcomes == {"broken-cli": "failed", "hung-cli": "timeout"}
    shown = json.loads(run_cli("show", json.loads(run_cli(
        "runs", "--results", str(results), "--format", "json").stdout)[0]["id"],
        "--results", str(results), "--format", "json").stdout)  # fmt: skip
    [point] = shown["points"]
    assert point["runtime_s"] >= 5 and point["total_iops"] > 1000  # the load went on


@pytest.mark.root
@pytest.mark.paced  # recovery within 3 s
@pytest.mark.skipif(os.geteuid() != 0, reason="loop devices and cgroups need root")
def test_a_throttle_shows_a_dip_and_a_recovery(tmp_path: Path):
    backing = tmp_path / "loop.img"
    with open(backing, "wb") as fh:
        fh.truncate(128 << 20)
    made = subprocess.run(["losetup", "--find", "--show", str(backing)], capture_output=True,
                          text=True, check=False)  # fmt: skip
    if made.returncode != 0:
        pytest.skip(f"no loop device: {made.stderr.strip()}")
    dev = made.stdout.strip()
    try:
        events = (f"      - {{at: 4s, duration: 3s, label: slow-path, "
                  f"throttle: {{device: {dev}, read_iops: 100, write_iops: 100}}}}\n")  # fmt: skip
        plan = _plan(tmp_path, dev, events, f"allow_destroy: [{dev}]\n", seconds=12)
        text = plan.read_text().replace("    verify: {region: 4m, iops: 800}\n", "")
        plan.write_text(text.replace("size: 96m", "size: 128m"))
        results = tmp_path / "res"
        done = main_cli("run", str(plan), "--results", str(results))  # no child's start-up
        assert done.returncode == 0, done.stdout + done.stderr
        [found] = stored_findings(results, "events")
        [impact] = found["impact"]
        assert impact["dip_pct"] > 80, impact
        assert (
            impact["recovery_after_revert_s"] is not None and impact["recovery_after_revert_s"] < 3
        )
        assert "slow-path" in done.stdout
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)


def test_events_are_reverted_when_the_run_is_interrupted(tmp_path: Path):
    victim = subprocess.Popen(["sleep", "120"])
    pid_file = tmp_path / "victim.pid"
    pid_file.write_text(str(victim.pid))
    events = f"      - {{at: 1s, duration: 60s, label: freeze, signal: {{pid_file: {pid_file}}}}}\n"
    plan = _plan(tmp_path, str(tmp_path / "t.dat"), events, seconds=60)
    env = dict(os.environ, COLUMNS="160")
    run = subprocess.Popen([sys.executable, "-m", "arraybench", "run", str(plan), "--results",
                            str(tmp_path / "res")], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while _state(victim.pid) != "T" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _state(victim.pid) == "T", "the event never stopped the process"
        os.kill(run.pid, signal.SIGINT)
        _, err = run.communicate(timeout=60)
        assert run.returncode == 130, err
        assert _state(victim.pid) != "T"  # SIGCONT sent by the revert
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
        victim.kill()


def _state(pid: int) -> str:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2]
