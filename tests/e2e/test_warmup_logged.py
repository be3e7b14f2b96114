"""AERODISK's warm-up logged and drawn (`timing.log_ramp`): the ramp runs as its own logged
phase before the measured job, its seconds are drawn shaded, and the point's figures are the
measured job's alone. The drawing is the test engine's run (tests/fake_engine.py); fio's own
two job files and figures are checked on a small real run."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from openpyxl import load_workbook

from tests.conftest import main_cli, needs_fio
from tests.crosscheck import assert_point_matches_fio
from tests.fake_engine import assert_point_matches_model, model


def _point(results: Path) -> tuple[str, dict]:
    run_id = json.loads(main_cli("runs", "--results", str(results), "--format", "json").stdout)
    shown = json.loads(main_cli("show", run_id[0]["id"], "--results", str(results),
                                "--format", "json").stdout)  # fmt: skip
    (point,) = shown["points"]
    return run_id[0]["id"], point


@needs_fio
@pytest.mark.slow
def test_fio_runs_the_warmup_as_its_own_job_and_the_figures_are_the_measured_jobs(tmp_path):
    plan = tmp_path / "plan.yaml"
    plan.write_text(f"name: warm\ntargets: [{{path: {tmp_path / 't.dat'}, size: 16m}}]\n"
                    "timing: {ramp: 1s, duration: 2s, log_ramp: true}\n"
                    "load: {pairs: [[2, 4]]}\n"
                    "workloads: [{name: oltp, pattern: random, bs: 4k, read: 70}]\n")  # fmt: skip
    results = tmp_path / "res"
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stderr
    _, point = _point(results)
    folder = Path(point["folder"])
    # the measured job: today's job file with no ramp (the warm-up ran just before it)
    measured, warm = (folder / "point.fio").read_text(), (folder / "warmup/point.fio").read_text()
    assert "ramp_time=0\n" in measured and "runtime=2\n" in measured
    assert "ramp_time=0\n" in warm and "runtime=1\n" in warm and "steadystate" not in warm
    strip = lambda text: re.sub(r"^(;.*|ramp_time=.*|runtime=.*)$", "", text, flags=re.M)  # noqa: E731
    assert strip(measured) == strip(warm)  # the same load, only the times differ
    # the point's figures are the measured fio.json's alone, not the warm-up's I/O added
    metrics = {k: v for k, v in point.items() if k.startswith(("read_", "write_", "total_"))}
    metrics.pop("read_pct")
    assert_point_matches_fio(metrics, folder / "fio.json")
    warm_ios = json.loads((folder / "warmup/fio.json").read_text())["jobs"][0]["read"]["total_ios"]
    assert warm_ios > 0


@pytest.mark.usefixtures("fake_engine")  # the drawing is the subject: the test engine's run
def test_aerodisk_warmup_drawn_and_left_out_of_the_figures(tmp_path: Path):
    results = tmp_path / "res"
    targets = [a for n in ("lun1.dat", "lun2.dat") for a in ("--target", str(tmp_path / n))]
    done = main_cli("run", "aerodisk", "--scale", "0.003", "--only", "oltp-4k-rw70", *targets,
                    "--results", str(results), "--set", "load.pairs=[[2, 4]]",
                    "--set", "engine=fake", "--set", "monitor=false")  # fmt: skip
    assert done.returncode == 0, done.stderr
    run, point = _point(results)
    run_id = [{"id": run}]
    folder = Path(point["folder"])
    # the measured job and the warm-up: the same load, 11 s and 3 s at this scale
    measured, warm = (
        json.loads((folder / f).read_text()) for f in ("point.fake", "warmup/point.fake")
    )
    assert (measured["seconds"], warm["seconds"]) == (11, 3)
    assert {**measured, "seconds": 0, "title": ""} == {**warm, "seconds": 0, "title": ""}
    assert_point_matches_model(point)  # the measured job's figures alone: its 11 s of I/Os
    # its 11 s of the planned 11 s: the warm-up ran apart, no stop (once read as 11 of 3 + 11)
    assert "stopped-early" not in [f["kind"] for f in point["flags"]], point["flags"]
    per_job = [round(d.iops / measured["jobs"] * 11) for d in model(measured).values()]
    assert point["total_ios"] == sum(per_job) * measured["jobs"]
    # drawn: the warm-up's seconds before the measured ones, shaded and labelled
    report = Path(done.stdout.split("HTML report:")[1].strip()).read_text()
    assert report.count("warm-up, not in the figures") == 1
    assert 'class="shade"' in report and "seconds since the warm-up started" in report
    chart = report.split("latency over time: against seconds since the warm-up started")[-1]
    tips = chart.split("data-tips='")[1].split("'")[0]
    hovers = re.findall(r"t = (\d+) s", tips)
    assert hovers and int(hovers[0]) <= 1  # the chart starts at the warm-up's first second
    assert len(hovers) >= 2 + 9  # the warm-up's logged seconds and the measured ones
    with sqlite3.connect(results / "arraybench.db") as db:
        (data,) = db.execute("SELECT data_json FROM findings WHERE kind = 'warmup'").fetchone()
        (measured,) = db.execute("SELECT COUNT(*) FROM samples").fetchone()
    warm_seconds = len(json.loads(data)["samples"])
    # every logged second drawn once, in order; the pause between the two fio runs may or may not
    # fall on a whole second of its own (one empty hover), depending on when fio started
    assert warm_seconds >= 1 and 0 <= len(hovers) - (warm_seconds + measured) <= 1, hovers
    assert [int(h) for h in hovers] == sorted({int(h) for h in hovers})
    # the Markdown summary's figures are the measured seconds' alone, the warm-up said
    md = tmp_path / "r.md"
    done = main_cli("report", run_id[0]["id"], "--results", str(results), "-o", str(md))
    assert done.returncode == 0, done.stderr
    text = md.read_text()
    assert f"**oltp-4k-rw70/w2-qd4: IOPS and latency over time**: {measured} samples" in text
    assert f"warm-up: {warm_seconds} s logged before these samples, not in the figures" in text
    # the workbook's timeline holds the warm-up's rows and says which they are
    book = tmp_path / "r.xlsx"
    done = main_cli("report", run_id[0]["id"], "--results", str(results), "-o", str(book))
    assert done.returncode == 0, done.stderr
    ws = load_workbook(book)["Timelines"]
    texts = [c.value for row in ws.iter_rows() for c in row if isinstance(c.value, str)]
    assert any(t.endswith("s: warm-up, not in the figures") for t in texts), texts
    assert "seconds since the warm-up started (s)" in texts
