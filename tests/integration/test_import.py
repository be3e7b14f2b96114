"""Importing existing fio results into the store: real samples (tests/data) and a fresh fio run.

Reference figures come from the files themselves (sample 03 is the original author's own
table for sample 02), read in the test, or from fio's JSON of the same run.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from arraybench.engines.fio.parse import parse_fio_json
from arraybench.engines.fio.textparse import parse_fio_text
from arraybench.errors import ArraybenchError
from arraybench.importer import ImportResult, import_paths
from arraybench.store.db import Store
from tests.conftest import main_cli, needs_fio
from tests.unit.test_textparse import fio_num2str

DATA = Path(__file__).resolve().parent.parent / "data"
KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*/w\d+-qd\d+(-d\d+)?(-h\d+)?$")


def sample(prefix: str) -> Path:
    (path,) = DATA.glob(f"{prefix}*")
    return path


def getresults_rows(path: Path) -> dict[str, list[list[int]]]:
    """Sample 03: tab-separated rows (Threads, IOPS per host, TOTAL_IOPS, Avg.Latency ...)."""
    rows: dict[str, list[list[int]]] = {}
    for line in path.read_text().splitlines():
        name, *values = line.split("\t")
        if values and all(v.isdigit() for v in values):  # not the (shifted) CPU % rows
            rows.setdefault(name, []).append([int(v) for v in values])
    return rows


def reasons(result: ImportResult) -> dict[str, str]:
    return {s.path: s.reason for s in result.skipped}


# --------------------------------------------------------------------------- sample 02 vs 03


def test_client_server_text_reproduces_the_authors_total_iops(tmp_path: Path) -> None:
    store = Store(tmp_path / "results")
    result = import_paths(store, [sample("02_")], run_name="dorado")
    assert result.points == [f"randread-8k/w{n}-qd1-h3" for n in range(1, 11)]
    points = store.points(result.run_id)
    (doc,) = parse_fio_text(sample("02_").read_text())
    table = getresults_rows(sample("03_"))
    threads = table["Threads"][0]
    assert threads == list(range(1, 11))
    hosts = list(dict.fromkeys(j.hostname for j in doc.jobs))  # getResults' row order
    assert hosts == ["host1", "host0", "host2"]
    for column, n in enumerate(threads):
        point = next(p for p in points if p.workers == n)
        per_host = {j.hostname: j for j in doc.jobs if j.groupid == n - 1}
        assert (point.hosts, point.jobs, point.iodepth) == (3, 3, 1)
        # the stored total is the sum of the per-host jobs, never "All clients"
        actual = [per_host[h].read.iops for h in hosts]
        assert point.metric("total", "iops") == pytest.approx(sum(actual))
        # getResults summed fio's printed per-host IOPS: the parsed jobs, printed as fio 3.12
        # prints them, give its IOPS rows and its TOTAL_IOPS exactly
        shown = [fio_num2str(int(v)) for v in actual]
        values = [round(float(s[:-1]) * 1000) if s.endswith("k") else int(s) for s in shown]
        assert values == [row[column] for row in table["IOPS"]]
        assert sum(values) == table["TOTAL_IOPS"][0][column]
        # and its Avg.Latency rows are each host's lat avg in whole usec
        lat_us = [int((per_host[h].read.lat_mean_ns or 0) / 1000) for h in hosts]
        assert lat_us == [row[column] for row in table["Avg.Latency"]]
    # The one column where getResults' total is off: at 9 threads host0 printed IOPS=21.0k
    # for 1317873 I/Os in 60001 ms (21964/s; BW=172MiB/s agrees), fio's display lost a carry.
    text = sample("02_").read_text()
    assert "(groupid=8, jobs=9): err= 0: pid=42512" in text
    assert "  read: IOPS=21.0k, BW=172MiB/s" in text
    nine = next(p for p in points if p.workers == 9)
    total_9 = table["TOTAL_IOPS"][0][8]
    assert nine.metric("total", "iops") - total_9 == pytest.approx(1006, abs=1)
    # elsewhere the exact total is within one display step (1, or 0.1k) per host of the table
    for column, total in enumerate(table["TOTAL_IOPS"][0]):
        point = next(p for p in points if p.workers == column + 1)
        steps = sum(1 if row[column] < 10_000 else 100 for row in table["IOPS"])
        if point.workers != 9:
            assert abs((point.metric("total", "iops") or 0) - total) <= steps


def test_all_clients_is_kept_apart_and_differs_from_the_sum_over_hosts(tmp_path: Path) -> None:
    store = Store(tmp_path / "results")
    result = import_paths(store, [sample("02_")], run_name="dorado")
    (doc,) = parse_fio_text(sample("02_").read_text())
    everyone = doc.all_clients
    assert everyone is not None
    points = store.points(result.run_id)
    assert sum(p.jobs for p in points) == 30  # 10 groups x 3 hosts, "All clients" not stored
    totals = [p.metric("total", "iops") or 0.0 for p in points]
    # MANIFEST: "All clients: (groupid=9, jobs=30)" sums all 30 thread_stats: IOPS=414k, not
    # the 72.7k of group 9 over the three hosts; it equals the sum over every stored point
    assert max(totals) == pytest.approx(72_707, abs=1)
    assert everyone.read.iops == pytest.approx(24845669 / 60.003)  # 414,074
    assert everyone.read.ios == sum(p.metric("total", "ios") or 0 for p in points)
    assert all(abs(everyone.read.iops - t) > 300_000 for t in totals)


# --------------------------------------------------------------------------- the sample folder


def test_the_sample_folder_imports_and_says_what_it_skipped(tmp_path: Path) -> None:
    results = tmp_path / "results"
    store = Store(results)
    # the samples this test was written for (later ones have tests of their own)
    folder = tmp_path / "data"
    folder.mkdir()
    for path in DATA.iterdir():
        if path.name[:2] < "24" or path.name.startswith("fresh_fio3.33_jsonplus"):
            (folder / path.name).write_bytes(path.read_bytes())
    result = import_paths(store, [folder], run_name="samples")
    assert all(KEY_RE.match(k) for k in result.points), result.points
    # 46 points from result files, and one rebuilt from sample 12's logs on their own
    assert len(result.points) == len(set(result.points)) == 47
    skipped = reasons(result)
    assert skipped["10_fioplot_failed_run_not_json.json"] == (
        "a fio run that printed no results (failed?): fio said 'fio: engine libaio not loadable'"
    )
    assert skipped["03_dorado_getResults_output_for_02.result"].startswith("not fio output")
    assert skipped["04_dorado_jobfile_Test02-Typerandread-BS8k-DeviceCount02.fio"].startswith(
        "not fio output"
    )
    assert "histogram log" in skipped["07_pkb_fio2.17_clat_hist.1.log"]
    assert "12_samyaple_fio3.33_iops.1.log" not in skipped  # imported on their own
    assert "only averaged logs" in skipped["13_axboe_2013_fio2.1era_bw.log"]
    notes = "\n".join(result.notes)
    assert (
        "17_fioblog_fio3.30_three_concatenated_json_docs_sigusr1.json: run 1: kept the last of 3"
        in notes
    )
    # sample 18: four separate runs of randread 4k at w1-qd1, told apart by job name
    for name in ("null", "xnvme_nil", "io_uring", "xnvme_io_uring"):
        assert f"randread-4k-{name}/w1-qd1" in result.points
    # sample 01 (one host) and 02 (three hosts) stay two curves of the same workload
    assert "randread-8k/w10-qd1" in result.points and "randread-8k/w10-qd1-h3" in result.points
    # fio 2.1.4 JSON lists no job options: rw and bs are inferred, and said so
    assert "randread-4k" in " ".join(result.points)
    assert "rw not stated: randwrite inferred" in notes
    run = store.get_run(result.run_id)
    assert run.status == "complete" and run.total_points == 47 and run.scenario == "imported"
    shown = main_cli("show", result.run_id, "--results", str(results), "--format", "csv")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("\n") == 48 and "randread-8k/w10-qd1-h3" in shown.stdout
    report = main_cli("report", result.run_id, "--results", str(results), "-o",
                      str(tmp_path / "r.html"))  # fmt: skip
    assert report.returncode == 0, report.stderr
    assert "randread-8k" in (tmp_path / "r.html").read_text()


def test_nothing_to_import_is_one_error_and_no_run(tmp_path: Path) -> None:
    folder = tmp_path / "junk"
    folder.mkdir()
    for prefix in ("03_", "04_", "10_"):
        shutil.copy(sample(prefix), folder)
    store = Store(tmp_path / "results")
    with pytest.raises(ArraybenchError) as info:
        import_paths(store, [folder, tmp_path / "missing"], run_name="junk")
    assert info.value.message.startswith("nothing to import: 3 file(s) examined")
    assert info.value.hint and "--output-format=json" in info.value.hint
    assert store.list_runs() == []


def test_an_unreadable_file_is_skipped_with_its_reason(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    text = sample("01_").read_text()
    (folder / "cut.txt").write_text(text.replace("(1860MiB/60001msec)", "(1860MiB)", 1))
    (folder / "binary.json").write_bytes(b"\0\1\2" * 100)
    shutil.copy(sample("23_"), folder / "ok.txt")
    store = Store(tmp_path / "results")
    result = import_paths(store, [folder], run_name="mixed")
    assert reasons(result) == {
        "cut.txt": "cut.txt: line 24: cannot read fio's direction line: "
        "'read: IOPS=3967, BW=30.0MiB/s (32.5MB/s)(1860MiB)'",
        "binary.json": "binary file, not fio output",
    }
    assert result.points == ["randread-4k/w64-qd1", "randwrite-4k/w64-qd1",
                             "read-128k/w64-qd1", "write-128k/w64-qd1"]  # fmt: skip


# --------------------------------------------------------------------------- logs and names


def test_interval_logs_become_the_points_samples(tmp_path: Path) -> None:
    """Sample 11 with its logs (12) under their original names: write_iops_log ends in
    randwrite-iodepth-32-numjobs-1, so fio wrote randwrite-iodepth-32-numjobs-1_iops.1.log."""
    folder = tmp_path / "nvme2n1" / "4k"
    folder.mkdir(parents=True)
    shutil.copy(sample("11_"), folder / "randwrite-32-1.json")
    for kind in ("bw", "iops", "lat"):
        shutil.copy(DATA / f"12_samyaple_fio3.33_{kind}.1.log",
                    folder / f"randwrite-iodepth-32-numjobs-1_{kind}.1.log")  # fmt: skip
    shutil.copy(DATA / "13_axboe_2013_fio2.1era_bw.log", folder / "other_bw.log")
    store = Store(tmp_path / "results")
    result = import_paths(store, [tmp_path / "nvme2n1"], run_name="logs")
    assert result.points == ["randwrite-4k/w1-qd32"]
    assert list(reasons(result)) == ["4k/other_bw.log"]  # relative to the folder given
    (point,) = store.points(result.run_id)
    samples = store.samples(point.id)
    iops_rows = [line.split(",") for line in (folder.glob("*_iops.1.log").__next__()).read_text()
                 .splitlines() if line.strip()]  # fmt: skip
    assert len(samples) == len(iops_rows) == 54
    mean = sum(s.write_iops or 0 for s in samples) / len(samples)
    assert mean == pytest.approx(sum(float(r[1]) for r in iops_rows) / 54)  # 125,933
    assert mean == pytest.approx(125_933, abs=1)  # MANIFEST
    weighted = sum((s.write_lat_us or 0) * (s.write_iops or 0) for s in samples) / sum(
        s.write_iops or 0 for s in samples
    )
    assert weighted == pytest.approx(253.8, abs=0.5)  # MANIFEST: about 253,774 ns
    assert point.metric("write", "lat_mean_us") == pytest.approx(245.09, abs=0.01)  # JSON lat
    assert "without Unix-epoch stamps" in " ".join(result.notes)


def test_the_name_pattern_fills_what_the_file_does_not_say(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(sample("02_"), folder / "Test01-Typerandread-BS8k-DeviceCount01.txt")
    shutil.copy(sample("20_"), folder / "hdd-randread-4-1.json")
    store = Store(tmp_path / "results")
    pattern = (r"Type(?P<rw>\w+)-BS(?P<bs>\w+)-DeviceCount(?P<workers>\d+)"
               r"|^(?P<workload>[a-z]+)-\w+-(?P<iodepth>\d+)-\d+\.json$")  # fmt: skip
    result = import_paths(store, [folder], run_name="named", name_pattern=pattern)
    # the Dorado file holds 10 thread counts: fio's own job counts are kept, and said so
    assert [k for k in result.points if k.endswith("-h3")] == [
        f"randread-8k/w{n}-qd1-h3" for n in range(1, 11)
    ]
    notes = "\n".join(result.notes)
    assert "the name says workers=01, but the file holds 10 values of workers" in notes
    # the fio-plot style name gives the workload name and (over fio's iodepth=1) the iodepth
    assert "hdd/w1-qd4" in result.points
    assert "hdd-randread-4-1.json: iodepth=4 from the file name (fio's output says 1)" in notes
    with pytest.raises(ArraybenchError) as info:
        import_paths(store, [folder], run_name="bad", name_pattern=r"(?P<thread>\d+)")
    assert "named groups must be among workload, bs, rw, workers" in info.value.message
    assert "(found thread)" in info.value.message


# --------------------------------------------------------------------------- a fresh fio run

JOB = """\
[global]
filename={data}
size=16m
time_based=1
runtime=1
ioengine=libaio
iodepth=4
write_iops_log=fresh
write_bw_log=fresh
write_lat_log=fresh
log_avg_msec=250

