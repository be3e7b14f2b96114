"""Issue 15: importing real archives reproduces fio's own figures (multi-host text with queued
host prefixes, several runs in one file, status dumps, terse), and hostile files are bounded.

Expected figures are read from the files by regular expressions in the test (fio's issued
counts and runtimes), never from the parser under test.
"""

from __future__ import annotations

import re
import shutil
import time
from collections import defaultdict
from pathlib import Path

import pytest

from arraybench.importer import import_paths
from arraybench.store.db import Store

DATA = Path(__file__).resolve().parent.parent / "data"


def _copy(tmp_path: Path, *prefixes: str) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    for prefix in prefixes:
        for path in DATA.glob(f"{prefix}*"):
            shutil.copy(path, folder / path.name)
    return folder


def _printed_group_iops(path: Path) -> dict[int, float]:
    """Per groupid, the sum over hosts of fio's issued I/Os / runtime (ms), from the text."""
    text = path.read_text()
    blocks = re.findall(
        r"^(?!All clients)\S.*?: \(groupid=(\d+), jobs=\d+\).*?\((?:[^()/]+)/(\d+)msec\)"
        r".*?issued rwts: total=(\d+),(\d+)",
        text,
        re.MULTILINE | re.DOTALL,
    )
    totals: dict[int, float] = defaultdict(float)
    for group, runtime, reads, writes in blocks:
        totals[int(group)] += (int(reads) + int(writes)) * 1000 / int(runtime)
    return totals


def test_multi_host_archives_give_one_point_per_group_with_every_host(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "24_", "25_")
    store = Store(tmp_path / "results")
    result = import_paths(store, [folder], run_name="dorado")
    keys = result.points
    assert len(keys) == 20 and not result.skipped
    assert sum(k.startswith("randread-8k/") and k.endswith("-h4") for k in keys) == 10
    assert sum(k.startswith("randwrite-8k/") and k.endswith("-h3") for k in keys) == 10
    assert not any("status dump" in n for n in result.notes)
    points = {p.key: p for p in store.points(result.run_id)}
    for prefix, workload, hosts in (("24_", "randread-8k", 4), ("25_", "randwrite-8k", 3)):
        (path,) = DATA.glob(f"{prefix}*")
        expected = _printed_group_iops(path)
        # group g of these files ran numjobs = the "threads" figure in the job name x devices
        ours = sorted(
            (p.metric("total", "iops") or 0.0 for k, p in points.items() if k.startswith(workload)),
        )
        assert ours == pytest.approx(sorted(expected.values()), rel=1e-9)
        assert all(k.endswith(f"-h{hosts}") for k in points if k.startswith(workload))


def test_two_runs_in_one_file_are_two_points_and_status_dumps_one(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "fresh_fio3.33_normal_two", "fresh_fio3.33_normal_status")
    store = Store(tmp_path / "results")
    result = import_paths(store, [folder], run_name="runs")
    assert len(result.points) == 3
    notes = "\n".join(result.notes)
    assert "two_invocations_same_job.txt: 2 separate fio runs in one file" in notes
    assert "status_interval_dumps.txt: run 1: kept the last of 2 status dumps" in notes
    text = (folder / "fresh_fio3.33_normal_two_invocations_same_job.txt").read_text()
    issued = [int(n) for n in re.findall(r"issued rwts: total=(\d+),", text)]
    stored = sorted(
        p.metric("total", "ios") for p in store.points(result.run_id) if "two_inv" in p.key
    )
    assert stored == sorted([issued[0] + issued[1], issued[2] + issued[3]])


