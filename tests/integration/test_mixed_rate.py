"""A rate on a mixed workload, on real fio (issue 35): the plan's `rate_iops` is the total of a
worker at the workload's mix. 2 workers x 500 IOPS at 70 % reads ran 1,994 IOPS at 50 % reads
when the job file said `rate_iops=500` (fio caps each direction on its own); split by the mix
(`rate_iops=350,150`) it runs 1,000 IOPS at 70 %; a small rate written in bytes a second
keeps its mix too. The response-time curve's steps of a mixed
workload land on their planned rate and mix, or say they did not."""

from __future__ import annotations

from pathlib import Path

import pytest

from arraybench.analysis.validity import flags_by_point
from arraybench.finding_kinds import CURVE
from arraybench.records import PointRecord
from arraybench.store.db import Store
from tests.conftest import main_cli, needs_fio

pytestmark = [needs_fio, pytest.mark.paced]  # judges rates

PLAN = """name: mixed-rate
targets: [{{path: {target}, size: 16m}}]
timing: {{ramp: 1s, duration: 3s}}
load: {{workers: [2], iodepth: [1]}}
ioengine: psync
{extra}workloads:
{workloads}"""
RATED = (
    "  - {name: rw70, pattern: random, bs: 4k, read: 70, rate_iops: 500}\n"
    # 25 IOPS a worker at 70 %: 17.5 + 7.5 IOPS, written in bytes a second (plan/rate.py:
    # whole IOPS would be 18 + 7, 72 % reads)
    "  - {name: rw70-slow, pattern: random, bs: 4k, read: 70, rate_iops: 25}\n"
)


def _run(tmp_path: Path, workloads: str, extra: str = "") -> tuple[Store, str, str]:
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(target=tmp_path / "t.dat", extra=extra, workloads=workloads))
    results = tmp_path / "res"
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stderr
    store = Store(results, create=False)
    ((run, _),) = store.list_runs()
    return store, run.id, run.folder


def _read_pct(point: PointRecord) -> float:
    reads, total = point.metric("read", "iops") or 0.0, point.metric("total", "iops") or 0.0
    return 100.0 * reads / total


def test_a_mixed_rate_runs_its_total_at_its_mix(tmp_path: Path) -> None:
    store, run_id, _ = _run(tmp_path, RATED)
    points = {p.workload: p for p in store.points(run_id)}
    fast, slow = points["rw70"], points["rw70-slow"]
    assert fast.metric("total", "iops") == pytest.approx(1000, rel=0.05)  # 2 x 500
    assert _read_pct(fast) == pytest.approx(70, abs=5)
    assert "rate_iops=350,150\n" in (Path(fast.folder) / "point.fio").read_text()
    assert slow.metric("total", "iops") == pytest.approx(50, rel=0.05)  # 2 x 25
    assert _read_pct(slow) == pytest.approx(70, abs=5)
    assert "rate=71680,30720\n" in (Path(slow.folder) / "point.fio").read_text()
    flags = flags_by_point(store.findings(run_id))
    for point in (fast, slow):  # kept: neither rate flag
        kinds = {f.kind for f in flags.get(point.id, [])}
        assert not kinds & {"rate-not-reached", "rate-not-kept"}, flags[point.id]


def test_the_curve_of_a_mixed_workload_keeps_its_rate_and_mix(tmp_path: Path) -> None:
    mixed = "  - {name: rw70, pattern: random, bs: 4k, read: 70}\n"  # no rate: the curve's
    store, run_id, folder = _run(tmp_path, mixed, "curve: {percents: [10, 30]}\n")
    found = sorted(CURVE.among(store.findings(run_id)), key=lambda d: d["percent"])
    assert [d["percent"] for d in found] == [10, 30]
    for d in found:
        assert d["planned_read_pct"] == 70.0
        kept = abs(d["achieved_iops"] / d["planned_iops"] - 1) <= 0.05
        mix = d["achieved_read_pct"] is not None and abs(d["achieved_read_pct"] - 70) <= 5
        assert d["reached"] == (kept and mix), d  # landed, or said it did not
        assert d["achieved_iops"] <= 1.05 * d["planned_iops"], d  # never over: 2 x at 50 %
    low = found[0]  # 10 % of the maximum: any storage gives it, at its mix
    assert low["reached"] and low["misses"] == [], low
    assert low["achieved_read_pct"] == pytest.approx(70, abs=5)
    job = next((Path(folder) / "points").glob("*-curve-rw70-p10/point.fio"))
    text = job.read_text()
    assert "rwmixread=70" in text and ("rate_iops=" in text or "rate=" in text)
    assert not any(line.startswith("rate_iops=") and "," not in line for line in text.split())
