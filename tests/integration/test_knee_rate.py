"""An open-loop rate as a share of a knee (`rate_of`, issue 37), with real fio on a scratch
file: a second workload runs at 50 % of the first's optimal point, measured earlier in the
same run; its intended rate is recorded in its `open_loop` object with the knee it came
from. A knee that cannot be found is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arraybench import cli
from arraybench.analysis.curves import CurvePoint
from arraybench.finding_kinds import OPEN_LOOP
from arraybench.records import PointRecord, RunRecord
from arraybench.report.sections.headlines import stored_headlines
from arraybench.store.db import Store
from tests.conftest import main_cli, needs_fio

pytestmark = [needs_fio, pytest.mark.paced]  # rates judged

RR = "  - {name: rr, pattern: random, bs: 4k, read: 100, ioengine: libaio}\n"


def _plan(tmp_path: Path, workloads: str) -> Path:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "name: knee\n"
        f"targets: [{{path: {tmp_path / 't.dat'}, size: 32m}}]\n"
        "timing: {ramp: 0s, duration: 2s}\n"
        "load: {workers: [1], iodepth: [1, 4]}\n"
        f"workloads:\n{workloads}"
    )
    return plan


def _only_run_knee(results: Path, series: str) -> tuple[RunRecord, list[PointRecord], CurvePoint]:
    """The one run in `results`, its points, and `series`' optimal point as the report gives
    it (the knee a `rate_of` share is taken of)."""
    store = Store(results, create=False)
    ((run, _),) = store.list_runs()
    points = store.points(run.id)
    optimal = stored_headlines(run, points, store.findings(run.id))[series].optimal
    assert optimal is not None
    return run, points, optimal


def test_a_workload_runs_at_half_the_first_ones_optimal_point(tmp_path: Path) -> None:
    half = ("  - {name: half, pattern: random, bs: 4k, read: 100, ioengine: libaio,\n"
            "     load: {workers: [2], iodepth: [8]},\n"
            "     rate_of: {workload: rr, share: 50}}\n")  # fmt: skip
    results = tmp_path / "res"
    assert cli.main(["run", str(_plan(tmp_path, RR + half)), "--results", str(results)]) == 0
    run, points, optimal = _only_run_knee(results, "rr")
    knee_iops = {p.key: p.metric("total", "iops") for p in points}[optimal.key]
    assert knee_iops
    shown = main_cli("show", "latest", "--results", str(results), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    by_key = {p["key"]: p for p in json.loads(shown.stdout)["points"]}
    [point] = [p for k, p in by_key.items() if k.startswith("half/")]
    ol = point["open_loop"]
    # 50 % of the knee over 2 jobs, each rounded up to a whole IOPS: within 2 IOPS of half
    assert ol["intended_iops"] == pytest.approx(0.5 * knee_iops, abs=2)
    assert ol["knee"] == {"run": run.id, "key": optimal.key, "iops": round(knee_iops, 1),
                          "share": 50}  # fmt: skip
    job = next((Path(run.folder) / "points").glob("*-half-*/point.fio")).read_text()
    assert f"rate_iops={int(ol['intended_iops']) // 2}" in job  # per job: the half of 2 jobs
    # the rr points themselves ran closed-loop: no open-loop object
    assert all(OPEN_LOOP.name not in p for k, p in by_key.items() if k.startswith("rr/"))


def test_a_knee_from_a_run_not_stored_is_refused_in_one_line(tmp_path: Path) -> None:
    half = ("  - {name: half, pattern: random, bs: 4k, read: 100,\n"
            "     rate_of: {workload: rr, run: no-such-run, share: 70}}\n")  # fmt: skip
    results = tmp_path / "res"
    done = main_cli("run", str(_plan(tmp_path, RR + half)), "--results", str(results))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    [line] = [x for x in done.stderr.splitlines() if "rate_of" in x]
    assert "workload half" in line and "'no-such-run'" in line and "not in this store" in line
    assert not Store(results, create=True).list_runs()  # refused before the run: none begun


@pytest.mark.parametrize(
    ("workloads", "said"),
    [
        ("  - {name: half, pattern: random, bs: 4k, read: 100,\n"
         "     rate_of: {workload: rr, share: 50}}\n" + RR, "'rr' is not listed before it"),
        (RR + "  - {name: half, pattern: random, bs: 4k, read: 100, rate_of: {share: 50}}\n",
         "its own series has this rate"),
        (RR + "  - {name: half, pattern: random, bs: 4k, read: 100, rate_iops: 100,\n"
         "     rate_of: {workload: rr, share: 50}}\n", "give one rate, not both"),
        (RR + "  - {name: half, pattern: random, bs: 4k, read: 100,\n"
         "     rate_of: {workload: rr, share: 50, scenario: b}}\n"
         "scenarios: [{name: a}, {name: b}]\n", "scenario 'b' is not the plan's first"),
    ],
)  # fmt: skip
def test_a_plan_whose_knee_cannot_be_measured_first_is_refused(
    tmp_path: Path, workloads: str, said: str
) -> None:
    done = main_cli("plan", "check", str(_plan(tmp_path, workloads)))
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr


def test_a_named_runs_knee_gives_the_rate_and_a_series_it_lacks_is_refused(
    tmp_path: Path,
) -> None:
    results = tmp_path / "res"
    assert cli.main(["run", str(_plan(tmp_path, RR)), "--results", str(results)]) == 0
    first, _, optimal = _only_run_knee(results, "rr")
    knee_iops = optimal.throughput
    # the same workload's own series in the named run: no `workload` needed
    again = ("  - {name: rr, pattern: random, bs: 4k, read: 100, ioengine: libaio,\n"
             "     load: {workers: [1], iodepth: [8]},\n"
             f"     rate_of: {{run: {first.id}, share: 70}}}}\n")  # fmt: skip
    plan = _plan(tmp_path, again)
    assert cli.main(["run", str(plan), "--results", str(results)]) == 0
    shown = main_cli("show", "latest", "--results", str(results), "--format", "json")
    [point] = json.loads(shown.stdout)["points"]
    ol = point["open_loop"]
    assert ol["intended_iops"] == pytest.approx(0.7 * knee_iops, abs=1)
    assert ol["knee"]["run"] == first.id and ol["knee"]["key"] == optimal.key
    lacking = again.replace("rate_of: {", "rate_of: {workload: other, ")
    done = main_cli("run", str(_plan(tmp_path, lacking)), "--results", str(results))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = [x for x in done.stderr.splitlines() if "rate_of" in x]
    assert f"names run '{first.id}', which has no point of workload other" in line


def test_a_later_scenario_runs_at_a_share_of_the_first_scenarios_knee(tmp_path: Path) -> None:
    # In&Out: the baseline's optimal point, then the degraded scenario at a share of it
    failover = ("  - {name: failover, pattern: random, bs: 4k, read: 100, ioengine: libaio,\n"
                "     load: {workers: [1], iodepth: [8]},\n"
                "     rate_of: {workload: rr, share: 50, scenario: base}}\n"
                "scenarios:\n  - {name: base}\n"
                "  - {name: degraded, before: [{prompt: pull}]}\n")  # fmt: skip
    results = tmp_path / "res"
    assert cli.main(["run", str(_plan(tmp_path, RR + failover)), "--results", str(results)]) == 0
    _, _, optimal = _only_run_knee(results, "base · rr")
    shown = main_cli("show", "latest", "--results", str(results), "--format", "json")
    by_key = {p["key"]: p for p in json.loads(shown.stdout)["points"]}
    for scenario in ("base", "degraded"):  # both at the baseline's knee, not their own
        ol = by_key[f"{scenario}/failover/w1-qd8"]["open_loop"]
        assert ol["knee"]["key"] == optimal.key, scenario
        assert ol["intended_iops"] == pytest.approx(0.5 * optimal.throughput, abs=1)
