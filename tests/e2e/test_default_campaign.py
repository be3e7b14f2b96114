"""The README's default campaign (template quick), shortened with --scale, checked against fio."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import main_cli, needs_fio
from tests.crosscheck import assert_point_matches_fio

pytestmark = [needs_fio, pytest.mark.slow]


def test_default_campaign_prints_table_writes_report_and_equals_fio(tmp_path: Path):
    results = tmp_path / "res"
    done = main_cli("run", "--scale", "0.2", "--results", str(results), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for label in ("Random 8 KiB", "Sequential 128 KiB", "Read", "Write", "R/W 70/30"):
        assert label in out
    assert "kIOPS @" in out or " IOPS @" in out
    assert "MB/s max" in out and "µs min" in out
    report = Path(out.split("HTML report:")[1].strip())
    html = report.read_text()
    # per workload: its curve, its levels over time and its latency percentiles
    assert html.count('<svg class="chart"') == 5 and "fio-" in html
    assert html.count('<svg class="chart timechart"') == 10  # levels over time, percentiles
    assert html.count('aria-label="seq-128k-write: every level over time') == 1

    run_id = json.loads(main_cli("runs", "--results", str(results), "--format", "json").stdout)[0][
        "id"
    ]
    shown = json.loads(
        main_cli("show", run_id, "--results", str(results), "--format", "json").stdout
    )
    points = shown["points"]
    assert len(points) == 25 and shown["run"]["status"] == "complete"
    scratch = results / "scratch" / "arraybench-scratch.dat"
    assert scratch.stat().st_size == 205 << 20  # 1 GiB x 0.2, rounded up to whole MiB
    for point in points:
        metrics = {k: v for k, v in point.items() if k.startswith(("read_", "write_", "total_"))}
        metrics.pop("read_pct")
        assert_point_matches_fio(metrics, Path(point["folder"]) / "fio.json")
        assert (Path(point["folder"]) / "point_iops.1.log").exists()
