"""Honest progress: one model for every phase, totals that count rounds and special tests and
are never exceeded, phases named as phases, an ETA that moves while a silent step runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arraybench.plan import catalog
from arraybench.plan.expand import with_targets
from arraybench.run.progress import RunProgress, run_steps
from tests.conftest import main_cli, needs_fio
from tests.fake_engine import PLAN_LINES

COUNTS = re.compile(r"^\[(\d+)/(\d+)\]")


def _counts(text: str) -> list[tuple[int, int]]:
    return [(int(m.group(1)), int(m.group(2))) for m in map(COUNTS.match, text.splitlines()) if m]


def _never_exceeded(text: str) -> list[tuple[int, int]]:
    counts = _counts(text)
    assert counts, text
    assert all(done <= total for done, total in counts), counts
    totals = [t for _, t in counts]
    assert totals == sorted(totals, reverse=True), totals  # a total only shrinks
    assert "warning: running" not in text and "warning: precondition" not in text
    return counts


def _runs_counts(results: Path) -> tuple[int, int]:
    listed = main_cli("runs", "--results", str(results))
    found = re.findall(r"complete[\s│]+(\d+)/(\d+)", listed.stdout)
    assert len(found) == 1, listed.stdout
    return int(found[0][0]), int(found[0][1])


@pytest.mark.usefixtures("fake_engine")  # the progress lines are the subject, not fio
def test_snia_rounds_count_at_most_and_shrink_when_steady(tmp_path: Path) -> None:
    results = tmp_path / "r"
    args = ["--only", "iops-4k-w", "--set", "rounds.max=6", "--set", "rounds.window=2"]
    args += [a for line in PLAN_LINES.splitlines() for a in ("--set", line.replace(": ", "="))]
    done = main_cli("run", "snia-pts", "--scale", "0.01", *args, "--results", str(results))
    assert done.returncode == 0, done.stderr
    counts = _never_exceeded(done.stdout)
    assert counts[0][1] == 6  # rounds at their maximum, from the start
    assert "precondition: writing the targets 2 times over" in done.stdout
    # the points' progress lines (a table of flagged points below may name them again)
    rounds = len([line for line in done.stdout.splitlines() if COUNTS.match(line) and "@r" in line])
    # the model's figures are the same every round: steady at the first full window, and the
    # later rounds leave the total
    assert rounds == 2 and counts[-1][0] == rounds
    assert f"rounds: steady after round {rounds}" in done.stdout
    assert counts[-1] == (rounds, rounds)
    ran, total = _runs_counts(results)
    assert ran == total == rounds


@needs_fio
def test_dbi_interference_is_a_step_of_the_total(tmp_path: Path) -> None:
    results = tmp_path / "r"
    done = main_cli("run", "dbi-db", "--scale", "0.01", "--only", "randread-8k", "--set",
                    "load.workers=[1]", "--set", "interference.steps=1", "--results",
                    str(results))  # fmt: skip
    assert done.returncode == 0, done.stderr
    counts = _never_exceeded(done.stdout)
    assert counts[0][1] == 2 and counts[-1] == (2, 2)  # 1 point + the interference test
    assert "interference: base load, then 1 background steps" in done.stdout
    assert _runs_counts(results) == (2, 2)


def test_the_steps_of_every_template() -> None:
    def on_scratch(name: str) -> int:  # as `run NAME` gets it: one scratch file
        return run_steps(with_targets(catalog.load_template(name), [], "/tmp/scratch.dat"))

    steps = {n: on_scratch(n) for n in catalog.template_names()}
    assert steps["quick"] == 25
    assert steps["cscs"] == 4 + 6  # 4 points and 6 thread levels of the metadata test
    assert steps["dbi-db"] == 60 + 1  # the interference test is a step
    assert steps["snia-pts"] == 69 * 25 + 1  # rounds at their maximum, write saturation


def test_the_eta_moves_while_a_silent_step_runs() -> None:
    model = RunProgress(total_steps=3, total_s=30.0)
    model.begin("interference", 20.0, now=100.0)
    etas = [model.eta(now) for now in (100.0, 105.0, 110.0, 119.0)]
    assert etas == [30.0, 25.0, 20.0, 11.0]
    assert model.fraction(110.0) == pytest.approx(10 / 30)
    model.end(now=121.0, counts=True)
    assert model.counts() == "1/3" and model.eta(121.0) == 10.0


def test_done_never_exceeds_total_and_the_pace_takes_over() -> None:
    model = RunProgress(total_steps=2, total_s=10.0)
    for now in (0.0, 5.0, 10.0):  # three steps of 5 s where two were counted
        model.begin("p", 5.0, now)
        model.end(now + 5.0, counts=True)
    assert model.counts() == "3/3"
    model.skip(5, 100.0)
    assert model.counts() == "3/3" and model.total_s >= model.done_s
    more = RunProgress(total_steps=4, total_s=4.0)
    more.begin("p", 4.0, 0.0)
    more.end(8.0, counts=True)  # the expected seconds are spent, 3 steps are left
    assert more.eta(8.0) == pytest.approx(3 * 8.0)
