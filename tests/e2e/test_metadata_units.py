"""CSCS's metadata test as a reader sees it: `show` gives its points in ops/s of their kind
(create, stat, delete), not as IOPS split into reads and writes, and its chart carries the
quantisation caveat its table carries (a phase of a few ms is a count over fio's 1 ms ticks).
Real fio, at a scale where every phase is that short."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import main_cli, needs_fio


@needs_fio
def test_metadata_points_are_ops_and_their_chart_says_quantised(tmp_path: Path) -> None:
    results = tmp_path / "res"
    done = main_cli("run", "cscs", "--scale", "0.01", "--set", "load.pairs=[[4, 4]]",
                    "--set", "metadata.threads=[1, 2]", "--only", "iops-4k-read",
                    "--target", str(tmp_path / "lun.dat"), "--results", str(results))  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = json.loads(main_cli("runs", "--results", str(results), "--format", "json").stdout)[
        0]["id"]  # fmt: skip
    shown = main_cli("show", run_id, "--results", str(results)).stdout
    rows = [line for line in shown.splitlines() if "metadata/t" in line]
    assert len(rows) == 2, shown
    for row in rows:
        cells = [c.strip() for c in row.split("│")[1:-1]]
        assert cells[4].endswith("ops/s") and cells[5:7] == ["–", "–"], cells
        assert "IOPS" not in row
    assert "kIOPS" in next(line for line in shown.splitlines() if "iops-4k-read/" in line)
    md = tmp_path / "r.md"
    assert main_cli("report", run_id, "--results", str(results), "-o", str(md)).returncode == 0
    text = re.sub(r"\\(.)", r"\1", md.read_text())
    chart = text.split("**Metadata test: operations per second by threads**", 1)[1]
    caption = chart.split("\n", 1)[0]
    assert "rates are counts over less than 100 ms" in caption and "quantised" in caption
