"""fio JSON parsing against real fio outputs (tests/data, see MANIFEST.md) and a fresh fio run.

Expected numbers were read from the sample files by hand; unit conversions are spelled out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arraybench.engines.fio.logs import plat_idx_to_val
from arraybench.engines.fio.parse import (
    last_document,
    parse_fio_json,
    parse_fio_json_file,
    percentile_from_bins,
)
from arraybench.engines.measurement import EngineDocument
from arraybench.errors import OutputParseError

DATA = Path(__file__).resolve().parent.parent / "data"
FRESH = "fresh_fio3.33_jsonplus_randrw_2jobs.json"


def only(name_prefix: str) -> EngineDocument:
    (path,) = DATA.glob(f"{name_prefix}*.json")
    docs = parse_fio_json_file(path)
    assert len(docs) == 1
    return docs[0]


def raw_json(name_prefix: str) -> dict[str, Any]:
    (path,) = DATA.glob(f"{name_prefix}*.json")
    text = path.read_text()
    raw: dict[str, Any] = json.JSONDecoder().raw_decode(text, text.index("{"))[0]
    return raw


# --------------------------------------------------------------------------- fio 2.x (usec)


def test_fio_2_1_4_kib_io_bytes_usec_latency_and_no_total_ios() -> None:
    doc = only("05_")
    assert doc.engine_version == "fio-2.1.4"
    assert doc.timestamp is None and doc.global_options == {}
    assert [j.name for j in doc.jobs][:2] == ["sequential_write", "sequential_read"]
    assert len(doc.jobs) == 5
    assert doc.disk_util[0]["name"] == "sdb"

    read = doc.jobs[1].read
    assert read.iops == 253
    assert read.io_bytes == 361984 * 1024  # io_bytes is KiB before fio 2.21
    assert read.bw_bytes == 129836 * 1024  # bw is KiB/s
    assert read.runtime_ms == 2788
    assert read.lat_mean_ns == pytest.approx(250770.05 * 1000)  # "lat" mean, usec
    assert read.lat_min_ns == 24361 * 1000
    assert read.lat_kind == "clat"  # percentiles come from clat
    assert read.percentiles_ns[99.0] == 473088 * 1000
    # 3 duplicate "0.00" : 0 padding keys per percentile object are not percentiles
    assert 0.0 not in read.percentiles_ns
    assert len(read.percentiles_ns) == 19  # 2.1.4 also prints 25th and 75th
    # no total_ios and no bs option: round(iops * runtime) = round(253 * 2.788)
    assert read.ios == 705
    assert doc.jobs[1].usr_cpu == pytest.approx(0.57)

    write = doc.jobs[0].write
    assert write.io_bytes == 370_671_616  # 361,984 KiB
    assert write.lat_mean_ns == pytest.approx(478_737_470)
    assert write.percentiles_ns[99.0] == 823_296_000


def test_fio_2_1_4_zero_count_direction_has_no_latency() -> None:
    trim = only("05_").jobs[0].trim
    assert trim.empty
    assert trim.lat_mean_ns is None and trim.lat_max_ns is None
    assert trim.percentiles_ns == {}
    assert trim.bins_ns is None


def test_fio_2_17_total_ios_and_kib_io_bytes_agree_with_bs() -> None:
    doc = only("06_")
    read = doc.jobs[0].read
    assert read.ios == 80891
    assert read.io_bytes == 1294256 * 1024
    assert read.io_bytes == read.ios * 16 * 1024  # bs=16k: proves the KiB conversion
    assert read.iops == pytest.approx(8086.673998)
    assert read.lat_mean_ns == pytest.approx(245531.122)
    assert read.percentiles_ns[50.0] == 96_000
    assert doc.global_options["log_hist_msec"] == "1000"
    assert doc.jobs[0].options["bs"] == "16k"
    assert doc.jobs[1].write.ios == 24580


def test_fio_2_18_last_usec_format() -> None:
    job = only("08_").jobs[0]
    write = job.write
    assert write.io_bytes == 675664 * 1024 == write.ios * 4096
    assert write.lat_mean_ns == pytest.approx(50998.656)
    assert write.lat_max_ns == 1_881_000
    assert write.percentiles_ns[99.0] == 45_000
    assert job.options["iodepth"] == "01"  # option values stay strings, verbatim
    assert job.elapsed_s == 11


# --------------------------------------------------------------------------- fio 3.x (nsec)


def test_fio_3_1_ns_keys_without_bw_bytes() -> None:
    read = only("09_").jobs[0].read
    assert read.io_bytes == 1_625_501_696  # bytes since 2.21 (io_kbytes present)
    assert read.bw_bytes == 26456 * 1024  # no bw_bytes key before 3.2
    assert read.ios == 396851
    assert read.percentiles_ns[99.0] == 142_336
    assert read.percentiles_ns[99.9] == 464_896
    assert 0.0 not in read.percentiles_ns  # 3.1 still pads with "0.00"
    # mean is total latency (lat_ns 147,792), not completion latency (clat_ns 135,557)
    assert read.lat_mean_ns == pytest.approx(147792.395919)
    assert read.lat_kind == "clat"


def test_fio_3_33_steadystate_block_is_kept_raw() -> None:
    job = only("11_").jobs[0]
    assert job.steadystate is not None
    assert job.steadystate["attained"] == 1
    assert job.steadystate["ss"] == "iops:10.000000%"
    assert job.options["steadystate"] == "iops:10%%"
    assert job.elapsed_s == 56 and job.job_runtime_ms == 54886
    write = job.write
    assert write.iops == pytest.approx(130289.941152)
    assert write.lat_mean_ns == pytest.approx(245091.93956)
    assert write.lat_max_ns == 265_801_784
    assert job.read.empty and job.read.lat_mean_ns is None


def test_sigint_preamble_is_kept() -> None:
    doc = only("15_")
    assert "terminating on signal 2" in doc.preamble
    assert not doc.preamble.startswith("{")
    job = doc.jobs[0]
    assert job.read.runtime_ms == 48170 and job.elapsed_s == 49
    assert job.write.ios == 1_894_836
    assert job.job_runtime_ms == 288_990  # reported as is, however implausible


def test_steadystate_attained_with_bw_bytes() -> None:
    job = only("16_").jobs[0]
    assert job.steadystate is not None and job.steadystate["attained"] == 1
    assert job.write.bw_bytes == 20_876_748_060  # bw_bytes taken over bw (KiB/s) * 1024
    assert job.write.lat_mean_ns == pytest.approx(50.46915)


def test_three_concatenated_documents() -> None:
    docs = parse_fio_json_file(
        DATA / "17_fioblog_fio3.30_three_concatenated_json_docs_sigusr1.json"
    )
    assert len(docs) == 3
    assert [d.jobs[0].elapsed_s for d in docs] == [24, 44, 45]
    assert [d.jobs[0].steadystate["attained"] for d in docs if d.jobs[0].steadystate] == [0, 0, 1]
    assert [d.jobs[0].write.ios for d in docs] == [120_463_525, 222_964_549, 224_445_036]
    assert last_document(docs) is docs[2]
    with pytest.raises(OutputParseError):
        last_document([])


def test_error_preamble_and_job_error() -> None:
    doc = only("19_")
    assert doc.jobs[0].error == 42
    assert "err=42" in doc.preamble and "Illegal byte sequence" in doc.preamble
    assert "Different Error" in doc.preamble  # both lines are kept
    assert doc.global_options["bs"] == "4k"
    assert doc.jobs[0].read.ios == 131426


def test_fio_3_16() -> None:
    job = only("20_").jobs[0]
    assert job.read.ios == 6839
    assert job.read.bw_bytes == 466_797
    assert job.read.percentiles_ns[99.0] == 15_925_248
    assert job.read.lat_mean_ns == pytest.approx(8767463.135692)
    assert job.options["fsync"] == "10000"


def test_fio_3_40_flag_options_are_empty_strings() -> None:
    job = only("22_").jobs[0]
    assert job.options["time_based"] == ""
    assert job.options["group_reporting"] == ""
    assert job.name.startswith("hourly_automated_test,pattern:read,block_size:4k")
    assert job.write.ios == 100_579
    assert job.write.lat_mean_ns == pytest.approx(49263.245807)
    assert not job.read.empty and job.trim.empty


def test_no_json_reports_the_first_line() -> None:
    with pytest.raises(OutputParseError) as err:
        parse_fio_json_file(DATA / "10_fioplot_failed_run_not_json.json")
    assert "no fio JSON document found" in err.value.message
    assert "fio: engine libaio not loadable" in err.value.message
    assert err.value.hint


def test_cut_short_document_is_not_json() -> None:
    text = (DATA / "09_fioplot_fio3.1_json_ns_keys_randread.json").read_text()
    with pytest.raises(OutputParseError, match="no fio JSON document"):
        parse_fio_json(text[: len(text) // 2])


def test_text_between_documents_is_the_next_preamble() -> None:
    one = (DATA / "22_styliteag_fio3.40_json_readwrite_job_start.json").read_text()
    text = "fio: {weird} message\n" + one + "\nfio: pid=1, err=5\n" + one
    docs = parse_fio_json(text)
    assert [d.preamble for d in docs] == ["fio: {weird} message", "fio: pid=1, err=5"]


# --------------------------------------------------------------------------- json+ / percentiles


def test_percentile_rule_on_a_small_histogram() -> None:
    bins = {30: 2, 10: 1, 20: 1}
    assert percentile_from_bins(bins, 25.0) == 10  # 1 >= 1
    assert percentile_from_bins(bins, 50.0) == 20  # reaching the threshold is enough (>=)
    assert percentile_from_bins(bins, 50.1) == 30
    assert percentile_from_bins(bins, 100.0) == 30
    assert percentile_from_bins({}, 99.0) is None
    # fio compares in long double: 99.9 (a double a hair above 99.9) / 100 * 1000 is above
    # 999, so 999 of 1000 I/Os do not reach it (checked with fio's expression compiled by gcc
    # on x86-64); plain double arithmetic rounds to exactly 999.0 and would answer 1.
    assert percentile_from_bins({1: 999, 2: 1}, 99.9) == 2
    assert percentile_from_bins({1: 9995, 2: 5}, 99.95) == 2
    with pytest.raises(ValueError):
        percentile_from_bins(bins, 101.0)


def test_jsonplus_bins_reproduce_fio_percentiles_sample_21() -> None:
    write = only("21_").jobs[0].write
    assert write.bins_ns is not None
    assert len(write.bins_ns) == 434
    assert sum(write.bins_ns.values()) == write.ios == 16384
    assert write.bins_ns[2008] == 1  # bins keyed by latency (ns), counts as given
    assert len(write.percentiles_ns) == 17
    for pct, value in write.percentiles_ns.items():
        assert percentile_from_bins(write.bins_ns, pct) == value, pct
    # the keys are fio bucket values: bucket 381 is 2008 ns
    assert plat_idx_to_val(381) == 2008


def test_fresh_fio_3_33_lat_percentiles_jsonplus() -> None:
    doc = only("fresh_fio3.33_jsonplus")
    raw = raw_json("fresh_fio3.33_jsonplus")
    assert doc.engine_version == "fio-3.33"
    assert len(doc.jobs) == 2  # numjobs=2 without group_reporting
    for job, raw_job in zip(doc.jobs, raw["jobs"], strict=True):
        for name in ("read", "write"):
            stats, raw_dir = job.direction(name), raw_job[name]
            # lat_percentiles=1: everything comes from total latency
            assert stats.lat_kind == "lat"
            assert stats.lat_mean_ns == pytest.approx(raw_dir["lat_ns"]["mean"])
            assert stats.lat_mean_ns != pytest.approx(raw_dir["clat_ns"]["mean"])
            assert stats.percentiles_ns[99.0] == raw_dir["lat_ns"]["percentile"]["99.000000"]
            assert stats.bins_ns == {int(k): v for k, v in raw_dir["lat_ns"]["bins"].items()}
            assert stats.ios == raw_dir["total_ios"] == sum(stats.bins_ns.values())
            assert stats.io_bytes == stats.ios * 4096
            # fio's rule reproduces every percentile fio printed, for lat AND clat
            for block in ("lat_ns", "clat_ns"):
                bins = {int(k): v for k, v in raw_dir[block]["bins"].items()}
                for key, value in raw_dir[block]["percentile"].items():
                    assert percentile_from_bins(bins, float(key)) == value, (block, key)


def test_fio_2_jsonplus_bins_keyed_by_index() -> None:
    # fio 2.x json+ listed every bucket by index plus the geometry constants, in usec
    bins = {str(i): 0 for i in range(1216)}
    bins.update({"100": 3, "200": 1})
    bins.update({"FIO_IO_U_PLAT_BITS": 6, "FIO_IO_U_PLAT_VAL": 64, "FIO_IO_U_PLAT_NR": 1216})
    direction = {
        "io_bytes": 16,
        "bw": 16,
        "iops": 4.0,
        "runtime": 1000,
        "total_ios": 4,
        "clat": {"min": 100, "max": 400, "mean": 150.0, "percentile": {}, "bins": bins},
        "lat": {"min": 101, "max": 401, "mean": 151.0},
    }
    text = json.dumps({"fio version": "fio-2.15", "jobs": [{"jobname": "j", "read": direction}]})
    read = parse_fio_json(text)[0].jobs[0].read
    # bucket 200: error_bits 2, base 256, k 8 -> 256 + 8.5 * 4 = 290 us
    assert read.bins_ns == {100_000: 3, 290_000: 1}
    assert read.lat_mean_ns == 151_000


# --------------------------------------------------------------------------- client/server


def _client_direction(ios: int, lat_mean: float) -> dict[str, Any]:
    return {
        "io_bytes": ios * 4096,
        "io_kbytes": ios * 4,
        "bw_bytes": ios * 4096,
        "bw": ios * 4,
        "iops": float(ios),
        "runtime": 1000,
        "total_ios": ios,
        "clat_ns": {"min": 0, "max": 9000, "mean": lat_mean - 20, "N": ios},
        "lat_ns": {"min": 0, "max": 9100, "mean": lat_mean, "N": ios},
    }


def _client_entry(name: str, host: str | None, port: int, ios: int, lat: float) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "jobname": name,
        "groupid": 0,
        "error": 0,
        "read": _client_direction(ios, lat),
        "write": _client_direction(0, 0.0),
        "trim": _client_direction(0, 0.0),
    }
    if host:
        entry["job options"] = {"numjobs": 1}
        entry.update(hostname=host, port=port)
    return entry


def test_client_server_all_clients_is_kept_apart() -> None:
    hosts = [
        ("host0", 8765, 1000, 800.0),
        ("host1", 8765, 2000, 900.0),
        ("host2", 8766, 3000, 1000.0),
    ]
    doc_raw = {
        "fio version": "fio-3.43",
        "timestamp": 1790604275,
        "global options": [
            {"hostname": "host0", "port": 8765, "bs": "4k", "rw": "randread"},
            {"hostname": "host1", "port": 8765, "bs": "8k", "direct": "1"},
        ],
        "client_stats": [_client_entry("test", h, p, n, lat) for h, p, n, lat in hosts]
        # fio stamps the sum entry with the LAST client's hostname
        + [_client_entry("All clients", None, 0, 6000, 933.3) | {"hostname": "host2"}],
        "disk_util": [],
    }
    docs = parse_fio_json("\n" + json.dumps(doc_raw, indent=2))
    doc = docs[0]
    assert doc.preamble == ""
    assert [j.hostname for j in doc.jobs] == ["host0", "host1", "host2"]
    assert [j.read.ios for j in doc.jobs] == [1000, 2000, 3000]
    assert doc.jobs[0].options == {"numjobs": "1"}  # values become strings
    assert doc.all_clients is not None
    assert doc.all_clients.name == "All clients"
    assert doc.all_clients.hostname is None  # it sums all hosts, it is not host2's
    assert doc.all_clients.read.ios == sum(j.read.ios for j in doc.jobs)
    # merged, first server wins, server addresses are not options
    assert doc.global_options == {"bs": "4k", "rw": "randread", "direct": "1"}
    assert doc.timestamp_ms is None


def test_unknown_version_detects_kib_io_bytes_by_bandwidth() -> None:
    direction = {"io_bytes": 2000, "bw": 1000, "iops": 250.0, "runtime": 2000, "total_ios": 500}
    text = json.dumps({"jobs": [{"jobname": "x", "read": direction}]})
    assert parse_fio_json(text)[0].jobs[0].read.io_bytes == 2000 * 1024
    direction["io_bytes"] = 2000 * 1024
    text = json.dumps({"jobs": [{"jobname": "x", "read": direction}]})
    assert parse_fio_json(text)[0].jobs[0].read.io_bytes == 2000 * 1024


def test_ios_from_io_bytes_and_per_direction_bs() -> None:
    job: dict[str, Any] = {
        "jobname": "old",
        "job options": {"bs": "4k,64k"},
        "read": {"io_bytes": 400, "bw": 200, "iops": 99, "runtime": 2000},
        "write": {"io_bytes": 640, "bw": 320, "iops": 4, "runtime": 2000},
    }
    doc = parse_fio_json(json.dumps({"fio version": "fio-2.1.4", "jobs": [job]}))[0]
    assert doc.jobs[0].read.ios == 100  # 400 KiB / 4 KiB, not iops * runtime (198)
    assert doc.jobs[0].write.ios == 10  # 640 KiB / 64 KiB


def test_json_not_shaped_like_fio_is_a_parse_error() -> None:
    text = json.dumps(
        {"fio version": "fio-3.33", "jobs": [{"jobname": "x", "read": {"io_bytes": "lots"}}]}
    )
    with pytest.raises(OutputParseError, match="document 1 is malformed"):
        parse_fio_json(text)
