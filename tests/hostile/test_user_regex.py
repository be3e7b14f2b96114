"""Regular expressions a user gives (`import --pattern`, a `signal` event's `process`) that
backtrack for ever under Python's `re` (nested or overlapping quantifiers against text that
almost matches): matched by RE2 in linear time, they return at once. What RE2 cannot match in
bounded time (backreferences, lookaround, huge repetitions) is refused with one line, exit 2,
before anything is read or written. Globs (`--only`) are fnmatch's, linear already."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arraybench.events.errors import InjectorError
from arraybench.events.procs import find_processes
from arraybench.userregex import UserRegexError, compile_user_regex
from tests.conftest import main_cli, needs_fio, small_plan
from tests.hostile.stores import SAMPLE, refused, results_with_a_run, snapshot
from tests.records import stored_findings

pytestmark = pytest.mark.timeout(60)  # a backtracking matcher would hang: fail, never block CI

# each takes 2^n steps or more in Python's re against n characters that almost match
EXPONENTIAL = [
    r"(?P<workload>(a+)+)$",
    r"(?P<workload>(a|aa)+)$",
    r"(?P<workload>(a|a?)+)$",
    r"(?P<workload>(\w+\w?)+)!x",
    r"^(?P<label_x>([a-z]+_?)+)\.csv$",
]


@pytest.mark.parametrize("pattern", EXPONENTIAL)
def test_import_pattern_that_backtracks_returns_at_once(tmp_path: Path, pattern: str) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    name = "a" * 80 + "!.json"  # almost matches every pattern above: the worst case for re
    shutil.copy(SAMPLE, folder / name)
    started = time.monotonic()
    done = main_cli("import", str(folder), "--pattern", pattern, "--results",
                    str(tmp_path / "results"))  # fmt: skip
    assert time.monotonic() - started < 10
    assert done.returncode == 0, done.stderr
    assert "imported 1 point(s)" in done.stdout


@pytest.mark.parametrize(
    ("pattern", "said"),
    [
        (r"(?P<workload>a+)\1", "invalid escape sequence: \\1"),
        (r"(?P<workload>\w+)(?=-BS)", "invalid perl operator: (?="),
        (r"(?<=Type)(?P<rw>\w+)", "invalid perl operator: (?<"),
        (r"(?P<workers>((a{1000}){1000}){1000})", "invalid repetition size"),
        (r"(?P<bs>[", "missing ]"),
    ],
)
def test_import_pattern_re2_cannot_bound_is_refused_before_anything(
    tmp_path: Path, pattern: str, said: str
) -> None:
    results = tmp_path / "results"
    results_with_a_run(results)
    before = snapshot(results)
    line = refused(["import", str(SAMPLE), "--pattern", pattern, "--results", str(results)],
                   said)  # fmt: skip
    assert "matched in linear time (RE2)" in line
    assert snapshot(results) == before


def test_a_signal_process_pattern_re2_refuses_is_a_located_plan_error(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "name: sig\n"
        f"targets:\n  - path: {tmp_path / 't.dat'}\n    size: 16m\n"
        "timing: {ramp: 0s, duration: 2s}\n"
        "load: {workers: [1], iodepth: [1]}\n"
        "workloads:\n"
        "  - name: rr\n    pattern: random\n    bs: 4k\n    read: 100\n"
        "    events:\n      - {at: 1s, signal: {process: '(fio)\\1', full: true}}\n"
    )
    line = refused(["plan", "check", str(plan)], "invalid escape sequence")
    assert str(plan) in line and "RE2" in line


def test_a_signal_process_pattern_that_backtracks_is_matched_in_linear_time() -> None:
    """A real process whose command line almost matches `(x+x+)+y`: Python's re would take
    2^4000 steps on it; RE2 answers at once, and a plain pattern still finds it."""
    marker = "x" * 4000
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
    try:
        deadline = time.monotonic() + 5
        while proc.pid not in find_processes("x{1000}x{1000}x{1000}x{1000}", full=True):
            assert time.monotonic() < deadline, "the process never appeared"
            time.sleep(0.05)
        started = time.monotonic()
        assert proc.pid not in find_processes(r"(x+x+)+y", full=True)
        assert proc.pid not in find_processes(r"(x|xx)+$z", full=True)
        assert time.monotonic() - started < 5
    finally:
        proc.kill()
        proc.wait()


@needs_fio
def test_a_run_whose_signal_event_pattern_backtracks_completes(tmp_path: Path) -> None:
    """A real run: its `signal` event names processes by a pattern with a nested quantifier,
    and a process whose command line almost matches it for 4000 characters is running. The
    event freezes the process its other branch names, reverts, and the run completes."""
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "x" * 4000])
    pattern = r"(x+x+)+y|sleep\(60\) x{1000}x{1000}x{1000}x{1000}$"
    events = (f"    events:\n      - {{at: 1s, duration: 1s, label: freeze, signal: "
              f"{{process: '{pattern}', full: true}}}}\n")  # fmt: skip
    workloads = f"  - name: rr\n    pattern: random\n    bs: 4k\n    read: 100\n{events}"
    plan = small_plan(tmp_path, workers="[1]", workloads=workloads)
    plan.write_text(plan.read_text().replace("duration: 1s", "duration: 3s"))
    results = tmp_path / "results"
    try:
        started = time.monotonic()
        done = main_cli("run", str(plan), "--results", str(results))
        assert done.returncode == 0, done.stderr
        assert time.monotonic() - started < 60
    finally:
        victim.kill()
        victim.wait()
    [found] = stored_findings(results, "events")
    steps = {(r["action"], r["outcome"]) for r in found["records"]}
    assert ("apply", "ok") in steps and ("revert", "ok") in steps, found["records"]


def test_a_hand_made_plan_pattern_is_refused_by_the_injector_too() -> None:
    with pytest.raises(InjectorError, match="RE2"):
        find_processes(r"(fio)\1")


def test_user_regex_matches_names_that_are_not_utf8() -> None:
    """A file name with an undecodable byte (a surrogate escape in Python) is matched with it
    as `\\xNN` (as it is shown everywhere), never an exception."""
    regex = compile_user_regex(r"w(?P<workers>\d+)", "--pattern")
    assert regex.groups("run-\udcff-w8.json") == {"workers": "8"}
    label = compile_user_regex(r"run-(?P<label_array>[^-]+)-", "--pattern")
    assert label.groups("run-\udcff-w8.json") == {"label_array": "\\xff"}
    with pytest.raises(UserRegexError):
        compile_user_regex("(?P<x>a)(?P=x)", "--pattern")


def test_only_globs_with_many_stars_return_at_once() -> None:
    glob = "*a" * 60 + "*q"
    started = time.monotonic()
    refused(["plan", "check", "quick", "--only", glob], "no workload of plan quick matches")
    assert time.monotonic() - started < 5