def test_terse_files_import_with_the_json_figures(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "fresh_fio3.33_terse_v4")
    store = Store(tmp_path / "results")
    result = import_paths(store, [folder], run_name="terse")
    # terse names no rw mode: the measured split gives a 70/30 mix, sequential unless the job
    # name says "rand" (the job is called "mixed"), and the notes say it was inferred
    assert sorted(result.points) == ["rw70-4k/w2-qd1", "write-64k/w1-qd1"]
    notes = "\n".join(result.notes)
    assert "terse output: block size inferred" in notes and "rw not stated" in notes
    (point,) = [p for p in store.points(result.run_id) if p.key == "rw70-4k/w2-qd1"]
    text = next(folder.iterdir()).read_text()
    reads = [int(n) for n in re.findall(r'"read" : \{.*?"total_ios" : (\d+)', text, re.DOTALL)]
    assert point.metric("read", "ios") == reads[0] + reads[1]  # the two "mixed" jobs (JSON)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("braces.json", "{" * (512 << 10)),
        ("brace_lines.txt", "{\n" * (512 << 10)),
        ("deep.json", '{"fio version": "fio-3.33", "jobs": ' + "[" * 200_000 + "]" * 200_000),
    ],
)
def test_hostile_files_are_refused_in_linear_time(tmp_path: Path, name: str, content: str) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / name).write_text(content)
    shutil.copy(next(DATA.glob("01_*")), folder)  # something importable beside it
    started = time.monotonic()
    result = import_paths(Store(tmp_path / "results"), [folder], run_name="hostile")
    assert time.monotonic() - started < 20  # was 32 s for 512 KiB of "{" (quadratic)
    (skipped,) = result.skipped
    assert skipped.path == name and "\n" not in skipped.reason and len(skipped.reason) < 200


def test_a_file_above_the_size_limit_is_refused_with_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    big = folder / "huge.txt"
    with big.open("wb") as handle:
        handle.truncate(300 << 20)  # sparse: no disk space used
    shutil.copy(next(DATA.glob("01_*")), folder)
    result = import_paths(Store(tmp_path / "results"), [folder], run_name="big")
    (skipped,) = result.skipped
    assert skipped.reason == "300 MiB, larger than the 256 MiB import limit"


def test_logs_without_a_result_file_become_a_time_series_point(tmp_path: Path) -> None:
    """Sample 12's logs (fio 3.33, log_avg_msec=1000) imported without their JSON (11): the
    totals are the logged rates integrated over their windows, close to the JSON's."""
    folder = _copy(tmp_path, "12_samyaple")
    store = Store(tmp_path / "results")
    result = import_paths(store, [folder], run_name="logs")
    assert result.points == ["write-4k/w1-qd1"] and not result.skipped
    assert any("rebuilt from them" in n for n in result.notes)
    (point,) = store.points(result.run_id)
    truth = (DATA / "11_samyaple_fio3.33_json_steadystate_randwrite_qd32.json").read_text()
    ios, runtime = re.search(r'"total_ios" : ([1-9]\d*),.*?', truth), 54887
    assert ios is not None
    # the iops log stops at 54,000 ms (no flush row): 887 ms of the run are not in it
    assert point.metric("total", "iops") == pytest.approx(int(ios.group(1)) * 1000 / runtime,
                                                          rel=0.04)  # fmt: skip
    assert len(store.samples(point.id)) == 54


def test_histogram_logs_give_percentiles_where_the_result_cannot(tmp_path: Path) -> None:
    """Two jobs without group_reporting, fio JSON (not json+): fio's per-job percentiles
    cannot be merged, the jobs' histogram logs can. A merged percentile lies between the
    jobs' own (fio's), within what the unlogged last window moves it."""
    folder = _copy(tmp_path, "fresh_fio3.33_hist_2jobs")
    store = Store(tmp_path / "results")
    result = import_paths(store, [folder], run_name="hist")
    (point,) = store.points(result.run_id)
    text = (folder / "fresh_fio3.33_hist_2jobs.json").read_text()
    for pct, name in (("50", "lat_p50_us"), ("99", "lat_p99_us")):
        per_job = [int(v) / 1000 for v in re.findall(rf'"{pct}\.000000" : (\d+)', text)]
        assert len(per_job) == 2
        value = point.metric("read", name)
        assert value is not None
        assert min(per_job) * 0.95 <= value <= max(per_job) * 1.05, (name, value, per_job)
    logged = sum(
        int(n)
        for log in folder.glob("*_clat_hist.*.log")
        for line in log.read_text().splitlines()
        for n in line.split(",")[3:]
    )
    assert any(f"{logged} of " in n and "histogram log" in n for n in result.notes)


