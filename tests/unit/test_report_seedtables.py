"""The seeds' table forms from stored points: dbi's devices x parallelism grid, HUS VM's
maximum recorded per mix, and scaling against hosts in one unit per workload."""

from __future__ import annotations

from dataclasses import replace

from arraybench.report.render.html.page import _table
from arraybench.report.sections.headlines import run_headlines
from arraybench.report.sections.scaling import scaling_tables
from arraybench.report.sections.seedtables import devices_grids, maximum_recorded
from arraybench.report.sections.spread import LevelFacts
from arraybench.store.db import PointRecord
from tests.records import BLANK_POINT, keyed
from tests.unit.test_plan_scenarios import RUN

BASE = BLANK_POINT


def point(seq: int, iops: float, lat_us: float, **kw: object) -> PointRecord:
    metrics = dict(BASE.metrics) | {"total_iops": iops, "total_mbps": iops * 8192 / 1e6,
                                    "total_lat_mean_us": lat_us}  # fmt: skip
    p = replace(BASE, seq=seq, metrics=metrics, **kw)  # type: ignore[arg-type]
    return keyed(p, f"{p.workload}/w{p.workers}-qd{p.iodepth}-d{p.devices}")


def test_devices_by_parallelism_grid() -> None:
    # as dbi's Dorado archive: TestNN-Typerandread-BS8k-DeviceCountNN, 1..3 devices x 1..4 jobs
    pts = [point(10 * d + w, 20_000.0 * d * w, 100.0 + w, devices=d, workers=w)
           for d in (1, 2, 3) for w in (1, 2, 4)]  # fmt: skip
    (grid,) = devices_grids(pts)
    assert grid.title == "randread-8k: devices x workers per host (iodepth 1)"
    assert grid.columns == ["devices", "1", "2", "4"]
    assert [row[0] for row in grid.rows] == ["1", "2", "3"]
    assert grid.rows[2][3] == "240 kIOPS @ 104 µs"  # 3 devices, 4 workers
    html = _table(grid)
    assert "240 kIOPS @ 104 µs" in html and '<th scope="col">devices</th>' in html


def test_grid_of_per_target_workload_names_threads_per_device() -> None:
    # spread: per_target (or dbi's import): `workers` jobs on each device, not per host
    pts = [point(10 * d + w, 20_000.0 * d * w, 100.0 + w, devices=d, workers=w)
           for d in (1, 2) for w in (1, 2)]  # fmt: skip
    (grid,) = devices_grids(pts, per_target={"randread-8k"})
    assert grid.title == "randread-8k: devices x threads per device (iodepth 1)"
    assert grid.caption.endswith("columns: threads per device (iodepth 1)")
    assert "workers" not in grid.title + grid.caption
    (shared,) = devices_grids(pts, per_target={"other"})
    assert shared.title == "randread-8k: devices x workers per host (iodepth 1)"


def test_one_device_count_is_no_grid() -> None:
    assert devices_grids([point(1, 1000.0, 100.0, devices=2)]) == []


def test_maximum_recorded_per_mix_with_its_latency_and_the_minimum_latency() -> None:
    pts = [point(1, 147_000.0, 1_700.0, iodepth=32), point(2, 50_000.0, 90.0),
           point(3, 30_000.0, 300.0, mix="Write", read_pct=0, workload="randwrite-8k")]  # fmt: skip
    # the highest series maximum and lowest series minimum latency (their headlines)
    (table,) = maximum_recorded(pts, run_headlines(pts, RUN, LevelFacts()))
    read = table.rows[0]
    assert read[:2] == ["Read", "147 kIOPS @ 1,700 µs"]
    assert read[2] == "8 KiB random backend, libaio qd32 x 1 worker"
    assert read[3:] == ["90 µs", "8 KiB random backend, libaio qd1 x 1 worker"]
    assert table.rows[1][0] == "Write"


def test_scaling_against_hosts_keeps_one_unit_per_workload() -> None:
    # the workload's first host count is in IOPS: every count is compared in IOPS
    pts = [point(1, 100_000.0, 100.0, hosts=1), point(2, 190_000.0, 110.0, hosts=2),
           point(3, 5.0, 100.0, hosts=4, unit="MB/s")]  # fmt: skip
    (table,) = scaling_tables(pts)
    assert [row[2] for row in table.rows] == ["100 kIOPS", "190 kIOPS", "5 IOPS"]
    assert [row[4] for row in table.rows] == ["100 %", "95 %", "0.00125 %"]  # not 10,465 %


def test_excel_sheet_names_stay_readable() -> None:
    from arraybench.report.render.xlsx.cells import sheet_title

    used: set[str] = set()
    assert (
        sheet_title("Random 8 KiB (backend), 4 devices, 2 hosts", used) == "Rand 8 KiB, 4 dev, 2 h"
    )
    long = sheet_title("Sequential 128 KiB (frontend), 16 devices, 8 hosts", used)
    assert long == "Seq 128 KiB front 16 dev 8 h" and len(long) <= 31
    assert sheet_title("Random 8 KiB", used) == "Random 8 KiB"  # short names stay whole


def test_summary_rows_name_every_workload_of_a_crowded_family() -> None:
    from arraybench.report.sections.summary import summary_rows_of

    a = [point(1, 1000.0, 100.0, workload="fe-rand-8k-read")]
    b = [point(2, 2000.0, 100.0, workload="be-rand-8k-read")]
    w = [point(3, 500.0, 100.0, workload="fe-rand-8k-write", mix="Write")]
    rows = summary_rows_of([a, b, w])
    assert list(rows) == ["Random 8 KiB · fe-rand-8k-read", "Random 8 KiB · be-rand-8k-read",
                          "Random 8 KiB · fe-rand-8k-write"]  # fmt: skip
    assert list(summary_rows_of([a, w])) == ["Random 8 KiB"]  # one series a cell: one row
