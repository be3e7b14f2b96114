"""plan `scenarios:`: the YAML forms, the located errors, the points per scenario, the outline,
the step records and the impact table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arraybench.errors import PlanError
from arraybench.plan.expand import expand
from arraybench.plan.load import parse_plan_text
from arraybench.plan.model import Plan
from arraybench.plan.scenarios import Step
from arraybench.point_identity import from_key
from arraybench.report.build import series_name
from arraybench.report.sections.headlines import run_headlines
from arraybench.report.sections.scenarios import impact_tables, paths_table, scenario_overlays
from arraybench.report.sections.spread import LevelFacts
from arraybench.run.adaptive_series import run_adaptive
from arraybench.run.outline import plan_outline
from arraybench.run.scenarios import (
    ScenarioStepError,
    ScenarioSteps,
    run_label,
    split_by_scenario,
    step_argv,
)
from arraybench.store.db import Finding, PointRecord, RunRecord
from tests.records import BLANK_POINT, keyed

HEAD = """name: t
hosts:
  - {name: h1, address: 10.0.0.1, ssh: {user: bench, key: /k}}
  - {name: h2, address: 10.0.0.2}
targets: [{path: /tmp/x.dat, size: 16m}]
load: {workers: [1, 2], iodepth: [1]}
workloads: [{name: rr, pattern: random, bs: 4k, read: 100}]
"""
GOOD = (
    HEAD
    + """scenarios:
  - {name: C4, label: "4 controllers"}
  - name: C3
    label: "-1 controller"
    before:
      - prompt: "Pull controller A"
      - run: [multipath, -ll]
      - run: {argv: [dmsetup, status, "a b;c"], timeout: 5s, host: h1, on_failure: continue}
    after:
      - prompt: {text: "Plug it back", assume_after: 2s}