def test_an_implausible_figure_marks_the_point_and_says_why(tmp_path: Path) -> None:
    """Sample 01 with one figure as fio 2.1.11 once printed it (a mean latency of
    756,537,530 msec, 8.7 days, in a 60 s run): imported, marked, the rest untouched."""
    text = next(DATA.glob("01_*")).read_text()
    first = re.search(r"^     lat \(usec\): min=\S+ max=\S+ avg=([\d.]+),", text, re.MULTILINE)
    assert first is not None
    changed = (
        text[: first.start()]
        + re.sub(r"lat \(usec\)(.*?)avg=[\d.]+", r"lat (msec)\1avg=756537530.00", first.group(0))
        + text[first.end() :]
    )
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "edited.txt").write_text(changed)
    store = Store(tmp_path / "results")
    result = import_paths(store, [folder], run_name="odd")
    assert len(result.points) == 10 and not result.skipped
    marked = [n for n in result.notes if "implausible" in n]
    assert len(marked) == 1
    assert "mean latency 756,537,530 ms is longer than the runtime 60,00" in marked[0]
    findings = store.findings(result.run_id, "implausible")
    assert len(findings) == 1 and findings[0].point_id is not None


def test_pattern_groups_set_devices_scenario_and_labels(tmp_path: Path) -> None:
    """Dorado's archive names its files Test0N-Typerandread-BS8k-DeviceCount0N: the device
    count from the name makes a devices x parallelism grid, stored on each point."""
    folder = _copy(tmp_path, "28_", "29_")
    # sample 01 under its name in the archive (see MANIFEST.md)
    shutil.copy(next(DATA.glob("01_*")), folder / "Test01-Typerandread-BS8k-DeviceCount01.txt")
    store = Store(tmp_path / "results")
    pattern = r"(?P<label_test>Test\d+)-Type(?P<rw>\w+?)-BS(?P<bs>\d+k)-DeviceCount(?P<devices>\d+)"
    result = import_paths(store, [folder], run_name="grid", name_pattern=pattern)
    points = store.points(result.run_id)
    assert len(points) == 30 and not result.skipped
    grid = {(p.devices, p.workers) for p in points}
    # fio ran threads x devices jobs per group (1..10, 2..20, 3..30): keyed, as a campaign's
    # spread: per_target, by threads per device (issue 27: 10 columns, not 30 sparse ones)
    assert grid == {(d, t) for d in (1, 2, 3) for t in range(1, 11)}
    assert {p.workload for p in points} == {"randread-8k"}  # one workload, three device counts
    assert all(p.key.endswith(f"-d{p.devices}") for p in points)
    assert {p.labels["test"] for p in points} == {"Test01", "Test02", "Test03"}
    one = folder / "Test01-Typerandread-BS8k-DeviceCount01.txt"
    scenario = import_paths(store, [one], run_name="sc", name_pattern=r"(?P<scenario>Test\d+)")
    assert {p.scenario for p in store.points(scenario.run_id)} == {"Test01"}


def test_json_above_its_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    big = folder / "big.json"
    with big.open("wb") as handle:
        handle.write(b'{\n  "fio version" : "fio-3.33",\n' + b" " * 8192)
        handle.truncate(40 << 20)  # sparse beyond the first 8 KiB
    shutil.copy(next(DATA.glob("01_*")), folder)
    result = import_paths(Store(tmp_path / "results"), [folder], run_name="bigjson")
    (skipped,) = result.skipped
    limit = "40 MiB of JSON, larger than the 32 MiB limit for JSON (it is read whole)"
    assert skipped.reason == limit


def test_two_json_runs_of_one_job_are_two_points_and_sigusr1_dumps_one(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "fresh_fio3.33_json_two_invocations", "17_fioblog")
    result = import_paths(Store(tmp_path / "results"), [folder], run_name="json")
    notes = "\n".join(result.notes)
    # same jobs, same elapsed time: two runs (the cumulative reading would drop the first)
    assert "two_invocations_same_job.json: 2 separate fio runs in one file" in notes
    # elapsed 24 -> 44 -> 45 s, counts growing, clock moving with them: status dumps
    assert "sigusr1.json: run 1: kept the last of 3 status dumps" in notes
    assert len(result.points) == 3
