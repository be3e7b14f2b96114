"""The `curve` load mode (vdbench iorate=curve, SPC-1's response-time curve) with real fio on a
loop device: the grid measures the maximum, the curve runs the same workload rate-limited at
percentages of it (fio's rate limit: one rate reached, one not). The report's figure, naming
every rate that was not reached, is drawn from the test engine's run (tests/fake_engine.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.analysis.validity import flags_of, leaves_headline
from arraybench.finding_kinds import CURVE, VALIDITY
from arraybench.store.db import Store
from tests.conftest import main_cli, needs_fio
from tests.fake_engine import PLAN_LINES
from tests.loopdev import attached, sparse_file

PERCENTS = [10, 400]  # 400 %: four times the maximum, which no device gives
FIGURE_PERCENTS = [10, 50, 100, 400]


@pytest.fixture
def loopdev(tmp_path: Path) -> Iterator[str]:
    with attached(sparse_file(tmp_path / "backing.img", 64 << 20)) as dev:
        yield dev


def _plan(tmp_path: Path, device: str, percents: list[int] = PERCENTS, extra: str = "") -> Path:
    path = tmp_path / "curve.yaml"
    path.write_text(
        f"{extra}name: curve\n"
        f"targets:\n  - path: {device}\n"
        "timing: {ramp: 0s, duration: 2s}\n"
        "load: {workers: [1, 2], iodepth: [4]}\n"
        f"curve: {{percents: {percents}, tolerance: 10}}\n"
        "workloads:\n  - {name: rr-4k, pattern: random, bs: 4k, read: 100}\n"
    )
    return path


@needs_fio
def test_curve_runs_each_rate_and_flags_the_one_not_reached(tmp_path: Path, loopdev: str) -> None:
    results = tmp_path / "res"
    done = main_cli("run", str(_plan(tmp_path, loopdev)), "--results", str(results))
    assert done.returncode == 0, done.stderr
    store = Store(results, create=False)
    ((run, _),) = store.list_runs()
    found = sorted(CURVE.among(store.findings(run.id)), key=lambda d: d["percent"])
    assert [d["percent"] for d in found] == PERCENTS
    top = found[0]["max_iops"]
    grid = [p for p in store.points(run.id) if p.pattern == "random"]
    # the grid's maximum by the headline rule (analysis.headline): points whose flags leave
    # the headline (an invalidating one; a remark keeps its point in) left out
    by_key = {p.key: p for p in grid}
    assert top == by_key[found[0]["max_key"]].metric("total", "iops")
    flagged = {f.point_id for f in store.findings(run.id, VALIDITY.name)
               if leaves_headline(flags_of(VALIDITY.of(f)))}  # fmt: skip
    trusted = [p for p in grid if p.id not in flagged] or grid
    assert top == max(p.metric("total", "iops") or 0 for p in trusted)
    for d in found:  # the plan: the % of the measured maximum, rounded up per job
        assert d["planned_iops"] == pytest.approx(d["percent"] / 100 * top, rel=0.01, abs=2)
    low = found[0]
    assert low["reached"], low  # 10 % of the maximum: any device gives it
    assert low["achieved_iops"] == pytest.approx(low["planned_iops"], rel=0.1)
    assert not found[-1]["reached"] and found[-1]["achieved_iops"] < 0.9 * found[-1]["planned_iops"]
    curve_points = [p for p in store.points(run.id) if p.pattern == "curve"]
    assert sorted(p.key for p in curve_points) == sorted(f"curve-rr-4k/p{n}" for n in PERCENTS)
    assert {(p.workers, p.iodepth) for p in curve_points} == {
        (p.workers, p.iodepth) for p in grid if p.key == found[0]["max_key"]}  # fmt: skip
    # rate_iops in each job file: the plan is one a user can re-run by hand
    job = (Path(run.folder) / "points").glob("*-curve-rr-4k-p10/point.fio")
    assert "rate_iops=" in next(job).read_text()


@pytest.mark.usefixtures("fake_engine")  # the figure is the subject: the test engine's run
def test_the_curve_is_drawn_with_the_rate_not_reached_named(tmp_path: Path) -> None:
    results = tmp_path / "res"
    plan = _plan(tmp_path, str(tmp_path / "t.dat"), FIGURE_PERCENTS, PLAN_LINES)
    plan.write_text(
        plan.read_text().replace(
            f"path: {tmp_path / 't.dat'}\n", f"path: {tmp_path / 't.dat'}\n    size: 16m\n"
        )
    )
    done = main_cli("run", str(plan), "--results", str(results), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 0, done.stderr
    store = Store(results, create=False)
    ((run, _),) = store.list_runs()
    found = sorted(CURVE.among(store.findings(run.id)), key=lambda d: d["percent"])
    # the model saturates at 16 outstanding: 2 x 4 is below, so 100 % is reached, 400 % not
    assert [d["reached"] for d in found] == [True, True, True, False]
    html = (tmp_path / "r.html").read_text()
    assert "Response-time curve: rr-4k" in html
    name = "ratecurve-response-time-curve-rr-4k"
    assert re.search(rf'<svg [^>]*data-form="ratecurve"[^>]*data-name="{name}"', html)
    assert "IOPS achieved" in html
    assert html.count("NO: ") >= 1 and "planned (tolerance 10 %)" in html
    # the Excel workbook: the figure's table (achieved IOPS against latency) and a scatter
    from openpyxl import load_workbook

    from arraybench.report.assemble import report_for_run
    from arraybench.report.render.export import write_report

    write_report(report_for_run(store, run.id), tmp_path / "r.xlsx", "xlsx")
    ws = load_workbook(tmp_path / "r.xlsx")["Figures"]
    cells = [c.value for row in ws.iter_rows() for c in row if c.value is not None]
    assert "Response-time curve: rr-4k" in cells
    assert any(
        v == pytest.approx(found[0]["achieved_iops"]) for v in cells if isinstance(v, (int, float))
    )
    assert ws._charts[0].tagname == "scatterChart" and "not reached" in cells
