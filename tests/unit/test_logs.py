"""fio interval and histogram logs against real fio logs (tests/data, see MANIFEST.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arraybench.engines.fio.logs import (
    hist_bin_value_ns,
    parse_hist_log,
    parse_interval_log,
    per_second,
    plat_idx_to_val,
    second_of,
)
from arraybench.engines.fio.parse import parse_fio_json_file, percentile_from_bins
from arraybench.engines.fio.results import IntervalSample
from arraybench.errors import OutputParseError

DATA = Path(__file__).resolve().parent.parent / "data"
IOPS_12 = DATA / "12_samyaple_fio3.33_iops.1.log"
LAT_12 = DATA / "12_samyaple_fio3.33_lat.1.log"
BW_12 = DATA / "12_samyaple_fio3.33_bw.1.log"


def weighted_run_mean(lat: list[tuple[int, float]], iops: list[tuple[int, float]]) -> float:
    weights = dict(iops)
    pairs = [(value, weights[s]) for s, value in lat if s in weights]
    return sum(v * w for v, w in pairs) / sum(w for _, w in pairs)


# --------------------------------------------------------------------------- interval logs


def test_fio_3_33_five_column_logs() -> None:
    iops = parse_interval_log(IOPS_12)
    lat = parse_interval_log(LAT_12)
    assert len(iops) == 54 and len(lat) == 55
    assert iops[0] == IntervalSample(time_ms=1000, value=370139, ddir=1, bs=0, prio=0)
    assert lat[3].time_ms == 4001  # jitter kept as written
    assert lat[-1] == IntervalSample(time_ms=54886, value=79459, ddir=1, bs=0, prio=0)
    # the JSON (sample 11) says iops_mean 125,933.11 over the same 54 samples
    assert sum(s.value for s in iops) / len(iops) == pytest.approx(125933.111, rel=1e-6)
    assert parse_interval_log(str(IOPS_12)) == iops  # a str path is read, not parsed as text


def test_fio_2_four_column_logs() -> None:
    bw = parse_interval_log(DATA / "13_axboe_2013_fio2.1era_bw.log")
    assert len(bw) == 130
    assert bw[1] == IntervalSample(time_ms=747, value=16449, ddir=1, bs=131072, prio=None)
    iops = parse_interval_log(DATA / "14_axboe_2013_fio2.1era_iops.log")
    assert len(iops) == 121
    assert [s.time_ms for s in iops[:5]] == [0, 500, 1000, 1501, 2003]
    assert {s.ddir for s in iops} == {0} and all(s.prio is None for s in iops)


def test_log_text_blank_lines_extra_columns_and_hex_prio() -> None:
    text = "1000, 5, 0, 4096, 0x2003\n\n2000, 7, 1, 4096, 123456, 1\n"
    samples = parse_interval_log(text)
    assert samples[0] == IntervalSample(1000, 5.0, 0, 4096, prio=0x2003)
    # 6 columns: offset and prio order depends on options -> prio not guessed
    assert samples[1] == IntervalSample(2000, 7.0, 1, 4096, prio=None)


def test_bad_log_line_is_named() -> None:
    with pytest.raises(OutputParseError, match="line 3") as err:
        parse_interval_log("1000, 5, 0, 4096\n\n2000, x, 1, 4096\n")
    assert "not a number" in err.value.message
    with pytest.raises(OutputParseError, match=r"line 1: expected at least 4 columns"):
        parse_interval_log("1000, 5\n")
    with pytest.raises(OutputParseError, match="cannot read fio log"):
        parse_interval_log(DATA / "no_such_bw.1.log")


# --------------------------------------------------------------------------- per-second grid


def test_latency_must_be_io_weighted_write_cliff() -> None:
    iops_log, lat_log = parse_interval_log(IOPS_12), parse_interval_log(LAT_12)
    iops = per_second([iops_log], "iops")
    weighted = per_second([lat_log], "lat", iops_by_job=[iops_log])
    plain = per_second([lat_log], "lat")

    # 4001 ms and the other jittered stamps land on whole seconds 1..54; the flush row
    # at 54,886 ms is second 55
    assert [s for s, _ in iops] == list(range(1, 55))
    assert [s for s, _ in weighted] == list(range(1, 56))

    run_mean = weighted_run_mean(weighted, iops)
    assert run_mean == pytest.approx(253_774, rel=0.05)
    # ... and close to what fio itself says for the run (sample 11: lat_ns.mean 245,092)
    json_mean = (
        parse_fio_json_file(DATA / "11_samyaple_fio3.33_json_steadystate_randwrite_qd32.json")[0]
        .jobs[0]
        .write.lat_mean_ns
    )
    assert run_mean == pytest.approx(json_mean, rel=0.05)

    plain_mean = sum(v for _, v in plain) / len(plain)
    assert plain_mean == pytest.approx(882_803, rel=0.001)
    assert plain_mean > 3 * run_mean


def test_rates_are_summed_over_jobs_and_latency_stays_weighted() -> None:
    iops_log, lat_log = parse_interval_log(IOPS_12), parse_interval_log(LAT_12)
    one = dict(per_second([iops_log], "iops"))
    two = dict(per_second([iops_log, iops_log], "iops"))
    assert two[1] == 2 * one[1] == 2 * 370139
    lat_one = per_second([lat_log], "lat", iops_by_job=[iops_log])
    lat_two = per_second([lat_log, lat_log], "lat", iops_by_job=[iops_log, iops_log])
    assert dict(lat_two) == pytest.approx(dict(lat_one))
    assert per_second([iops_log], "iops", ddir=0) == []  # a write-only job has no reads
    with pytest.raises(ValueError):
        per_second([lat_log], "lat", iops_by_job=[iops_log, iops_log])
    with pytest.raises(ValueError):
        per_second([lat_log], "latency")


def test_bw_log_matches_iops_times_block_size() -> None:
    bw = dict(per_second([parse_interval_log(BW_12)], "bw"))
    iops = dict(per_second([parse_interval_log(IOPS_12)], "iops"))
    assert set(bw) == set(iops)
    for second, kib_per_s in bw.items():
        assert kib_per_s == pytest.approx(iops[second] * 4, rel=0.01)  # 4 KiB randwrite


def test_weighting_uses_each_jobs_own_iops() -> None:
    fast = [IntervalSample(1000, 100.0, 0, 0), IntervalSample(2000, 100.0, 0, 0)]
    slow = [IntervalSample(1000, 1000.0, 0, 0), IntervalSample(2000, 1000.0, 0, 0)]
    fast_iops = [IntervalSample(1000, 900.0, 0, 0), IntervalSample(2000, 900.0, 0, 0)]
    slow_iops = [IntervalSample(1000, 100.0, 0, 0)]  # no IOPS sample in second 2
    result = per_second([fast, slow], "clat", iops_by_job=[fast_iops, slow_iops])
    assert result[0] == (1, pytest.approx((100 * 900 + 1000 * 100) / 1000))
    assert result[1] == (2, pytest.approx(100.0))  # slow job cannot be weighted there


def test_half_second_windows_go_to_the_second_they_end_in() -> None:
    iops = parse_interval_log(DATA / "14_axboe_2013_fio2.1era_iops.log")
    by_second = dict(per_second([iops], "iops"))
    values = {s.time_ms: s.value for s in iops}
    assert by_second[0] == values[0]  # fio's initial 0 sample
    # 500 ms and 1000 ms windows make up second 1; 1501 and 2003 make up second 2, each
    # weighted by the window it covers (500 + 500 ms; 501 + 502 ms)
    assert by_second[1] == pytest.approx((values[500] + values[1000]) / 2)
    expected = (values[1501] * 501 + values[2003] * 502) / 1003
    assert by_second[2] == pytest.approx(expected)


def test_a_flush_row_weighs_by_its_partial_window() -> None:
    """Issue 15 (d): fio's flush row for the partial last window, in the same second as the
    last full window, counted as a full window put +10 % on that second's mean."""
    rows = parse_interval_log(DATA / "fresh_fio3.33_lat_flush_row.1.log")
    *_, full, flush = rows
    assert second_of(full.time_ms) == second_of(flush.time_ms)
    by_second = dict(per_second([rows], "lat"))
    span = flush.time_ms - full.time_ms
    window = full.time_ms - rows[-3].time_ms
    expected = (full.value * window + flush.value * span) / (window + span)
    assert by_second[second_of(full.time_ms)] == pytest.approx(expected)
    assert by_second[second_of(full.time_ms)] != pytest.approx((full.value + flush.value) / 2)


