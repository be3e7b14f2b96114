"""Combining jobs: sums, I/O-weighted means, percentiles from merged bins (never averaged)."""

from __future__ import annotations

import math

import pytest

from arraybench.analysis.aggregate import combine, merge_bins, point_metrics
from arraybench.engines.fio.parse import parse_fio_json_file
from arraybench.engines.measurement import DirStats
from tests.conftest import DATA
from tests.crosscheck import assert_point_matches_fio


def _dir(ios: int, mean_ns: float, *, bins=None, pct=None, iops=None, max_ns=None) -> DirStats:
    return DirStats(
        ios=ios, io_bytes=ios * 4096, runtime_ms=1000, iops=float(iops or ios),
        bw_bytes=ios * 4096.0, lat_mean_ns=mean_ns, lat_min_ns=1.0,
        lat_max_ns=max_ns or mean_ns * 2, lat_kind="lat", percentiles_ns=pct or {}, bins_ns=bins,
    )  # fmt: skip


def test_weighted_mean_sum_and_max():
    # 900 I/Os at 100 µs and 100 at 1000 µs: the I/O-weighted mean is 190 µs (plain mean: 550)
    got = combine([_dir(900, 100_000), _dir(100, 1_000_000, max_ns=5_000_000)])
    assert got.lat_mean_us == pytest.approx(190.0)
    assert got.iops == 1000 and got.ios == 1000
    assert got.mbps == pytest.approx(1000 * 4096 / 1e6)
    assert got.lat_max_us == 5000.0


def test_percentiles_come_from_merged_bins_not_averages():
    fast = _dir(99, 100_000, bins={100_000: 99}, pct={99.0: 100_000.0})
    slow = _dir(1, 9_000_000, bins={9_000_000: 1}, pct={99.0: 9_000_000.0})
    got = combine([fast, slow])
    # merged: 100 I/Os, 99 at 100 µs -> p50 = p99 = 100 µs; p99.9 needs 99.9 -> the slow one
    assert got.lat_p50_us == 100.0 and got.lat_p99_us == 100.0 and got.lat_p999_us == 9000.0
    assert got.lat_p99_us != (100.0 + 9000.0) / 2  # what averaging would have said


def test_without_bins_one_job_keeps_its_percentiles_and_many_jobs_have_none():
    one = combine([_dir(10, 1000.0, pct={50.0: 900.0, 99.0: 2000.0, 99.9: 3000.0})])
    assert (one.lat_p50_us, one.lat_p99_us, one.lat_p999_us) == (0.9, 2.0, 3.0)
    two = combine([_dir(10, 1000.0, pct={99.0: 2000.0}), _dir(10, 1000.0, pct={99.0: 4000.0})])
    assert two.lat_p99_us is None and two.lat_mean_us == 1.0


def test_empty_directions_are_zero_not_errors():
    got = combine([_dir(0, math.nan), _dir(0, math.nan)])
    assert got.ios == 0 and got.iops == 0 and got.lat_mean_us is None and got.lat_p99_us is None
    assert merge_bins([{1: 2}, None]) is None
    assert merge_bins([{1: 2}, {1: 3, 5: 1}]) == {1: 5, 5: 1}


def test_real_two_job_json_plus_output_equals_fio_totals():
    path = DATA / "fresh_fio3.33_jsonplus_randrw_2jobs.json"
    doc = parse_fio_json_file(path)[-1]
    assert len(doc.jobs) == 2
    metrics = point_metrics(doc.jobs)
    assert_point_matches_fio(metrics.as_dict(), path)
    assert metrics.total.iops == pytest.approx(metrics.read.iops + metrics.write.iops)


def test_old_usec_era_output_aggregates_in_the_same_units():
    # sample 05: fio 2.1.4, 5 jobs, latencies in µs and io_bytes in KiB in the file
    doc = parse_fio_json_file(DATA / "05_pkb_fio2.1.4_json_5jobs_disk_util.json")[-1]
    metrics = point_metrics(doc.jobs)
    reads = [j.read for j in doc.jobs if j.read.ios]
    assert metrics.read.iops == pytest.approx(sum(r.iops for r in reads))
    weighted = sum(r.lat_mean_ns * r.ios for r in reads) / sum(r.ios for r in reads) / 1000
    assert metrics.read.lat_mean_us == pytest.approx(weighted)
    assert metrics.read.bytes == sum(r.io_bytes for r in reads)
