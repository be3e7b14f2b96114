"""Scenarios in one campaign (plan `scenarios:`), through `arraybench run` with real fio:

* a baseline and a degraded scenario whose before-step starts a competing fio load on the
  same file (start-stop-daemon puts it in the background) and whose after-step stops it: the
  report's impact table shows the degraded maximum below the baseline's, in every format;
* Ctrl-C during a before-step and SIGKILL during the degraded scenario's points: the resumes
  continue at that scenario's step and point, never repeating a completed before-step.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from openpyxl import load_workbook

from arraybench.cli import main
from tests.conftest import needs_fio, run_cli
from tests.fake_engine import PLAN_LINES
from tests.records import stored_findings
from tests.terminal import answer_prompt

pytestmark = [needs_fio, pytest.mark.slow]


def _plan(tmp_path: Path, degraded: str, levels: str = "[1, 2]") -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(
        "name: avail\n"
        f"targets: [{{path: {tmp_path / 't.dat'}, size: 32m}}]\n"
        "timing: {ramp: 0s, duration: 1s}\n"
        f"load: {{workers: {levels}, iodepth: [1]}}\n"
        "workloads: [{name: rr, pattern: random, bs: 4k, read: 100}]\n"
        "scenarios:\n"
        "  - {name: baseline, label: all controllers}\n"
        f"  - name: degraded\n    label: '-1 controller'\n{degraded}"
    )
    return path


def _rows(results: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(results / "arraybench.db") as db:
        return db.execute(sql).fetchall()


# serial: its paths table snapshots every block device of the machine, and another worker's
# loop device coming or going between the steps splits the row it reads (seen once in CI)
@pytest.mark.serial
def test_degraded_scenario_shows_its_impact_in_every_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    daemon = shutil.which("start-stop-daemon")
    if daemon is None:
        pytest.skip("start-stop-daemon (dpkg) is not installed")
    pid = tmp_path / "hog.pid"
    hog = (f"[{daemon}, --start, --background, --make-pidfile, --pidfile, {pid}, --exec, "
           f"{shutil.which('fio')}, --, --name=hog, --filename={tmp_path / 't.dat'}, "
           "--rw=randread, --bs=4k, --ioengine=libaio, --iodepth=64, --direct=1, --numjobs=4, "
           "--time_based, --runtime=30, --output=/dev/null]")  # fmt: skip
    stop = f"[{daemon}, --stop, --pidfile, {pid}, --remove-pidfile, --retry, TERM/5/KILL/2]"
    degraded = ("    before:\n      - prompt: Pull controller A now\n"
                f"      - run: {hog}\n    after:\n      - run: {stop}\n")  # fmt: skip
    results = tmp_path / "res"
    assert main(["plan", "check", str(_plan(tmp_path, degraded)), "--results", str(results)]) == 0
    outline = " ".join(capsys.readouterr().out.split())
    assert "scenario degraded (-1 controller): 2 points" in outline
    assert 'before: prompt "Pull controller A now" before: run ' in outline
    assert "after: run " in outline and "4 degraded/rr/w2-qd1" in outline
    md, xlsx = tmp_path / "r.md", tmp_path / "r.xlsx"
    argv = ["run", str(_plan(tmp_path, degraded)), "--results", str(results), "-o", str(md)]
    assert main([*argv, "-o", str(xlsx)]) == 0
    assert not pid.exists()  # the after-step stopped the competing load
    keys = _rows(results, "SELECT key, scenario FROM points ORDER BY seq")
    assert keys == [
        ("baseline/rr/w1-qd1", "baseline"),
        ("baseline/rr/w2-qd1", "baseline"),
        ("degraded/rr/w1-qd1", "degraded"),
        ("degraded/rr/w2-qd1", "degraded"),
    ]
    steps = stored_findings(results, "scenario_step")
    assert [(s["phase"], s["index"], s["outcome"]) for s in steps] == [
        ("before", 0, "assumed"), ("before", 1, "ok"), ("after", 0, "ok")]  # fmt: skip
    assert all(s["started"] <= s["ended"] and s["done"] for s in steps)
    paths = stored_findings(results, "scenario_paths")
    assert [(p["scenario"], p["moment"]) for p in paths] == [
        ("baseline", "start"), ("baseline", "end"), ("degraded", "before"),
        ("degraded", "start"), ("degraded", "end"), ("degraded", "after")]  # fmt: skip
    assert all(p["hosts"]["local"]["recorded"] for p in paths)
    assert "t.dat: file on" in paths[0]["hosts"]["local"]["targets"][0]

    # the impact table: In&Out's `470 kIOPS Max -38 %`, the degraded maximum below
    text = md.read_text()
    row = re.search(r"\| degraded \| -1 controller \| ([\d.,]+ kIOPS|[\d.,]+ IOPS) Max "
                    r"(-[\d.]+) %", text)  # fmt: skip
    tables = "\n".join(line for line in text.splitlines() if line.startswith("| "))
    assert row, tables  # the scenario, steps and points tables say what happened
    assert float(row.group(2)) < 0
    assert re.search(r"\| baseline \| all controllers \| [\d.,]+ k?IOPS Max;", text)
    assert "Scenario steps" in text and "Scenario paths and devices" in text
    # its moments changed nothing here: one row spans them, up to the after-steps
    assert re.search(r"\| degraded \| local \| before its steps to after its steps \|", text)
    cells = [str(c.value) for ws in load_workbook(xlsx) for r in ws.iter_rows() for c in r]
    assert any(f"Max {row.group(2)} %" in c for c in cells)
    html = tmp_path / "r.html"
    run_id = _rows(results, "SELECT id FROM runs")[0][0]
    assert main(["report", "--results", str(results), run_id, "-o", str(html)]) == 0
    assert f"Max {row.group(2)} %" in html.read_text()
    assert main(["show", "--results", str(results), run_id]) == 0
    shown = capsys.readouterr().out
    assert f"Max {row.group(2)} %" in shown, shown
    # compare picks one plan scenario of a run (RUN:NAME); the whole run is refused
    assert main(["compare", "--results", str(results), f"{run_id}:baseline",
                 f"{run_id}:degraded"]) == 0  # fmt: skip
    assert f"{row.group(2)} %" in capsys.readouterr().out
    assert main(["compare", "--results", str(results), run_id]) == 2
    assert f"compare them as {run_id}:baseline {run_id}:degraded" in capsys.readouterr().err


def _wait(condition: object, what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"waited {seconds:g}s for {what}"
        time.sleep(0.1)


def _stored(results: Path, key: str) -> bool:
    try:
        return bool(_rows(results, f"SELECT 1 FROM points WHERE key = '{key}'"))
    except sqlite3.Error:
        return False


def _start(argv: list[str]) -> subprocess.Popen[str]:
    env = dict(os.environ, COLUMNS="100")
    return subprocess.Popen([sys.executable, "-m", "arraybench", *argv], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def test_resume_continues_at_the_scenario_step_and_point_where_it_stopped(tmp_path: Path):
    """A failed step, Ctrl-C in a step, SIGKILL between two points: each resume continues
    there; a before-step that completed never runs again."""
    marks, gate1, gate2 = tmp_path / "marks", tmp_path / "gate1", tmp_path / "gate2"
    marks.mkdir()
    wait_gate = f"import os, time\nwhile not os.path.exists({str(gate2)!r}): time.sleep(0.05)"
    degraded = (
        "    before:\n"
        f"      - run: [mktemp, -p, {marks}, before0.XXXX]\n"  # a new file each time it runs
        f"      - run: {{argv: [ls, {gate1}], timeout: 5s}}\n"
        f"      - run: {json.dumps([sys.executable, '-c', wait_gate])}\n"
        f"    after:\n      - run: [mktemp, -p, {marks}, after0.XXXX]\n"
    )
    plan = _plan(tmp_path, degraded)
    results = tmp_path / "res"

    # 1. the second before-step fails: one line naming it, exit 1, resumable
    done = run_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 1, done.stderr
    assert "scenario degraded: before[1] run ls " in done.stderr
    assert "exited with code 2" in done.stderr and "--resume" in done.stderr
    assert "saying: ls: cannot access" in done.stderr  # what the step said, in the one line
    run_id = _rows(results, "SELECT id FROM runs")[0][0]
    assert f"arraybench run --resume {run_id} --results {results}" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    baseline = _rows(results, "SELECT key, started FROM points ORDER BY seq")
    assert [k for k, _ in baseline] == ["baseline/rr/w1-qd1", "baseline/rr/w2-qd1"]

    # 2. resumed with gate 1 open; Ctrl-C while the third step waits: one line, exit 130
    gate1.touch()
    run = _start(["run", "--resume", run_id, "--results", str(results)])
    try:
        _wait(lambda: len(stored_findings(results, "scenario_step")) == 3, "the second step again")
        time.sleep(0.5)  # the third step has started
        os.kill(run.pid, signal.SIGINT)
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130, err
    assert len(err.strip().splitlines()) == 1 and "--resume" in err, err

    # 3. resumed with gate 2 open, SIGKILLed once the degraded scenario's first point is in
    gate2.touch()
    run = _start(["run", "--resume", run_id, "--results", str(results)])
    try:
        _wait(lambda: _stored(results, "degraded/rr/w1-qd1"), "the first degraded point")
        run.kill()
        run.wait(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    assert not list(marks.glob("after0.*"))  # the scenario's points were not finished

    # 4. resumed again: the point left, the after-step, no before-step a second time
    assert main(["run", "--resume", run_id, "--results", str(results)]) == 0
    points = _rows(results, "SELECT key, started FROM points ORDER BY seq")
    assert [k for k, _ in points] == [*(f"{s}/rr/w{n}-qd1" for s in ("baseline", "degraded")
                                        for n in (1, 2))]  # fmt: skip
    assert points[:2] == baseline  # not measured again
    assert len(list(marks.glob("before0.*"))) == 1  # completed in the first run: not re-run
    assert len(list(marks.glob("after0.*"))) == 1
    steps = [
        (s["phase"], s["index"], s["outcome"]) for s in stored_findings(results, "scenario_step")
    ]
    assert steps == [("before", 0, "ok"), ("before", 1, "failed"), ("before", 1, "ok"),
                     ("before", 2, "ok"), ("after", 0, "ok")]  # fmt: skip
    assert _rows(results, "SELECT status FROM runs") == [("complete",)]
    # the resumed points are the same series as the first run's (the plan stored at the start
    # reads back as written: no "(backend)" in the family only after a resume), so the
    # impact table has both scenarios in one row set
    assert _rows(results, "SELECT DISTINCT family FROM points") == [("Random 4 KiB",)]


def test_a_prompt_step_waits_for_the_operator_on_a_terminal(tmp_path: Path):
    """On a terminal the prompt is shown, the run waits for Enter and records its time. The
    run is the test engine's (`python -m tests.fake_engine`): the prompt is the subject."""
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"{PLAN_LINES}name: prompt\n"
        f"targets: [{{path: {tmp_path / 't.dat'}, size: 16m}}]\n"
        "timing: {ramp: 0s, duration: 1s}\n"
        "load: {workers: [1], iodepth: [1]}\n"
        "workloads: [{name: rr, pattern: random, bs: 4k, read: 100}]\n"
        "scenarios: [{name: C3, before: [{prompt: Pull controller A now}]}]\n"
    )
    results = tmp_path / "res"
    argv = [sys.executable, "-m", "tests.fake_engine", "run", str(plan), "--results",
            str(results)]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    done = answer_prompt(argv, wait_s=60, think_s=1.0, env=env)  # the operator takes a second
    assert done.returncode == 0, done.seen.decode(errors="replace")
    assert b"scenario C3: Pull controller A now" in done.seen
    [step] = stored_findings(results, "scenario_step")
    assert step["outcome"] == "confirmed" and step["ended"] - step["started"] >= 1.0
