"""`pause_after: gc` with no GC rate known (hus-fmd when its write-cliff test finds no cliff):
said once on the console and once in the report, with the reason the run had, never once per
point, and never telling the user to run the cliff test they ran."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import main_cli, small_plan
from tests.fake_engine import PLAN_LINES

# the fake engine's seconds are all the same figure: the cliff test finds no cliff
CLIFF_THEN_GC = (
    "  - {name: cliff, pattern: random, bs: 8k, read: 0, analysis: [cliff]}\n"
    "  - {name: g2-a, pattern: random, bs: 8k, read: 0, pause_after: gc}\n"
    "  - {name: g2-b, pattern: random, bs: 64k, read: 0, pause_after: gc}\n"
)


def _run(tmp_path: Path, workloads: str) -> tuple[str, str, Path]:
    plan = small_plan(tmp_path, workers="[1, 2, 4]", extra=PLAN_LINES, workloads=workloads)
    results = tmp_path / "res"
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stderr
    run_id = json.loads(main_cli("runs", "--results", str(results), "--format", "json").stdout)[
        0]["id"]  # fmt: skip
    md = tmp_path / "r.md"
    assert main_cli("report", run_id, "--results", str(results), "-o", str(md)).returncode == 0
    unescaped = re.sub(r"\\(.)", r"\1", md.read_text())  # Markdown's `\_`, `\[`
    return done.stdout + done.stderr, unescaped, results


@pytest.mark.usefixtures("fake_engine")
def test_no_cliff_found_is_said_once_and_truthfully(tmp_path: Path) -> None:
    console, report, _ = _run(tmp_path, CLIFF_THEN_GC)
    said = [line for line in console.splitlines() if "gc skipped" in line]
    assert len(said) == 1, console  # 6 points skipped their pause: one warning
    text = " ".join(console.split())
    assert "the write-cliff test ran (3 point(s)) and found no write cliff" in text
    assert "run a workload with analysis: [cliff]" not in text  # they ran it
    notes = [line for line in report.splitlines() if "pause_after: gc was skipped" in line]
    assert len(set(notes)) == 1  # one note (the notes box and the appendix's list may both hold it)
    assert "after 6 of the points that ask for it (g2-a, g2-b)" in notes[0]
    assert "found no write cliff to measure it from; set gc_throughput" in notes[0]


@pytest.mark.usefixtures("fake_engine")
def test_without_a_cliff_test_the_reason_says_how_to_get_a_rate(tmp_path: Path) -> None:
    console, report, _ = _run(tmp_path, CLIFF_THEN_GC.split("\n", 1)[1])
    assert console.count("pause_after: gc skipped") == 1
    assert "or run a workload with analysis: [cliff] before it" in " ".join(report.split())


@pytest.mark.usefixtures("fake_engine")
def test_a_known_rate_pauses_and_says_nothing(tmp_path: Path) -> None:
    plan = small_plan(tmp_path, workers="[1]", extra=PLAN_LINES + "gc_throughput: 10g\n",
                      workloads=CLIFF_THEN_GC)  # fmt: skip
    done = main_cli("run", str(plan), "--results", str(tmp_path / "res"))
    assert done.returncode == 0, done.stderr
    assert "gc skipped" not in done.stdout + done.stderr
