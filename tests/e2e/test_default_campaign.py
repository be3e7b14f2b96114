"""The README's default campaign (template quick), shortened with --scale.

Its expansion, table, charts and store are the subject of the first test, run on the test
engine (tests/fake_engine.py, figures its model's); the second runs real fio on part of it and
checks each point against fio's own totals.
"""

from __future__ import annotations

import json
import re
import subprocess
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


# The tables of the run below, every figure taken out: the same on every fio (3.33, 3.42)
TABLES = [
    "Workload | R/W #/#",
    "Random # KiB | # IOPS @ # T",
    " | # IOPS max, # T min",
    " | # IOPS ≤ # T mean; # IOPS at the lowest level",
    "mix | max throughput @ mean latency | where | min mean latency | where",
    "R/W #/# | # IOPS @ # T | # KiB random backend, libaio qd# x # worker(s) | # T | # KiB "
    "random backend, libaio qd# x # worker(s)",
]
# On a busy machine 4 workers may run no faster than 1: the optimal point is then the maximum
# and the minimum latency at once, said once (report/build.py `_one_point_texts`)
ONE_POINT = {
    2: " | also the maximum and the minimum latency",
    3: (" | within the bound (# T mean)", " | none ≤ # T mean"),
}


def same_tables(shown: list[str]) -> bool:
    """TABLES, or TABLES with the one-point cell where the lowest level is also the best."""
    if shown == TABLES:
        return True
    if len(shown) != len(TABLES) or shown[2] != ONE_POINT[2] or shown[3] not in ONE_POINT[3]:
        return False
    return shown[:2] + shown[4:] == TABLES[:2] + TABLES[4:]


def _tables(out: str) -> list[str]:
    """Each row of the printed tables, cells joined by ' | ', with the figures taken out:
    numbers '#', unit prefixes and time units dropped (12.5 kIOPS and 800 IOPS: '# IOPS';
    µs and ms: 'T'), `worker(s)` for either number, the saturation remark (a verdict on the
    figures: the last step's gain) dropped."""
    rows: list[str] = []
    conformance = False  # the Conformance table: the template's rules, words not figures
    for line in out.splitlines():
        if line.startswith("┃ Rule "):
            conformance = True
        elif line[:1] not in "┃│┏┡└━─":
            conformance = False
        if line[:1] in "┃│" and not conformance:
            cells = [c.strip() for c in line.strip()[1:-1].replace("┃", "│").split("│")]
            row = re.sub(r"\d[\d.,]*", "#", " | ".join(cells))
            row = re.sub(r"# (?:k|M)?IOPS", "# IOPS", row)
            row = re.sub(r"# (?:µs|ms|s)\b", "# T", row)
            row = row.replace(" (top level, may not be saturated)", "")  # the figures' verdict
            rows.append(re.sub(r"\bworkers?\b", "worker(s)", row))
    return rows


@needs_fio
@pytest.mark.slow
def test_part_of_the_default_campaign_equals_fio(tmp_path: Path, each_fio: str):
    """On the system's fio and on fio 3.42 (`each_fio`): the same tables, fio's figures."""
    results = tmp_path / "res"
    done = main_cli("run", "--scale", "0.2", "--only", "rand-8k-rw70", "--set",
                    "load.workers=[1, 4]", "--results", str(results), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert same_tables(_tables(done.stdout)), _tables(done.stdout)
    version = subprocess.run([each_fio, "--version"], capture_output=True, text=True).stdout
    assert "R/W 70/30" in done.stdout and version.strip() in Path(
        done.stdout.split("HTML report:")[1].strip()).read_text()  # fmt: skip
    points = _points(results)["points"]
    assert [p["key"] for p in points] == ["rand-8k-rw70/w1-qd1", "rand-8k-rw70/w4-qd1"]
    assert {p["engine_version"] for p in points} == {version.strip()}
    for point in points:
        metrics = {k: v for k, v in point.items() if k.startswith(("read_", "write_", "total_"))}
        metrics.pop("read_pct")
        assert_point_matches_fio(metrics, Path(point["folder"]) / "fio.json")
        assert (Path(point["folder"]) / "point_iops.1.log").exists()
