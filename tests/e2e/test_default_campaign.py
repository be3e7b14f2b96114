"""The README's default campaign (template quick), shortened with --scale.

Its expansion, table, charts and store are the subject of the first test, run on the test
engine (tests/fake_engine.py, figures its model's); the second runs real fio on part of it and
checks each point against fio's own totals.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import main_cli, needs_fio
from tests.crosscheck import assert_point_matches_fio
from tests.fake_engine import VERSION, assert_point_matches_model


def _points(results: Path) -> dict:
    runs = json.loads(main_cli("runs", "--results", str(results), "--format", "json").stdout)
    shown = main_cli("show", runs[0]["id"], "--results", str(results), "--format", "json")
    return dict(json.loads(shown.stdout))


@pytest.mark.usefixtures("fake_engine")
def test_default_campaign_prints_table_writes_report_and_equals_the_model(tmp_path: Path):
    results = tmp_path / "res"
    fake = ("--set", "engine=fake", "--set", "monitor=false")  # PLAN_LINES of fake_engine.py
    done = main_cli("run", "--scale", "0.2", *fake, "--results", str(results), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for label in ("Random 8 KiB", "Sequential 128 KiB", "Read", "Write", "R/W 70/30"):
        assert label in out
    assert "kIOPS @" in out or " IOPS @" in out
    assert "MB/s max" in out and "µs min" in out
    report = Path(out.split("HTML report:")[1].strip())
    html = report.read_text()
    # per workload: its curve, its levels over time and its latency percentiles
    assert html.count('<svg class="chart"') == 5 and VERSION in html
    assert html.count('<svg class="chart timechart"') == 10  # levels over time, percentiles
    assert html.count('aria-label="seq-128k-write: every level over time') == 1

    shown = _points(results)
    points = shown["points"]
    assert len(points) == 25 and shown["run"]["status"] == "complete"
    scratch = results / "scratch" / "arraybench-scratch.dat"
    assert scratch.stat().st_size == 205 << 20  # 1 GiB x 0.2, rounded up to whole MiB
    assert [p["key"] for p in points[:5]] == [f"rand-8k-read/w{w}-qd1" for w in (1, 2, 4, 8, 16)]
    for point in points:
        assert_point_matches_model(point)


@needs_fio
@pytest.mark.slow
def test_part_of_the_default_campaign_equals_fio(tmp_path: Path):
    results = tmp_path / "res"
    done = main_cli("run", "--scale", "0.2", "--only", "rand-8k-rw70", "--set",
                    "load.workers=[1, 4]", "--results", str(results), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "R/W 70/30" in done.stdout and "fio-" in Path(done.stdout.split("HTML report:")[1]
                                                          .strip()).read_text()  # fmt: skip
    points = _points(results)["points"]
    assert [p["key"] for p in points] == ["rand-8k-rw70/w1-qd1", "rand-8k-rw70/w4-qd1"]
    for point in points:
        metrics = {k: v for k, v in point.items() if k.startswith(("read_", "write_", "total_"))}
        metrics.pop("read_pct")
        assert_point_matches_fio(metrics, Path(point["folder"]) / "fio.json")
        assert (Path(point["folder"]) / "point_iops.1.log").exists()
