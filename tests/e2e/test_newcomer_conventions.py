"""Conventions a new user relies on: help on every option, $ARRAYBENCH_RESULTS, `latest`,
one meaning of -o, plan words printed as written, honest report titles, a quiet install."""

from __future__ import annotations

import argparse
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from arraybench import cli, console
from arraybench.progressbar import ProgressObserver
from arraybench.report.sections.failures import impact_table
from arraybench.report.sections.summary import report_title, shown_scenario
from arraybench.report.sections.timelines import event_lines
from arraybench.store.db import Store
from tests.conftest import DATA, small_plan
from tests.fake_engine import PLAN_LINES

ROOT = Path(__file__).resolve().parents[2]


Parsers = list[tuple[str, argparse.ArgumentParser]]


def _parsers(parser: argparse.ArgumentParser, path: str) -> Parsers:
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _parsers(sub, f"{path} {name}")
    return found


def test_every_option_and_argument_has_help() -> None:
    missing = []
    for path, parser in _parsers(cli._parser(), "arraybench"):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                continue
            if not (action.help or "").strip():
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []


def test_the_walk_sees_every_command() -> None:
    paths = {p for p, _ in _parsers(cli._parser(), "arraybench")}
    assert {"arraybench run", "arraybench plan check", "arraybench plan schema",
            "arraybench hosts check", "arraybench compare"} <= paths  # fmt: skip


def _import(results: Path, name: str) -> None:
    source = DATA / "fresh_fio3.33_jsonplus_randrw_2jobs.json"
    assert cli.main(["import", str(source), "--name", name]) == 0


def test_results_from_the_environment_and_latest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "res"
    monkeypatch.setenv("ARRAYBENCH_RESULTS", str(results))
    assert cli.main(["show", "latest"]) == 2
    assert f"no results store at {results}" in capsys.readouterr().err
    Store(results)  # an empty store: `latest` names no run
    assert cli.main(["show", "latest"]) == 2
    assert f"latest: no runs in {results} yet" in capsys.readouterr().err
    _import(results, "first")
    _import(results, "second")
    runs = Store(results, create=False).list_runs()
    assert len(runs) == 2  # written where the variable says, without --results
    newest = max(runs, key=lambda r: (r[0].started, r[0].id))[0].id
    capsys.readouterr()
    assert cli.main(["show", "latest", "--format", "json"]) == 0
    assert f'"id": "{newest}"' in capsys.readouterr().out
    out = tmp_path / "latest.md"
    assert cli.main(["report", "latest", "-o", str(out)]) == 0
    assert newest in out.read_text()
    oldest = min(r[0].id for r in runs)
    assert cli.main(["compare", f"{oldest}:a", "latest:b", "-o", str(tmp_path / "c.md")]) == 0
    assert (tmp_path / "c.md").exists()
    assert cli.main(["runs", "--results", str(tmp_path / "other")]) == 2  # --results still wins


@pytest.mark.usefixtures("fake_engine")  # the options are the subject: the test engine's run
def test_o_is_the_report_file_and_report_still_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = small_plan(tmp_path, workers="[1]", extra=PLAN_LINES,
                      workloads="  - {name: r, pattern: random, bs: 8k, read: 100}\n")  # fmt: skip
    a, b = tmp_path / "a.md", tmp_path / "b.csv"
    args = ["run", str(plan), "--results", str(tmp_path / "r"), "-o", str(a), "--report", str(b)]
    assert cli.main(args) == 0
    assert a.read_text().startswith("# arraybench small") and b.read_text().count("\n") >= 2
    assert "--report is the old spelling of -o/--output" in capsys.readouterr().err


def test_plan_words_in_warnings_are_printed_as_written(capsys: pytest.CaptureFixture[str]):
    ProgressObserver().warning("run a workload with analysis: [cliff] first")
    assert "analysis: [cliff] first" in capsys.readouterr().err
    console.print_error("bad key [x]")
    assert "bad key [x]" in capsys.readouterr().err


def test_a_scratch_file_run_is_not_titled_with_the_template_scenario(tmp_path: Path) -> None:
    _import_run = tmp_path / "r"
    assert cli.main(["import", str(DATA / "fresh_fio3.33_jsonplus_randrw_2jobs.json"),
                     "--results", str(_import_run)]) == 0  # fmt: skip
    run = Store(_import_run, create=False).list_runs()[0][0]
    scratch = replace(run, plan_name="inout", scenario="L1C4S1",
                      targets=[str(tmp_path / "scratch" / "arraybench-scratch.dat")])  # fmt: skip
    assert report_title(scratch) == "arraybench inout: scratch file"
    lun = replace(scratch, targets=["/dev/mapper/lun1"])
    assert report_title(lun) == "arraybench inout"  # the template's label, not the user's
    assert shown_scenario(lun) == "" and shown_scenario(replace(lun, scenario="default")) == ""
    mine = replace(lun, scenario="L2C4S1")  # the user's --set scenario=L2C4S1
    assert report_title(mine) == "arraybench inout: L2C4S1" and shown_scenario(mine) == "L2C4S1"


def test_pyproject_license_is_an_spdx_string() -> None:
    """A license table makes setuptools print ~30 lines of deprecation at every install."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    assert "jsonschema>=4.18" in project["optional-dependencies"]["dev"]


@pytest.mark.parametrize(
    ("start", "revert", "said"),
    [
        (2.0, None, "2.0 s after the start; not after the revert"),
        (None, None, "not before the point ended"),
        (None, 3.0, "3.0 s after the revert"),
        (0.0, 0.0, "no dip"),
    ],
)
def test_terminal_table_and_chart_notes_say_the_same_recovery(
    start: float | None, revert: float | None, said: str
) -> None:
    """The impact table (terminal, HTML, Markdown) and the chart's note under it agree."""
    impact = {"label": "path A", "kind": "throttle", "start_unix": 1e9, "end_unix": 1e9 + 10,
              "baseline": 1000.0, "low": 10.0, "dip_pct": 99.0, "baseline_seconds": 5,
              "recovery_after_start_s": start, "recovery_after_revert_s": revert,
              "max_latency_us": 900.0}  # fmt: skip
    data = {"impact": [impact]}
    table = impact_table("w/w1-qd1", "IOPS", data)
    assert table.columns[5] == "Back within 5 %" and table.rows[0][5] == said
    assert event_lines(data) == [f"path A: dip 99.0 % against the 5 s before; back within 5 %: "
                                 f"{said}"]  # fmt: skip
