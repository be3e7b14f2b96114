"""On real fio: a repeated ladder's chart carries the 95 % band, and a flagged point (the null
engine beyond the cores: generator-bound) is marked and left out of the headline figures."""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from openpyxl import load_workbook

from arraybench import cli
from arraybench.analysis.validity import leaves_headline
from tests.conftest import needs_fio

# serial: generator-bound means fio alone used the CPUs; beside the parallel phase the
# machine was busy and the point was flagged host-busy instead (ci25)
pytestmark = [needs_fio, pytest.mark.slow, pytest.mark.serial]


def test_band_and_flag_marker_in_the_html_report(tmp_path: Path) -> None:
    many = 2 * (os.cpu_count() or 1) + 2
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        'name: bands\nioengine: "null"\ntiming: {ramp: 0s, duration: 2s}\nrepeat: 2\n'
        f"load: {{pairs: [[1, 1], [{many}, 1]]}}\n"
        f"targets: [{{path: {tmp_path / 't.dat'}, size: 16m}}]\n"
        "workloads:\n  - {name: rr, pattern: random, bs: 4k, read: 100}\n"
    )
    results = tmp_path / "res"
    assert cli.main(["run", str(plan), "--results", str(results)]) == 0
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["show", "latest", "--results", str(results), "--format", "json"]) == 0
    points = json.loads(out.getvalue())["points"]
    flags = {p["key"]: [f["kind"] for f in p["flags"]] for p in points}
    assert "generator-bound" in flags[f"rr/w{many}-qd1"], flags
    html = next(results.glob("runs/*/report.html")).read_text()
    assert 'class="band-tput"' in html and "95 % interval of 2 repeats" in html
    assert 'class="mark-flagged"' in html and "flagged: see table" in html
    # a busy machine flags both (host-busy only, a remark, keeps them in)
    if not leaves_headline(flags["rr/w1-qd1"]) and not leaves_headline(flags["rr/w1-qd1#2"]):
        assert "left out of the optimal point, maximum and summary: flagged" in html
        assert f"rr: w{many}-qd1 (generator-bound" in html
    else:
        assert "every point has an invalidating flag" in html
    # the workbook's throughput chart: error bars of the 95 % interval, the flagged marks
    xlsx = tmp_path / "r.xlsx"
    assert cli.main(["report", "latest", "--results", str(results), "-o", str(xlsx)]) == 0
    [chart, _] = load_workbook(xlsx)["Random 4 KiB"]._charts
    names = [s.tx.v for s in chart.series]
    assert chart.series[0].errBars is not None and "95 % interval (2 repeats)" in names[0]
    assert "flagged: see table" in names
    assert "the 95 % interval of the mean over the repeats (Student t, 95 %)" in html