# --------------------------------------------------------------------------- histograms


def test_plat_idx_to_val_known_values() -> None:
    assert [plat_idx_to_val(i) for i in (0, 1, 127)] == [0, 1, 127]
    assert plat_idx_to_val(128) == 129  # group 1: buckets 2 wide, middle reported
    assert plat_idx_to_val(192) == 258  # group 2: 4 wide from 256
    # the last bucket of a 1216-bin (usec) histogram: 2**23 + 63.5 * 2**17
    assert plat_idx_to_val(1215) == 16_711_680


def test_hist_bin_values_by_era() -> None:
    assert hist_bin_value_ns(128, 1856) == 129  # fio >= 2.99: ns
    assert hist_bin_value_ns(128, 1216) == 129_000  # older: us -> ns
    assert hist_bin_value_ns(381, 1856) == 2008  # a key of sample 21's json+ bins
    # log_hist_coarseness=1: bin 64 covers fine buckets 128 and 129 (values 128..131)
    assert hist_bin_value_ns(64, 928) == 130
    with pytest.raises(OutputParseError):
        hist_bin_value_ns(0, 1000)
    with pytest.raises(ValueError):
        hist_bin_value_ns(1856, 1856)


def test_fio_2_17_hist_log() -> None:
    rows = parse_hist_log(DATA / "07_pkb_fio2.17_clat_hist.1.log")
    assert len(rows) == 9
    assert [r[0] for r in rows[:3]] == [1001, 2001, 3001]
    assert all(len(bins) == 1216 and ddir == 0 and bs == 16384 for _, ddir, bs, bins in rows)
    assert sum(rows[0][3]) == 8325

    merged: dict[int, int] = {}
    for *_, bins in rows:
        for index, count in enumerate(bins):
            if count:
                value = int(hist_bin_value_ns(index, len(bins)))
                merged[value] = merged.get(value, 0) + count
    # job 1 of the two randread jobs of sample 06: about half the group's 80,891 I/Os
    assert sum(merged.values()) == 39663
    group = parse_fio_json_file(DATA / "06_pkb_fio2.17_json_with_hist_logging.json")[0]
    read = group.jobs[0].read
    assert sum(merged.values()) == pytest.approx(read.ios / 2, rel=0.03)
    # usec bins converted to ns: the median agrees with the JSON's (96 us for both jobs)
    assert percentile_from_bins(merged, 50.0) == pytest.approx(read.percentiles_ns[50.0], rel=0.05)


def test_hist_log_rows_must_agree() -> None:
    with pytest.raises(OutputParseError, match="line 2"):
        parse_hist_log("1000, 0, 4096, 1, 2, 3\n2000, 0, 4096, 1, 2\n")
    rows = parse_hist_log("1000, 0, 4096, 1, 2, 3, \n")  # trailing ", " tolerated
    assert rows == [(1000, 0, 4096, [1, 2, 3])]
