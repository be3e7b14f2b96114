"""Issue 35 item 5: `compare` and the scenario tables read a scenario at the baseline's optimal
load, not at its own optimal point. The reviewer's shape: the baseline's healthy range ends
at 1 outstanding I/O (7.79k @ 125 µs), the degraded run's at 16 (14.2k @ 1,114 µs); its
optimal point against the baseline's read "+82.3 %": losing a controller "improved" it.
Built through the Store API (the curve is the subject, and a load with this shape cannot be
had on demand)."""

from __future__ import annotations

from pathlib import Path

from arraybench.analysis.aggregate import DirMetrics, PointMetrics
from arraybench.analysis.validity import finding_data
from arraybench.finding_kinds import VALIDITY
from arraybench.point_identity import PointIdentity
from arraybench.report.compare import compare_runs
from arraybench.store.db import NewPoint, RunRecord, Store
from tests.conftest import main_cli
from tests.integration.test_flagged_headlines import BOUND

PLAN = """name: avail
ioengine: "null"
timing: {ramp: 0s, duration: 1s}
load: {workers: [1, 2, 4, 8, 16], iodepth: [1]}
targets: [{path: /tmp/t.dat, size: 16m}]
workloads:
  - {name: rr, pattern: random, bs: 8k, read: 100}
"""
# run -> workers -> (IOPS, mean latency µs): closed loop, latency = workers / IOPS; the
# baseline's first step gains 15.5 % for +78 % latency: its healthy range ends at 1 worker
CURVES = {
    "baseline": {1: (7_790.0, 125.0), 2: (9_000.0, 222.0), 4: (16_000.0, 250.0),
                 8: (19_000.0, 421.0), 16: (20_000.0, 800.0)},
    "degraded": {1: (1_000.0, 1_000.0), 2: (2_200.0, 909.0), 4: (4_800.0, 833.0),
                 8: (9_500.0, 842.0), 16: (14_200.0, 1_114.0)},
}  # fmt: skip


def _metrics(iops: float, lat_us: float) -> PointMetrics:
    d = DirMetrics(int(iops), int(iops) * 8192, iops, iops * 8192 / 1e6, lat_us, lat_us,
                   3 * lat_us, 5 * lat_us, 20 * lat_us)  # fmt: skip
    none = DirMetrics(0, 0, 0.0, 0.0, None, None, None, None, None)
    return PointMetrics(read=d, write=none, total=d)


def _stored(results: Path, flag_degraded: bool = False) -> Store:
    store = Store(results)
    for n, (run, ladder) in enumerate(CURVES.items()):
        store.create_run(RunRecord(
            id=run, plan_name="avail", scenario=run, labels={}, plan_yaml=PLAN,
            folder=f"/tmp/{run}", scale=1.0, status="complete",
            started=f"2027-01-0{n + 1}T00:00:00+00:00", finished=f"2027-01-0{n + 1}T00:01:00+00:00",
            total_points=5, engine_version="fio-3.33", arraybench_version="0.1.0", host="h",
            kernel="6.1", targets=["/tmp/t.dat"], latency_bound_us=1000.0, latency_stat="mean",
        ))  # fmt: skip
        for seq, (workers, (iops, lat)) in enumerate(ladder.items(), start=1):
            point = NewPoint(
                run_id=run, seq=seq, identity=PointIdentity("rr", f"w{workers}-qd1"),
                family="Random 8 KiB", mix="Read", pattern="random", bs=8192, read_pct=100,
                region="backend", ioengine="null", unit="IOPS", workers=workers, iodepth=1,
                jobs=workers, targets="/tmp/t.dat", folder=f"/tmp/{run}/p{seq}", started="a",
                finished="b", runtime_s=1.0, engine_version="fio-3.33",
            )  # fmt: skip
            flagged = flag_degraded and run == "degraded"
            found = [VALIDITY.new(finding_data([BOUND]))] if flagged else []
            store.add_point(point, _metrics(iops, lat), [], findings=found)
    return store


def test_a_degraded_run_never_improves_the_optimal_point_by_comparing_other_loads(
    tmp_path: Path,
) -> None:
    store = _stored(tmp_path)
    model = compare_runs(store, ["baseline", "degraded"], str(tmp_path), None, "start")
    table = model.tables[0]
    assert table.columns[4:6] == ["Optimal", "Δ at the baseline's optimal"]
    base, degraded = table.rows
    assert base[4:6] == ["7.79 kIOPS @ 125 µs", "baseline"]
    # its own optimal point is still named (14.2k @ 1,114 µs), its impact read at the
    # baseline's optimal load: 1 outstanding I/O, where it does 1k @ 1,000 µs
    assert degraded[4] == "14.2 kIOPS @ 1,114 µs"
    assert degraded[5] == "-87.2 % at w1-qd1 (1 kIOPS @ 1,000 µs, latency +700 %)"
    assert "+82" not in " ".join(degraded)
    assert "like with like" in table.caption
    # the summary cell says the same
    [row] = model.summary
    assert ("against the baseline's optimal point -87.2 % at w1-qd1"
            in row.cells["degraded"].extremes)  # fmt: skip


def test_impact_cells_from_a_flagged_series_carry_the_mark(tmp_path: Path) -> None:
    _stored(tmp_path, flag_degraded=True).close()
    out = tmp_path / "cmp.md"
    done = main_cli("compare", "baseline", "degraded", "--results", str(tmp_path), "-o",
                    str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    # every degraded point is flagged: its figures are named from them, and its deltas say so
    assert "-87.2 % at w1-qd1 (1 kIOPS @ 1,000 µs, latency +700 %) (flagged)" in text
    assert "| 14.2 kIOPS | -29 % (flagged) |" in text  # its maximum, 14.2k against 20k
    assert "| 833 µs | +566 % (flagged) |" in text  # its minimum latency, 833 against 125 µs
