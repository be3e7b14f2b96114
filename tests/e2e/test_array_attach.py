"""`arraybench attach`: an array monitor's CSV (written here by a small script in the format
documented in monitor/arrayside.py) stored beside a run, per point fio vs the array. The run
is the test engine's (tests/fake_engine.py): attach, its store and its report are the subject,
the array's series is made from the stored seconds."""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

import openpyxl
import pytest

from arraybench.cli import main
from arraybench.store.db import Store
from tests.conftest import small_plan
from tests.fake_engine import PLAN_LINES

pytestmark = pytest.mark.usefixtures("fake_engine")


def _export(path: Path, seconds: list[tuple[int, float]], scale: dict[int, float]) -> None:
    """What an array's monitor exports: ISO times with a zone, IOPS as it counted them, extra
    columns; the array's clock 2 s behind the controller's (attach --offset 2)."""
    with open(path, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["Time", "Total IOPS", "CPU (%)", "Comment"])
        for t, iops in seconds:
            stamp = datetime.fromtimestamp(t + 0.5 - 2, UTC).isoformat()
            out.writerow([stamp, f"{iops * scale.get(t, 1.0):.1f}", "30", "ok"])


def test_attached_series_gives_per_point_agreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "res"
    plan = small_plan(tmp_path, workers="[1, 2]", extra=PLAN_LINES)  # 3-second points: 3 seconds
    plan.write_text(plan.read_text().replace("duration: 1s", "duration: 3s"))
    assert main(["run", str(plan), "--results", str(results), "--only", "rand*"]) == 0
    capsys.readouterr()
    store = Store(results, create=False)
    run = store.list_runs()[0][0]
    first, second = store.points(run.id)[:2]
    per_second = lambda p: [(s.t, (s.read_iops or 0) + (s.write_iops or 0))  # noqa: E731
                            for s in store.samples(p.id)]  # fmt: skip
    off = {t: 1.3 for t, _ in per_second(second)}  # the array counted 30 % more there
    export = tmp_path / "array.csv"
    _export(export, per_second(first) + per_second(second), off)

    mapping = "time=Time,iops=Total IOPS,cpu_pct=CPU (%)"
    assert main(["attach", run.id, str(export), "--map", mapping, "--offset", "2",
                 "--results", str(results)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert f"{first.key}: fio" in out and "(+0.0 %) agree" in out
    assert f"{second.key}: fio" in out and "(+30.0 %) DISAGREE" in out

    html, xlsx = tmp_path / "r.html", tmp_path / "r.xlsx"
    outputs = ["-o", str(html), "-o", str(xlsx)]
    assert main(["report", run.id, "--results", str(results), *outputs]) == 0
    text = html.read_text()
    assert "Array monitor vs fio (IOPS)" in text and "DISAGREE" in text
    assert "array IOPS" in text  # a line on the series' time chart, beside fio's
    cells = {str(c.value) for ws in openpyxl.load_workbook(xlsx) for row in ws.iter_rows()
             for c in row}  # fmt: skip
    assert "array (IOPS)" in cells
    assert "array vs fio (%)" in cells  # the points table's column, in Excel too
    assert text.count("array vs fio") >= 2  # the HTML points table and the agreement table

    wrong = {
        "time=Time,iops=IOPS": "no column 'IOPS'",
        "iops=Total IOPS": "needs time=",
        "time=Time,qd=Comment": "unknown field 'qd'",
        "time=Comment,iops=Total IOPS": "array.csv:2:4: 'Comment' = 'ok' is no usable time",
    }
    for given, said in wrong.items():
        code = main(["attach", run.id, str(export), "--map", given, "--results", str(results)])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and said in err[0], (given, err)
