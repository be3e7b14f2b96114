"""repeat: N on the test engine (tests/fake_engine.py; the campaign is the subject): every
repetition stored with its own files, the ladder interleaved, a resumed run completing a
missing repetition, and show's spread per point."""

from __future__ import annotations

import io
import json
import sqlite3
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from arraybench import cli
from arraybench.plan.catalog import resolve
from arraybench.plan.expand import expand
from tests.conftest import main_cli
from tests.fake_engine import assert_point_matches_model

QUICK_SMALL = ["--only", "rand-8k-read", "--set", "load.workers=[1,2]", "--set", "ioengine=psync",
               "--set", "engine=fake", "--set", "monitor=false"]  # fmt: skip


def _show(results: Path) -> list[dict[str, object]]:
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["show", "latest", "--results", str(results), "--format", "json"]) == 0
    return list(json.loads(out.getvalue())["points"])


def test_repeat_interleaves_the_ladder() -> None:
    plan = resolve("quick", ["repeat=3", "load.workers=[1,2]"])
    points = [p for p in expand(plan) if p.workload.name == "rand-8k-read"]
    keys = [p.key for p in points]
    assert keys == ["rand-8k-read/w1-qd1", "rand-8k-read/w2-qd1",
                    "rand-8k-read/w1-qd1#2", "rand-8k-read/w2-qd1#2",
                    "rand-8k-read/w1-qd1#3", "rand-8k-read/w2-qd1#3"]  # fmt: skip
    last, first = points[-1].identity, points[0].identity
    assert (last.level_key, last.repetition, last.label) == ("rand-8k-read/w2-qd1", 3, "w2-qd1#3")
    assert (first.level_key, first.repetition) == (keys[0], 1)


@pytest.mark.usefixtures("fake_engine")
def test_quick_with_repeat_three_stores_every_repetition(tmp_path: Path) -> None:
    results = tmp_path / "res"
    done = main_cli("run", "quick", *QUICK_SMALL, "--repeat", "3", "--scale", "0.1",
                    "--target", str(tmp_path / "t.dat"), "--results", str(results))  # fmt: skip
    assert done.returncode == 0, done.stderr
    points = _show(results)
    assert len(points) == 6
    for p in points:
        assert p["repeats"] == 3 and p["throughput_median"] > 0  # type: ignore[operator]
        assert isinstance(p["throughput_ci95_pct"], float) and p["flags"] is not None
    assert sorted(p["repetition"] for p in points) == [1, 1, 2, 2, 3, 3]  # type: ignore[type-var]
    folders = {p["folder"] for p in points}
    assert len(folders) == 6 and all((Path(str(f)) / "point.fake").exists() for f in folders)
    for p in points:  # each repetition is its own run of the job: the model's figures
        assert_point_matches_model(p)
    # the summary shows each median with its margin; the report has the spread and the wins
    assert "IOPS ±" in done.stdout
    md = tmp_path / "r.md"
    assert cli.main(["report", "latest", "--results", str(results), "-o", str(md)]) == 0
    text = md.read_text()
    assert "Spread over repeats" in text and "Which level won" in text and "Student t" in text

    # a run cut short before its last repetition: resume measures just that one
    with sqlite3.connect(results / "arraybench.db") as db:
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("DELETE FROM points WHERE key = 'rand-8k-read/w2-qd1#3'")
        db.execute("UPDATE runs SET status = 'interrupted'")
    run_id = str(points[0]["run_id"])
    resumed = main_cli("run", "--resume", run_id, "--results", str(results))
    assert resumed.returncode == 0, resumed.stderr
    # its progress line names only the missing repetition (tables may list the others)
    assert "w2-qd1#3: " in resumed.stdout and "w1-qd1#2: " not in resumed.stdout
    again = _show(results)
    assert len(again) == 6 and all(p["repeats"] == 3 for p in again)
    assert {p["key"] for p in again} == {p["key"] for p in points}


def test_resume_refuses_repeat_and_a_bad_count_is_one_line(tmp_path: Path) -> None:
    code = cli.main(["run", "--resume", "x", "--repeat", "2", "--results", str(tmp_path)])
    assert code == 2
    with pytest.raises(SystemExit) as stopped:  # argparse's own exit, with one located line
        cli.main(["run", "quick", "--repeat", "0", "--results", str(tmp_path)])
    assert stopped.value.code == 2
