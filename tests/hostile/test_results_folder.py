"""The results folder as a user may leave it: moved after a run (`report` and `--resume` must
write where it is now, never recreate the old place), reached through a path with a byte
that is not UTF-8, and its store deleted or replaced by garbage while a run goes on (the run
must stop with one line, exit 1, instead of calling itself complete while its points go to
an unlinked file)."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arraybench.store.db import DB_NAME
from tests.conftest import main_cli, needs_fio, small_plan
from tests.fake_engine import PLAN_LINES


def _only_run(results: Path) -> str:
    with contextlib.closing(sqlite3.connect(results / DB_NAME)) as db:
        (run_id,) = db.execute("SELECT id FROM runs").fetchone()
    return str(run_id)


@pytest.mark.usefixtures("fake_engine")  # the folder is the subject, not fio
def test_a_moved_results_folder_is_reported_and_resumed_where_it_is_now(tmp_path: Path) -> None:
    plan = small_plan(tmp_path, workers="[1, 2]", extra=PLAN_LINES,
                      workloads="  - {name: r, pattern: random, bs: 4k, read: 100}\n")  # fmt: skip
    old = tmp_path / "old"
    assert main_cli("run", str(plan), "--results", str(old)).returncode == 0
    run_id = _only_run(old)
    with contextlib.closing(sqlite3.connect(old / DB_NAME)) as db:  # as if killed before #2
        db.execute("PRAGMA foreign_keys=ON")  # its samples and findings go with it
        db.execute("DELETE FROM points WHERE seq = 2")
        db.execute("UPDATE runs SET status = 'interrupted', finished = NULL")
    new = tmp_path / "moved" / "new"
    new.parent.mkdir()
    old.rename(new)

    report = main_cli("report", run_id, "--results", str(new))
    assert report.returncode == 0, report.stderr
    assert (new / "runs" / run_id / "report.html").is_file() and not old.exists()
    resumed = main_cli("run", "--resume", run_id, "--results", str(new))
    assert resumed.returncode == 0, resumed.stderr
    assert not old.exists()
    points = sorted(p.name for p in (new / "runs" / run_id / "points").iterdir())
    assert len(points) == 2 and all((new / "runs" / run_id / "points" / p).is_dir() for p in points)
    with contextlib.closing(sqlite3.connect(new / DB_NAME)) as db:
        assert db.execute("SELECT status FROM runs").fetchone()[0] == "complete"


@pytest.mark.usefixtures("fake_engine")  # the folder is the subject, not fio
def test_a_results_path_with_a_byte_that_is_not_utf8(tmp_path: Path) -> None:
    plan = small_plan(tmp_path, workers="[1]", extra=PLAN_LINES,
                      workloads="  - {name: r, pattern: random, bs: 4k, read: 100}\n")  # fmt: skip
    results = os.fsdecode(os.fsencode(tmp_path) + b"/res\xff\x1b[2J")
    done = main_cli("run", str(plan), "--results", results)
    assert done.returncode == 0, done.stderr
    assert "\\xff" in done.stdout and "\x1b[2J" not in done.stdout  # shown escaped
    for argv in (["runs"], ["show", "latest"], ["report", "latest"], ["revert"]):
        shown = main_cli(*argv, "--results", results)
        assert shown.returncode == 0 and "Traceback" not in shown.stderr, (argv, shown.stderr)
    run_id = _only_run(Path(results))
    assert (Path(results) / "runs" / run_id / "report.html").is_file()


def _start(plan: Path, results: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "arraybench", "run", str(plan), "--results", str(results)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, COLUMNS="160"),
    )  # fmt: skip


def _first_point_stored(results: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        with (
            contextlib.suppress(sqlite3.Error),
            contextlib.closing(
                sqlite3.connect(f"file:{results / DB_NAME}?mode=ro", uri=True, timeout=5)
            ) as db,
        ):
            if db.execute("SELECT COUNT(*) FROM points").fetchone()[0] >= 1:
                return
        time.sleep(0.1)
    raise AssertionError("no point was stored")


@needs_fio  # a real run in another process: the store is replaced while fio runs
@pytest.mark.parametrize("how", ["garbage", "deleted"])
def test_a_store_replaced_during_a_run_stops_it_in_one_line(tmp_path: Path, how: str) -> None:
    plan = small_plan(tmp_path, workers="[1, 2, 3, 4]",
                      workloads="  - {name: r, pattern: random, bs: 4k, read: 100}\n")  # fmt: skip
    results = tmp_path / "res"
    proc = _start(plan, results)
    try:
        _first_point_stored(results, proc)
        store = results / DB_NAME
        if how == "garbage":
            (results / "garbage").write_bytes(b"not a store\n" * 100)
            (results / "garbage").rename(store)
        else:
            store.unlink()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 1, (out, err)
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "was " in errors[0] and "while arraybench had it open" in errors[0]
    assert "Traceback" not in err and "complete" not in out.lower().split("error")[0][-200:]