[rr]
rw=randrw
rwmixread=70
bs=4k
numjobs=2

[sw]
stonewall
rw=write
bs=64k
numjobs=2
group_reporting
lat_percentiles=1
"""


@needs_fio
def test_fresh_run_text_and_json_agree(tmp_path: Path, each_fio: str) -> None:
    """fio's own JSON and text output imported: on the system's fio and on fio 3.42."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "job.fio").write_text(JOB.format(data=tmp_path / "data"))
    out = tmp_path / "both.txt"
    subprocess.run([each_fio, "job.fio", "--output-format=json,normal", f"--output={out}"],
                   cwd=run, check=True, capture_output=True, timeout=60)  # fmt: skip
    both = out.read_text()
    (from_json,) = parse_fio_json(both)
    (from_text,) = parse_fio_text(both, out.name)
    assert [(j.name, j.groupid) for j in from_text.jobs] == [("rr", 0), ("rr", 0), ("sw", 1)]
    assert [(j.name, j.groupid) for j in from_json.jobs] == [("rr", 0), ("rr", 0), ("sw", 1)]
    for text_job, json_job in zip(from_text.jobs, from_json.jobs, strict=True):
        for ddir in ("read", "write", "trim"):
            t, j = text_job.direction(ddir), json_job.direction(ddir)
            assert (t.ios, t.io_bytes, t.runtime_ms) == (j.ios, j.io_bytes, j.runtime_ms)
            assert t.iops == pytest.approx(j.iops, rel=1e-6)  # fio: 1000 * ios / runtime
            assert t.bw_bytes == pytest.approx(j.bw_bytes, abs=1)
            assert t.lat_kind == j.lat_kind
            if not j.ios:
                continue
            unit = 1000 if (j.lat_max_ns or 0) < 1e9 else 1e6  # fio printed usec here
            assert t.lat_mean_ns == pytest.approx(j.lat_mean_ns, abs=unit / 100)
            assert abs((t.lat_min_ns or 0) - (j.lat_min_ns or 0)) < unit
            assert abs((t.lat_max_ns or 0) - (j.lat_max_ns or 0)) < unit
            assert t.percentiles_ns.keys() == j.percentiles_ns.keys()
            for pct, value in j.percentiles_ns.items():
                assert abs(t.percentiles_ns[pct] - value) <= unit, pct
    assert from_text.jobs[2].write.lat_kind == "lat"  # lat_percentiles=1
    assert from_text.jobs[2].options["numjobs"] == "2"  # (groupid=1, jobs=2)

    # import the two formats side by side with the logs: same figures, samples on JSON only
    json_start = both.index("\n{") + 1
    end = json.JSONDecoder().raw_decode(both, json_start)[1]
    (run / "out.json").write_text(both[json_start:end])
    (run / "out.txt").write_text(both[:json_start] + both[end:])
    store = Store(tmp_path / "results")
    result = import_paths(store, [run], run_name="fresh")
    assert sorted(result.points) == [
        "randrw70-4k-out.json/w2-qd4", "randrw70-4k-out.txt/w2-qd4",
        "write-64k-out.json/w2-qd4", "write-64k-out.txt/w2-qd4",
    ]  # fmt: skip
    by_key = {p.key: p for p in store.points(result.run_id)}
    for name in ("randrw70-4k", "write-64k"):
        a, b = by_key[f"{name}-out.json/w2-qd4"], by_key[f"{name}-out.txt/w2-qd4"]
        for scope in ("read", "write", "total"):
            assert a.metric(scope, "ios") == b.metric(scope, "ios")
            assert a.metric(scope, "iops") == pytest.approx(b.metric(scope, "iops"), rel=1e-6)
        assert len(store.samples(a.id)) >= 2 and store.samples(b.id) == []
    skipped = reasons(result)
    assert {p for p in skipped if p.startswith("fresh_")} == {
        f"fresh_{kind}.{n}.log" for kind in ("clat", "slat") for n in range(1, 5)
    }
    assert set(skipped) - {p for p in skipped if p.startswith("fresh_")} == {"job.fio"}
