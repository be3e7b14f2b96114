"""`arraybench compare` and acceptance verdicts on small runs, through the CLI. The runs are
the test engine's (tests/fake_engine.py): compare and the verdicts are the subject, not fio."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.units import format_pct
from tests.conftest import main_cli, small_plan
from tests.fake_engine import PLAN_LINES, registered

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("compare_acceptance")]


@pytest.fixture(scope="module", autouse=True)
def _fake_engine() -> Iterator[None]:
    with registered():  # for the module's runs and for every report of them (stored plans)
        yield


def _ids(results: Path) -> set[str]:
    if not results.exists():
        return set()
    runs = json.loads(main_cli("runs", "--results", str(results), "--format", "json").stdout)
    return {r["id"] for r in runs}


def _run(tmp_path: Path, results: Path, *extra: str) -> tuple[str, int]:
    before = _ids(results)
    plan = small_plan(tmp_path, extra=PLAN_LINES)
    done = main_cli("run", str(plan), "--results", str(results), *extra)
    assert done.returncode in (0, 3), done.stderr
    [new] = _ids(results) - before
    return new, done.returncode


def _maxima(results: Path, run_id: str) -> dict[str, float]:
    """Each workload's maximum by the headline rule: flagged points (a busy machine flags
    them host-busy) left out unless every point of the workload is flagged."""
    shown = main_cli("show", run_id, "--results", str(results), "--format", "json")
    by_workload: dict[str, list[dict]] = {}
    for p in json.loads(shown.stdout)["points"]:
        by_workload.setdefault(p["workload"], []).append(p)
    best: dict[str, float] = {}
    for workload, points in by_workload.items():
        trusted = [p for p in points if not p["flags"]] or points
        best[workload] = max(p["total_iops"] if p["unit"] == "IOPS" else p["total_mbps"]
                             for p in trusted)  # fmt: skip
    return best


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    tmp = tmp_path_factory.mktemp("cmp")
    results = tmp / "res"
    first, _ = _run(tmp, results)
    second, _ = _run(tmp, results, "--only", "rand-*", "--set", "scenario=changed")
    return results, first, second


def test_compare_gives_deltas_against_the_baseline(two_runs: tuple[Path, str, str], tmp_path):
    results, first, second = two_runs
    out = tmp_path / "cmp.html"
    done = main_cli("compare", f"{first}:before", second, "--results", str(results), "-o",
                    str(out), "-o", str(tmp_path / "cmp.md"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    a, b = _maxima(results, first), _maxima(results, second)
    delta = (b["rand-8k-rw70"] - a["rand-8k-rw70"]) / a["rand-8k-rw70"] * 100
    assert format_pct(delta, signed=True) in done.stdout  # "+4.5 %": units' one formatter
    assert "baseline" in done.stdout and "changed" in done.stdout
    # the workload the second run left out is listed, not silently dropped
    assert "seq-128k-read is missing from: changed" in " ".join(done.stdout.split())
    html = out.read_text()
    assert html.count("<svg") >= 2 and "before" in html and "changed" in html  # one a workload
    assert "| rand-8k-rw70 | before |" in (tmp_path / "cmp.md").read_text()


def test_compare_refuses_an_unknown_baseline(two_runs: tuple[Path, str, str]):
    results, first, second = two_runs
    done = main_cli("compare", first, second, "--baseline", "nope", "--results", str(results))
    assert done.returncode == 2 and "--baseline nope" in done.stderr
    assert "Traceback" not in done.stderr


def test_acceptance_verdicts_gate_the_exit_code(tmp_path: Path):
    results = tmp_path / "res"
    # on a busy machine a point may be flagged host-busy, and flagged points decide no verdict
    # (tests/integration/test_flagged_headlines.py): kept in here, this test is the exit code's
    keep = PLAN_LINES + "report: {headline_includes_flagged: true}\n"
    passing = keep + "acceptance:\n  - {workload: 'rand-*', min_iops: 1, max_lat_p99: 10s}\n"
    plan = small_plan(tmp_path, workers="[1]", extra=passing)
    done = main_cli("run", str(plan), "--results", str(results), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 0, done.stderr
    assert "PASS" in done.stdout and "1 of 1 passed" in done.stdout
    failing = passing + "  - {workload: seq-128k-read, min_mbps: 1000000000}\n"
    plan = small_plan(tmp_path, workers="[1]", extra=failing)
    done = main_cli("run", str(plan), "--results", str(results), "-o", str(tmp_path / "f.html"))
    assert done.returncode == 3, done.stderr
    lines = [
        line for line in done.stdout.splitlines() if "seq-128k-read" in line and "FAIL" in line
    ]
    assert lines and "seq-128k-read/w1-qd2" in lines[0]
    html = (tmp_path / "f.html").read_text()
    assert "Acceptance criteria" in html and "FAIL" in html
    assert "Provenance" in html or "provenance" in html


def test_acceptance_naming_an_unknown_workload_is_a_plan_error(tmp_path: Path):
    extra = "acceptance:\n  - {workload: nope, min_iops: 1}\n"
    done = main_cli("plan", "check", str(small_plan(tmp_path, extra=extra)))
    assert done.returncode == 2 and "nope" in done.stderr and "Traceback" not in done.stderr


def test_an_unknown_report_format_is_refused_before_the_campaign(tmp_path: Path):
    results = tmp_path / "res"
    done = main_cli("run", str(small_plan(tmp_path)), "--results", str(results), "-o", "r.docx")
    assert done.returncode == 2 and "unknown report format '.docx'" in done.stderr
    assert "Traceback" not in done.stderr and not list(results.glob("runs/*"))
