"""A `run` event whose revert command fails: the run completes, says at its end what it left
in place (truthfully: undoing it failed, it was not killed) and exits with EXIT_LEFT_IN_PLACE
(4); the next run in that results folder waits, saying the same and how to let it go;
`revert --mark-undone ENTRY` records an entry the user undid by hand (nothing is run), with no
hand-typed SQL."""

from __future__ import annotations

from pathlib import Path

from arraybench.errors import EXIT_LEFT_IN_PLACE
from arraybench.store.db import Store
from tests.conftest import main_cli, needs_fio

PLAN = """\
name: rv
targets: [{{path: {dir}/t.dat, size: 16m}}]
timing: {{ramp: 0s, duration: 2s}}
load: {{workers: [1], iodepth: [1]}}
workloads:
  - name: w
    pattern: random
    bs: 4k
    read: 100
    ioengine: psync
    rate_iops: 200
    events: [{{at: 0.5s, duration: 0.5s, label: flip, run: {{argv: ['true'], revert: ['false']}}}}]
"""


def _errors(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("error:")]


@needs_fio
def test_a_failed_revert_ends_the_run_with_4_and_mark_undone_lets_it_go(tmp_path: Path) -> None:
    plan, results = tmp_path / "p.yaml", tmp_path / "res"
    plan.write_text(PLAN.format(dir=tmp_path))
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == EXIT_LEFT_IN_PLACE == 4, done.stderr
    ((run, _),) = Store(results, create=False).list_runs()
    assert run.status == "complete"
    said = (f"error: left in place by run {run.id}: flip (journal entry 1, point w/w1-qd1): "
            "undoing it failed when its event ended")  # fmt: skip
    assert _errors(done.stderr)[-1] == said, done.stderr
    assert f"arraybench revert --mark-undone ENTRY --results {results}" in done.stderr

    again = main_cli("run", str(plan), "--results", str(results))
    assert again.returncode == 2 and "Traceback" not in again.stderr
    (line,) = _errors(again.stderr)
    assert "undoing it failed when its event ended" in line and "killed" not in line
    assert f"arraybench revert --mark-undone 1 --results {results}" in line
    assert "sqlite3" not in again.stderr + done.stderr

    tried = main_cli("revert", "--results", str(results))  # tries again: `false` fails again
    assert tried.returncode == 1 and "--mark-undone N" in tried.stderr
    assert "sqlite3" not in tried.stderr

    for hostile in ("x1", "1.5", "", "99999999999999999999999", "-1", "2"):
        wrong = main_cli("revert", "--mark-undone", hostile, "--results", str(results))
        assert wrong.returncode == 2, (hostile, wrong.stderr)
        assert len(_errors(wrong.stderr)) == 1 and "Traceback" not in wrong.stderr, hostile
    marked = main_cli("revert", "--mark-undone", "1", "--results", str(results))
    assert marked.returncode == 0, marked.stderr
    assert marked.stdout.strip() == (f"{run.id}: flip (journal entry 1) marked undone by hand; "
                                     "nothing was run")  # fmt: skip
    twice = main_cli("revert", "--mark-undone", "1", "--results", str(results))
    assert twice.returncode == 2 and "no journal entry 1 is left to undo" in twice.stderr
    nothing = main_cli("revert", "--results", str(results))
    assert nothing.returncode == 0 and "nothing to revert" in nothing.stdout
    ((row_state,),) = _states(results)
    assert row_state == "undone by hand"


def _states(results: Path) -> list[tuple[str]]:
    import contextlib
    import sqlite3

    with contextlib.closing(sqlite3.connect(results / "arraybench.db")) as db:
        return db.execute("SELECT state FROM injections").fetchall()