"""
)


def _plan(text: str = GOOD) -> Plan:
    return parse_plan_text(text, "p.yaml")


def test_the_yaml_forms_and_the_points_of_every_scenario() -> None:
    plan = _plan()
    assert plan.scenarios is not None
    c3 = plan.scenarios[1]
    assert [s.kind for s in c3.before] == ["prompt", "run", "run"]
    assert c3.before[0].prompt and c3.before[0].prompt.text == "Pull controller A"
    assert c3.before[1].run and c3.before[1].run.timeout == 60 and c3.before[1].run.host is None
    assert c3.after[0].prompt and c3.after[0].prompt.assume_after == 2
    points = expand(plan)
    assert [(p.seq, p.key, p.scenario) for p in points] == [
        (1, "C4/rr/w1-qd1-h2", "C4"), (2, "C4/rr/w2-qd1-h2", "C4"),
        (3, "C3/rr/w1-qd1-h2", "C3"), (4, "C3/rr/w2-qd1-h2", "C3")]  # fmt: skip
    assert points[0].series != points[2].series  # one curve per scenario
    assert [p.identity.scenario for p in points] == ["C4", "C4", "C3", "C3"]
    assert [from_key(p.key, "rr", p.scenario) for p in points] == [p.identity for p in points]
    assert [(s, len(ps)) for s, ps in split_by_scenario(points)] == [("C4", 2), ("C3", 2)]
    assert run_label("default", plan.scenarios) == "C4 + C3"
    assert run_label("L1C4S4", plan.scenarios) == "L1C4S4"


def test_a_remote_step_quotes_every_word_for_the_remote_shell() -> None:
    plan = _plan()
    assert plan.scenarios is not None
    argv = step_argv(plan, plan.scenarios[1].before[2])
    assert argv[0] == "ssh" and argv[-3:] == ["--", "bench@10.0.0.1", "dmsetup status 'a b;c'"]


@pytest.mark.parametrize(
    ("scenarios", "expected"),
    [
        ("scenarios: []\n", "p.yaml:8 scenarios: List should have at least 1 item"),
        ("scenarios: [{name: A}, {name: A}]\n", "p.yaml:8 scenarios: scenario names must be "
         "unique; repeated: A"),
        ("scenarios: [{name: A, before: [{run: {argv: [x], host: h9}}]}]\n",
         "p.yaml:8 scenarios: scenario A: before[0].run.host 'h9' is not a plan host "
         "(hosts: h1, h2)"),
        ("scenarios: [{name: A, after: [{run: {argv: [x], host: h2}}]}]\n",
         "scenario A: after[0].run.host 'h2' has no ssh settings"),
        ("scenarios:\n  - name: A\n    before: [{prompt: x, run: [y]}]\n",
         "p.yaml:10 scenarios[0].before[0]: give exactly one of prompt or run"),
        ("scenarios: [{name: A, before: [{run: []}]}]\n",
         "scenarios[0].before[0].run.argv: List should have at least 1 item"),
        ("scenarios: [{name: A, before: [{run: [echo, true]}]}]\n",
         "scenarios[0].before[0].run.argv[1]: a YAML boolean here"),
        ("scenarios: [{name: A, before: [{run: [\"a\\x00b\"]}]}]\n",
         "scenarios[0].before[0].run.argv: a word holds a NUL character"),
        ("scenarios: [{name: 'a/b'}]\n", "scenarios[0].name: use letters, digits"),
        ("scenarios: [{name: A, label: \"x\\ny\"}]\n", "scenarios[0].label: one line of text"),
        ("scenarios: [{name: A, during: []}]\n", "scenarios[0].during: unknown key"),
        ("scenarios: [{name: A, before: [{prompt: {text: x, assume_after: -1s}}]}]\n",
         "scenarios[0].before[0].prompt.assume_after"),
        ("rounds: {workloads: [rr], track: rr}\nscenarios: [{name: A}]\n",
         "rounds, interference and metadata do not run per scenario"),
    ],
)  # fmt: skip
def test_mistakes_are_one_located_line(scenarios: str, expected: str) -> None:
    with pytest.raises(PlanError) as caught:
        _plan(HEAD + scenarios)
    assert expected in caught.value.one_line()


def test_the_outline_shows_each_scenario_with_its_steps() -> None:
    outline = plan_outline(_plan())
    phases = [p for p in outline.phases if p.kind == "scenario"]
    assert [p.title.split(":")[0] for p in phases] == [
        "scenario C4 (4 controllers)", "scenario C3 (-1 controller)"]  # fmt: skip
    assert phases[1].details == (
        'before: prompt "Pull controller A"',
        "before: run multipath -ll (timeout 60s)",
        "before: run dmsetup status a b;c on h1 (timeout 5s)",
        'after: prompt "Plug it back"',
    )
    assert phases[1].span.high is None  # an operator may take any time
    assert outline.steps == 4
    assert any("prompts wait for the operator" in n for n in outline.notes)


class _Store:
    def __init__(self) -> None:
        self.found: list[tuple[str, dict]] = []

    def add_finding(self, run_id: str, kind: str, data: dict) -> None:
        self.found.append((kind, data))


def test_prompt_steps_are_confirmed_or_assumed_and_commands_recorded() -> None:
    plan = _plan(GOOD.replace("hosts:\n  - {name: h1, address: 10.0.0.1, ssh: "
                              "{user: bench, key: /k}}\n  - {name: h2, address: 10.0.0.2}\n", "")
                 .replace(", host: h1", ""))  # fmt: skip
    assert plan.scenarios is not None
    c3 = plan.scenarios[1]
    asked: list[str] = []
    slept: list[float] = []
    steps = ScenarioSteps(_Store(), "r", plan, confirm=asked.append, announce=lambda t, s: None,  # type: ignore[arg-type]
                          finished=lambda: None, warning=print, sleep=slept.append)  # fmt: skip
    record = steps.run_step(c3, "before", 0, c3.before[0])
    assert (record.outcome, record.done, asked) == ("confirmed", True, ["scenario C3 (-1 "
                                                    "controller): Pull controller A"])  # fmt: skip

    def closed(text: str) -> None:
        raise EOFError

    steps.confirm = closed  # Ctrl-D at the prompt: one line, resumable, not a traceback
    with pytest.raises(ScenarioStepError, match=r"before\[0\] prompt .*end of input"):
        steps.run_step(c3, "before", 0, c3.before[0])
    steps.confirm = None  # non-interactive: wait assume_after, say it was assumed
    record = steps.run_step(c3, "after", 0, c3.after[0])
    assert (record.outcome, slept) == ("assumed", [2.0]) and "non-interactive" in record.detail
    record = steps.run_step(c3, "before", 2, c3.before[2])  # dmsetup status on no such map
    assert record.outcome in ("failed", "ok") and record.done  # on_failure: continue
    missing = Step.model_validate({"run": ["/nonexistent/cmd"]})
    record = steps.run_step(c3, "before", 1, missing)
    assert (record.outcome, record.done) == ("failed", False)
    assert "could not start" in record.detail


def _point(scenario: str, seq: int, workers: int, iops: float, lat: float) -> PointRecord:
    metrics = dict(BLANK_POINT.metrics, total_iops=iops, total_lat_mean_us=lat)
    return keyed(BLANK_POINT, f"{scenario}/rr/w{workers}-qd1", id=seq, seq=seq,
                 workload="rr", workers=workers, scenario=scenario, metrics=metrics)  # fmt: skip


RUN = RunRecord(id="r", plan_name="t", scenario="C4 + C3", labels={}, plan_yaml="", folder="/x",
                scale=1, status="complete", started="", finished=None, total_points=4,
                engine_version=None, arraybench_version="0", host="h", kernel="k", targets=[],
                latency_bound_us=1000.0, latency_stat="mean")  # fmt: skip


def test_the_impact_table_gives_each_scenario_against_the_first() -> None:
    points = [_point("C4", 1, 1, 400_000, 100), _point("C4", 2, 2, 763_000, 180),
              _point("C3", 3, 1, 300_000, 130), _point("C3", 4, 2, 470_000, 260)]  # fmt: skip
    assert series_name(points[0]) == "C4 · rr" and series_name(points[2]) == "C3 · rr"
    [table] = impact_tables(
        points, {"C3": "-1 controller"}, run_headlines(points, RUN, LevelFacts())
    )
    assert table.columns == ["Scenario", "Set-up", "Read"]
    assert table.rows[0] == ["C4", "", "763 kIOPS Max; optimal 763 kIOPS @ 180 µs"]
    # In&Out table II: 470 kIOPS Max -38 %
    # its optimal point stays at 1 worker: the latency doubles for +57 % IOPS; its impact
    # is read at C4's optimal load, 2 workers (not its own 300k at 1 worker: -60.7 %)
    cell = ("470 kIOPS Max -38.4 %; optimal 300 kIOPS @ 130 µs; against C4's optimal point: "
            "-38.4 % at w2-qd1 (470 kIOPS @ 260 µs, latency +44.4 %)")  # fmt: skip
    assert table.rows[1] == ["C3", "-1 controller", cell]
    [overlay] = scenario_overlays(points)  # one chart, a line per scenario
    assert overlay.title == "Scenarios: rr" and [line.label for line in overlay.lines] == [
        "C4", "C3"]  # fmt: skip
    assert overlay.lines[1].iops == [300_000, 470_000]
    imported = keyed(points[0], "rr/w1-qd1")  # an import's scenario: not a campaign's
    headlines = run_headlines([imported], RUN, LevelFacts())
    assert impact_tables([imported], {}, headlines) == [] and series_name(imported) == "rr"


def test_the_readme_example_is_valid_with_the_readme_hosts() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL)
    scenarios = next(b for b in blocks if b.startswith("scenarios:"))
    hosts = next(b for b in blocks if b.startswith("hosts:"))
    workloads = "workloads: [{name: rr, pattern: random, bs: 4k, read: 100}]\n"
    plan = _plan(f"name: r\n{workloads}{hosts}{scenarios}")
    assert plan.scenarios and [s.name for s in plan.scenarios] == ["C4", "C3"]


def test_an_adaptive_series_is_one_per_scenario() -> None:
    plan = _plan(GOOD.replace("load: {workers:", "load: {adaptive: exact, workers:"))
    points = expand(plan)
    findings = []
    for name in ("C4", "C3"):
        series = [p for p in points if p.scenario == name]
        findings.append(run_adaptive(series, "exact", 1000.0, "mean", lambda p: None).finding)
    assert [f["series"] for f in findings] == ["C4 · rr", "C3 · rr"]
    assert findings[1]["tried"][0] == "C3/rr/w1-qd1-h2"


def test_the_scenarios_page_examples_are_valid_plans() -> None:
    page = (Path(__file__).parents[2] / "docs" / "scenarios.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", page, re.DOTALL)
    plans = [parse_plan_text(block, "docs/scenarios.md") for block in blocks]
    assert [[s.name for s in p.scenarios or []] for p in plans] == [
        ["L1C4S2", "L1C3S2", "L1C2S2"], ["baseline", "degraded"]]  # fmt: skip
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    assert "](docs/scenarios.md)" in readme


def _paths(scenario: str, moment: str, t: float, devices: list[str]) -> Finding:
    view = {"recorded": True, "why_not": None, "targets": ["/dev/mapper/m: dm-3, visible"],
            "devices": devices}  # fmt: skip
    gone = {"recorded": False, "why_not": "no ssh settings", "targets": [], "devices": []}
    data = {"scenario": scenario, "moment": moment, "t": t, "resumed": False,
            "hosts": {"h1": view, "h2": gone}}  # fmt: skip
    return Finding(None, "scenario_paths", data)


def test_the_paths_table_says_what_changed_since_the_moment_before() -> None:
    found = [_paths("C3", "before", 0.0, ["sdc 100", "sdd 100"]),
             _paths("C3", "start", 60.0, ["sdd 100"]),
             _paths("C3", "end", 120.0, ["sdd 100", "sde 100"])]  # fmt: skip
    [table] = paths_table(found)
    assert [(r[0], r[1], r[2], r[3], r[5]) for r in table.rows] == [
        ("C3", "h1", "before its steps", "00:00:00", "–"),
        ("C3", "h2", "before its steps", "00:00:00", "–"),
        ("C3", "h1", "at its start", "00:01:00", "gone: sdc"),
        ("C3", "h2", "at its start", "00:01:00", "–"),
        ("C3", "h1", "at its end", "00:02:00", "new: sde"),
        ("C3", "h2", "at its end", "00:02:00", "–")]  # fmt: skip
    assert table.rows[0][4] == "/dev/mapper/m: dm-3, visible (2 block devices)"
    assert table.rows[1][4] == "not recorded: no ssh settings"


def test_moments_that_changed_nothing_extend_the_row_before() -> None:
    found = [_paths("A", "before", 0.0, ["sdc 100"]), _paths("A", "start", 60.0, ["sdc 100"]),
             _paths("A", "end", 120.0, ["sdc 100"]), _paths("A", "after", 130.0, ["sdd 1"]),
             _paths("B", "before", 140.0, ["sdd 1"]),
             _paths("B", "start", 150.0, ["sdd 1"])]  # fmt: skip
    [table] = paths_table(found)
    h1 = [(r[0], r[2], r[3], r[5]) for r in table.rows if r[1] == "h1"]
    assert h1 == [
        ("A", "before its steps to at its end", "00:00:00 to 00:02:00", "–"),
        ("A", "after its steps", "00:02:10", "gone: sdc; new: sdd"),
        ("B", "before its steps to at its start", "00:02:20 to 00:02:30", "no change"),
    ]  # a new scenario opens its own row: its first moment is said even when unchanged
    assert len([r for r in table.rows if r[1] == "h2"]) == 6  # not recorded: never merged


def test_an_unreachable_host_paths_are_said_not_recorded_with_why() -> None:
    plan = _plan(GOOD.replace("{name: h1, address: 10.0.0.1, ssh: {user: bench, key: /k}}",
                              "{name: h1, address: 127.0.0.1, ssh: {port: 1}}"))  # fmt: skip
    steps = ScenarioSteps(_Store(), "r", plan, confirm=None, announce=lambda t, s: None,  # type: ignore[arg-type]
                          finished=lambda: None, warning=print)  # fmt: skip
    views = steps.views()
    assert not views["h1"].recorded and "exited with code 255" in str(views["h1"].why_not)
    assert not views["h2"].recorded and "no ssh settings" in str(views["h2"].why_not)
