"""An adaptive series on the test engine (tests/fake_engine.py: the search is the subject, not
fio; its model saturates at 16 I/Os outstanding): every level it ran is a stored point, the
rest are not, the report names the levels tried, and a resumed run takes the same decisions."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from arraybench.analysis.curves import CurvePoint, maximum, optimal_point
from tests.conftest import main_cli
from tests.fake_engine import PLAN_LINES

pytestmark = [pytest.mark.usefixtures("fake_engine")]

LADDER = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32]


def _plan(tmp_path: Path) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(
        f"{PLAN_LINES}name: adaptive\n"
        "timing: {ramp: 0s, duration: 1s}\n"
        f"load: {{workers: {LADDER}, iodepth: [1], adaptive: exact}}\n"
        f"targets: [{{path: {tmp_path / 't.dat'}, size: 16m}}]\n"
        "workloads:\n  - {name: rr, pattern: random, bs: 4k, read: 100}\n"
    )
    return path


def test_an_adaptive_series_stores_what_it_tried(tmp_path: Path):
    results = tmp_path / "res"
    done = main_cli("run", str(_plan(tmp_path)), "--results", str(results))
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(results / "arraybench.db") as db:
        [finding] = [json.loads(d) for (d,) in db.execute(
            "SELECT data_json FROM findings WHERE kind = 'adaptive'")]  # fmt: skip
        stored = db.execute(
            "SELECT key, workers, total_iops, total_lat_mean_us FROM points ORDER BY seq"
        ).fetchall()
    assert finding["ladder"] == [f"rr/w{w}-qd1" for w in LADDER]
    assert sorted(finding["tried"]) == sorted(k for k, *_ in stored)
    assert finding["skipped"] and not set(finding["skipped"]) & {k for k, *_ in stored}
    assert set(finding["tried"]) | set(finding["skipped"]) == set(finding["ladder"])
    # its answer is curves.py's answer on the points it measured
    curve = [CurvePoint(float(w), iops, lat, None, key) for key, w, iops, lat in
             sorted(stored, key=lambda r: r[1])]  # fmt: skip
    assert finding["maximum"] == maximum(curve).key  # type: ignore[union-attr]
    assert finding["optimal"] == optimal_point(curve).key  # type: ignore[union-attr]
    assert "adaptive series (exact)" in done.stdout
