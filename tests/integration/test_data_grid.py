"""`data_grid:` through real fio: one run writes each workload under two data presets, stores
each copy's points with their data, and the report sets them side by side per load level in
every format (docs/data.md, "Data as a grid dimension")."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from openpyxl import load_workbook

from arraybench.errors import PlanError
from arraybench.plan.load import parse_plan_text
from arraybench.report.render.pdf import printout
from tests.conftest import main_cli, needs_fio

TITLE = "Data with and without reduction: throughput and latency per load level"
LEVELS = ("w1-qd1", "w1-qd2")


def grid_plan(tmp_path: Path, workload: str = "{name: fill, pattern: random, bs: 8k, read: 0}"):
    path = tmp_path / "plan.yaml"
    path.write_text(
        "name: grid\n"
        f"targets:\n  - {{path: {tmp_path / 'target.dat'}, size: 16m}}\n"
        "timing: {ramp: 0s, duration: 1s}\n"
        "load: {workers: [1], iodepth: [1, 2]}\n"
        "data_grid: [incompressible, db]\n"
        f"workloads:\n  - {workload}\n"
    )
    return path


@pytest.fixture(scope="module")
def grid_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("grid")
    done = main_cli("run", str(grid_plan(tmp_path)), "--results", str(tmp_path / "results"))
    assert done.returncode == 0, done.stderr
    return tmp_path / "results"


@needs_fio
def test_each_data_value_runs_every_level_and_its_points_carry_their_data(grid_run: Path):
    shown = json.loads(main_cli("show", "latest", "--results", str(grid_run),
                                "--format", "json").stdout)  # fmt: skip
    by_key = {p["key"]: p for p in shown["points"]}
    assert sorted(by_key) == sorted(f"fill@{v}/{lv}" for v in ("incompressible", "db")
                                    for lv in LEVELS)  # fmt: skip
    for key, point in by_key.items():
        asked = point["data"]["requested"]
        achieved = point["data"]["achieved"]
        expected = 2.0 if key.startswith("fill@db/") else 1.0
        assert asked["compression"] == expected and asked["dedupe"] == 1.0
        assert achieved["compression"] == pytest.approx(expected, rel=0.10)
        value = key.split("/")[0].split("@")[1]
        assert point["data"]["grid"] == {"workload": "fill", "value": value}


@needs_fio
def test_the_stored_plan_reads_back_without_a_second_expansion(grid_run: Path):
    [folder] = (grid_run / "runs").iterdir()
    plan = parse_plan_text((folder / "plan.yaml").read_text(), "plan.yaml")
    assert [w.name for w in plan.workloads] == ["fill@incompressible", "fill@db"]
    assert [w.data.preset if w.data else None for w in plan.workloads] == ["incompressible", "db"]


def _rows(cells: list[str]) -> list[list[str]]:
    return [cells[i : i + 8] for i in range(0, len(cells), 8)]


@needs_fio
def test_the_with_without_table_in_markdown_xlsx_and_html(grid_run: Path, tmp_path: Path):
    out = [tmp_path / f"r.{x}" for x in ("md", "xlsx", "html")]
    done = main_cli("report", "latest", "--results", str(grid_run),
                    *[a for o in out for a in ("-o", str(o))])  # fmt: skip
    assert done.returncode == 0, done.stderr
    md = out[0].read_text()
    table = md.split(f"### {TITLE}", 1)[1].split("\n\n", 3)[2]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    assert [r[:3] for r in rows] == [["fill", lv, v] for lv in LEVELS
                                     for v in ("incompressible", "db")]  # fmt: skip
    for base, other in zip(rows[::2], rows[1::2], strict=True):
        assert base[6:] == ["(base)", "(base)"]
        iops = [float(r[3].split()[0]) * (1000 if "kIOPS" in r[3] else 1) for r in (base, other)]
        change = float(other[6].replace("%", "").strip())
        assert change == pytest.approx((iops[1] - iops[0]) / iops[0] * 100, abs=1.5)
    values = [str(c.value) for ws in load_workbook(out[1]) for r in ws.iter_rows() for c in r
              if c.value is not None]  # fmt: skip
    assert TITLE in values and "(base)" in values
    assert any(re.fullmatch(r"[+-][\d.]+ %", v) for v in values)
    html = out[2].read_text()
    assert TITLE in html and "fill@db" in html
    assert "fill: data with and without reduction" in html  # the chart: a line per value


@needs_fio
@pytest.mark.slow  # Chromium prints the PDF
@pytest.mark.skipif(
    (shutil.which("chromium") is None and not Path(printout.CHROMIUM).exists())
    or shutil.which("pdftotext") is None,
    reason="chromium or pdftotext (poppler-utils) is not installed",
)
def test_the_with_without_table_in_the_pdf(grid_run: Path, tmp_path: Path):
    pdf = tmp_path / "r.pdf"
    done = main_cli("report", "latest", "--results", str(grid_run), "-o", str(pdf))
    assert done.returncode == 0, done.stderr
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout  # fmt: skip
    flat = " ".join(text.split())
    assert "Data with and without reduction" in flat and "(base)" in flat


def test_a_workload_with_its_own_data_under_a_grid_is_refused(tmp_path: Path):
    plan = grid_plan(tmp_path, "{name: fill, pattern: random, bs: 8k, read: 0, data: vdi}")
    done = main_cli("plan", "check", str(plan))
    assert done.returncode == 2
    assert "data_grid: workload(s) fill set their own data:" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("grid", "said"), [
    ("[incompressible, half]", r"plan\.yaml:6 data_grid\[1\]: Input should be"),
    ("[db, db]", r"plan\.yaml:6 data_grid: db listed twice: list each data value once"),
])  # fmt: skip
def test_a_wrong_grid_is_refused_at_its_line(tmp_path: Path, grid: str, said: str):
    plan = grid_plan(tmp_path)
    plan.write_text(plan.read_text().replace("[incompressible, db]", grid))
    done = main_cli("plan", "check", str(plan))
    assert done.returncode == 2
    assert re.search(said, done.stderr), done.stderr


def test_a_read_only_workload_runs_once_and_writing_ones_once_per_value():
    plan = parse_plan_text(
        "name: g\ndata_grid: [incompressible, vdi]\nworkloads:\n"
        "  - {name: rr, pattern: random, bs: 8k, read: 100}\n"
        "  - {name: mix, pattern: random, bs: 8k, read: 70}\n"
        "  - {name: rr2, pattern: random, bs: 8k, read: 100, data: db}\n",
        "plan.yaml",
    )
    assert [(w.name, w.data.preset if w.data else None) for w in plan.workloads] == [
        ("rr", None), ("mix@incompressible", "incompressible"), ("mix@vdi", "vdi"),
        ("rr2", "db"),
    ]  # fmt: skip


@needs_fio
def test_compare_sets_two_runs_data_side_by_side(tmp_path: Path):
    results = tmp_path / "results"
    plan = tmp_path / "plan.yaml"
    text = grid_plan(tmp_path).read_text().replace("data_grid: [incompressible, db]\n", "")
    plan.write_text(text.replace("[1, 2]", "[1]"))
    for data in ("incompressible", "db"):
        done = main_cli("run", str(plan), "--results", str(results),
                        "--set", f"data={data}", "--set", f"scenario=data-{data}")  # fmt: skip
        assert done.returncode == 0, done.stderr
    runs = sorted(p.name for p in (results / "runs").iterdir())
    out = tmp_path / "c.md"
    done = main_cli("compare", *runs, "--results", str(results), "-o", str(out))
    assert done.returncode == 0, done.stderr
    table = out.read_text().split("### Data per scenario: requested, achieved, reported", 1)[1]
    rows = [[c.strip() for c in line.strip("|").split("|")]
            for line in table.split("\n\n", 3)[2].splitlines()[2:]]  # fmt: skip
    assert [r[:3] for r in rows] == [
        ["data-incompressible", "fill", "1.00:1 compression, 1.00:1 dedupe at 8 KiB"],
        ["data-db", "fill", "2.00:1 compression, 1.00:1 dedupe at 8 KiB"],
    ]
    assert rows[1][3].startswith(("1.9", "2.0"))  # the fio sample of 2:1 reached about 2:1


def test_a_workload_name_may_end_only_in_a_presets_mark():
    text = "name: g\nworkloads:\n  - {name: NAME, pattern: random, bs: 8k, read: 0}\n"
    assert parse_plan_text(text.replace("NAME", "fill@vdi"), "p.yaml").workloads[0].name
    with pytest.raises(PlanError, match="'@' before a data_grid preset"):
        parse_plan_text(text.replace("NAME", "fill@r3"), "p.yaml")  # a SNIA round's mark
