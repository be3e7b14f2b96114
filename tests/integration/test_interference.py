"""Interference (dbi services mixed workload) test: job file, step table, verdict, real fio.

The real run: a 64 MiB file, base 2000 IOPS of 8 KiB random 50/50 over 2 jobs, 2 background
steps of 50 IOPS x 1 MiB sequential read every 3 s, base stop at 9 s, background alone to
14 s. fio starts every section at once; only startdelay staggers the steps.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from arraybench.analysis.interference import (
    StepRow,
    chart_data,
    read_base_histograms,
    read_interference_logs,
    run_start_second,
    step_table,
    verdict,
    window_seconds,
)
from arraybench.engines.fio.interference import (
    JOBFILE_NAME,
    InterferenceSpec,
    base_job_rates,
    effective_base_rate,
    render_interference_jobfile,
    step_windows,
    total_seconds,
)
from arraybench.engines.fio.logs import parse_interval_log
from arraybench.engines.fio.parse import last_document, parse_fio_json_file
from arraybench.engines.measurement import EngineDocument
from arraybench.report.charts.timechart import ChartEvent, TimeSeries, time_chart
from tests.conftest import needs_fio

MIB = 1 << 20


def _sections(text: str) -> dict[str, list[str]]:
    """Section name -> its option lines (comments dropped)."""
    sections: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("["):
            current = line.strip("[]")
            sections[current] = []
        elif line and not line.startswith(";") and current:
            sections[current].append(line)
    return sections


# --------------------------------------------------------------------------- job file


def test_step_windows_and_total_with_defaults():
    spec = InterferenceSpec(targets=["/dev/x"])
    assert spec.base_stop == 360 and spec.tail == 60 and total_seconds(spec) == 420
    windows = step_windows(spec)
    assert windows[0] == ("base alone", 0.0, 60.0)
    assert windows[1] == ("base + 1 x 1 MiB", 60.0, 120.0)
    assert windows[5] == ("base + 5 x 1 MiB", 300.0, 360.0)
    assert windows[-1] == ("background alone", 360.0, 420.0)
    assert len(windows) == 7


def test_step_windows_with_explicit_stop_and_no_tail():
    spec = InterferenceSpec(targets=["/f"], steps=2, interval_s=10, base_stop_s=25, tail_s=0)
    assert step_windows(spec) == [
        ("base alone", 0.0, 10.0),
        ("base + 1 x 1 MiB", 10.0, 20.0),
        ("base + 2 x 1 MiB", 20.0, 25.0),
    ]
    assert total_seconds(spec) == 25


def test_render_splits_the_base_rate_per_job_and_direction():
    spec = InterferenceSpec(targets=["/dev/a", "/dev/b"])
    text = render_interference_jobfile(spec, 10 << 30)
    sections = _sections(text)
    assert list(sections) == ["global", "base", "bg1", "bg2", "bg3", "bg4", "bg5"]
    base = sections["base"]
    assert "rate_iops=5000,5000" in base and "numjobs=4" in base
    assert "runtime=360" in base and "refill_buffers=1" in base
    assert "filename=/dev/a:/dev/b" in sections["global"]
    assert "group_reporting=0" in sections["global"] and "time_based=1" in sections["global"]
    options = [line.split("=")[0] for lines in sections.values() for line in lines]
    assert "stonewall" not in options and "new_group" not in options
    for k in range(1, 6):
        bg = sections[f"bg{k}"]
        assert f"startdelay={60 * k}" in bg and f"runtime={420 - 60 * k}" in bg
        assert "rate_iops=1000" in bg and "rw=read" in bg and f"write_bw_log=bg{k}" in bg
        assert "refill_buffers=1" not in bg
    assert "offset=2g" in sections["bg2"] and "size=4g" in sections["bg2"]
    assert f"fio {JOBFILE_NAME} --output-format=json+" in text


def test_rate_split_for_other_mixes():
    mixed = InterferenceSpec(targets=["/f"], base_read_pct=70, base_rate_iops=40000)
    assert base_job_rates(mixed) == (7000, 3000)
    reads = InterferenceSpec(targets=["/f"], base_read_pct=100, base_rate_iops=45000, base_jobs=4)
    assert base_job_rates(reads) == (11250, 0)
    assert "rate_iops=11250\n" in render_interference_jobfile(reads, None)
    odd = InterferenceSpec(targets=["/f"], base_rate_iops=50000, base_jobs=3)
    assert effective_base_rate(odd) == 50001  # 16667 per job, 8334 + 8333
    bg_write = InterferenceSpec(targets=["/f"], bg_read_pct=0, steps=4)
    bg = _sections(render_interference_jobfile(bg_write, None))["bg3"]
    assert "rw=write" in bg and "refill_buffers=1" in bg
    assert "offset=50%" in bg and "size=25%" in bg


@pytest.mark.parametrize(
    "kwargs",
    [
        {"targets": []},
        {"base_read_pct": 101},
        {"steps": 0},
        {"interval_s": 0},
        {"steps": 2, "interval_s": 10, "base_stop_s": 20},  # last step never meets the base
        {"base_rate_iops": 1, "base_jobs": 4},  # < 1 IOPS per job
    ],
)
def test_invalid_specs_are_refused(kwargs: dict):
    with pytest.raises(ValueError):
        InterferenceSpec(**{"targets": ["/f"], **kwargs})


# --------------------------------------------------------------------------- analysis


def _row(streams: int, lat_change: float | None, iops_change: float = 0.0) -> StepRow:
    kind = "base" if streams == 0 else "step"
    return StepRow(
        label=f"s{streams}",
        kind=kind,
        streams=streams,
        start_s=60.0 * streams,
        end_s=60.0 * streams + 60,
        base_iops=40000,
        base_lat_mean_us=500,
        bg_mbps=1048.576 * streams,
        base_iops_change_pct=iops_change,
        base_lat_change_pct=lat_change,
    )


def test_verdict_counts_the_steps_before_latency_rises_too_much():
    rows = [_row(0, 0.0), _row(1, 3.0), _row(2, 12.0), _row(3, 25.0), _row(4, 10.0)]
    assert verdict(rows) == 2  # step 3 breaks the 20 % limit; step 4 no longer counts
    assert verdict(rows, max_latency_increase_pct=30.0) == 4
    assert verdict(rows, max_latency_increase_pct=1.0) == 0
    assert verdict([_row(0, 0.0), _row(1, None)]) == 0
    dropping = [_row(0, 0.0), _row(1, 1.0, -2.0), _row(2, 2.0, -15.0)]
    assert verdict(dropping) == 2 and verdict(dropping, max_iops_drop_pct=10.0) == 1


def test_step_table_on_synthetic_seconds():
    spec = InterferenceSpec(targets=["/f"], steps=1, interval_s=4, tail_s=4)
    t0 = 1000  # windows [0,4) [4,8) [8,12): samples t0+1..t0+12, transitions dropped
    assert window_seconds(t0, 4.0, 8.0) == [1006, 1007]
    iops = {t0 + s: 100.0 for s in range(1, 9)} | {t0 + 6: 80.0}
    lat = {t0 + s: 200.0 for s in range(1, 9)} | {t0 + 6: 300.0, t0 + 7: 250.0}
    bg = {t0 + s: 50.0 for s in range(5, 13)}
    hist = {t0 + 2: {100_000: 99, 900_000: 1}, t0 + 3: {100_000: 100}}
    rows = step_table(spec, iops, lat, bg, t0, base_hist=hist)
    assert [r.kind for r in rows] == ["base", "step", "background"]
    assert rows[0].base_iops == 100 and rows[0].bg_mbps == 0 and rows[0].base_p99_us == 100
    assert rows[1].base_iops == 90 and rows[1].bg_mbps == 50
    assert rows[1].base_lat_mean_us == pytest.approx((300 * 80 + 250 * 100) / 180)
    assert rows[1].base_iops_change_pct == pytest.approx(-10)
    assert rows[2].base_iops == 0 and rows[2].base_lat_mean_us is None
    assert rows[2].base_lat_change_pct is None and rows[2].base_p99_us is None


# --------------------------------------------------------------------------- real fio


@dataclass(frozen=True)
class Run:
    folder: Path
    spec: InterferenceSpec
    returncode: int
    wall_s: float
    doc: EngineDocument


@pytest.fixture(scope="module")
def fio_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp("interference")
    target = folder / "target.dat"
    subprocess.run(
        ["dd", "if=/dev/zero", f"of={target}", "bs=1M", "count=64", "oflag=direct", "status=none"],
        check=True,
    )
    spec = InterferenceSpec(
        targets=[str(target)],
        base_rate_iops=2000,
        base_jobs=2,
        bg_rate_iops_per_step=50,
        bg_bs=MIB,
        steps=2,
        interval_s=3,
        base_stop_s=9,
        # 5 s alone: 3 whole seconds once the two transitions are dropped. With 3 s the row
        # was one second, and a step's 1-s log sample landing in the second beside it (its
        # windows start at the step's own start) halved it once: 52 MB/s for 105
        tail_s=5,
    )
    (folder / JOBFILE_NAME).write_text(render_interference_jobfile(spec, 64 * MIB))
    began = time.monotonic()
    proc = subprocess.run(
        ["fio", JOBFILE_NAME, "--output-format=json+", "--output=fio.json"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    wall = time.monotonic() - began
    assert proc.returncode == 0, proc.stderr
    doc = last_document(parse_fio_json_file(folder / "fio.json"))
    return Run(folder, spec, proc.returncode, wall, doc)


def _first_log_ms(folder: Path, prefix: str) -> int:
    return min(
        s.time_ms for p in folder.glob(f"{prefix}_iops.*.log") for s in parse_interval_log(p)
    )


@needs_fio
@pytest.mark.slow
@pytest.mark.paced  # rates within 10 %: one shared run
def test_fio_runs_every_section_at_once(fio_run: Run):
    jobs = fio_run.doc.jobs
    assert [j.name for j in jobs] == ["base", "base", "bg1", "bg2"]
    assert all(j.error == 0 and j.groupid == 0 for j in jobs)
    # 9 + 9 + 11 + 8 s of job runtime in ~14 s of wall time: concurrent, not one after another
    assert 13.5 < fio_run.wall_s < 18
    runtimes = {j.name: (j.job_runtime_ms or 0) / 1000 for j in jobs}
    assert runtimes == pytest.approx({"base": 9, "bg1": 11, "bg2": 8}, abs=0.1)
    base_start = _first_log_ms(fio_run.folder, "base")
    for k in (1, 2):  # each step's first sample comes k x interval after the base's first
        offset_s = (_first_log_ms(fio_run.folder, f"bg{k}") - base_start) / 1000
        assert offset_s == pytest.approx(3 * k, abs=0.5)


@needs_fio
@pytest.mark.slow
@pytest.mark.paced  # rates within 10 %: one shared run
def test_base_load_holds_its_rate(fio_run: Run):
    base = [j for j in fio_run.doc.jobs if j.name == "base"]
    total = sum(j.read.iops + j.write.iops for j in base)
    assert total == pytest.approx(2000, rel=0.10)
    reads = sum(j.read.iops for j in base)
    assert reads == pytest.approx(1000, rel=0.10)  # rate_iops=500,500 per job


@needs_fio
@pytest.mark.slow
@pytest.mark.paced  # rates within 10 %: one shared run
def test_step_table_from_the_logs(fio_run: Run):
    base_iops, base_lat, bg_mbps = read_interference_logs(fio_run.folder)
    t0 = run_start_second(base_iops)
    hist = read_base_histograms(fio_run.folder)
    rows = step_table(fio_run.spec, base_iops, base_lat, bg_mbps, t0, base_hist=hist)
    labels = [r.label for r in rows]
    assert labels == ["base alone", "base + 1 x 1 MiB", "base + 2 x 1 MiB", "background alone"]
    step_mbps = 50 * MIB / 1e6  # 50 IOPS x 1 MiB per step, in MB/s
    assert rows[0].bg_mbps == 0
    for k in (1, 2):
        assert rows[k].bg_mbps == pytest.approx(k * step_mbps, rel=0.25)
    assert rows[3].bg_mbps == pytest.approx(2 * step_mbps, rel=0.25)
    assert rows[0].base_iops == pytest.approx(2000, rel=0.10)
    assert rows[0].base_lat_mean_us and rows[0].base_p99_us
    assert rows[0].base_p99_us >= rows[0].base_lat_mean_us * 0.5
    assert rows[3].base_iops < 20 and rows[3].base_lat_mean_us is None
    assert 0 <= verdict(rows) <= 2


@needs_fio
@pytest.mark.slow
@pytest.mark.paced  # rates within 10 %: one shared run
def test_chart_of_the_run(fio_run: Run):
    base_iops, base_lat, bg_mbps = read_interference_logs(fio_run.folder)
    data = chart_data(fio_run.spec, base_iops, base_lat, bg_mbps, run_start_second(base_iops))
    # the first logged second is the first or (a job that started a few ms early) the 0th
    assert data.t_s[0] in (0, 1) and data.events[-1] == (9, "base stopped")
    svg = time_chart(
        "Base load beside background steps",
        data.t_s,
        [TimeSeries("base IOPS", data.base_iops, "IOPS"), TimeSeries("bg", data.bg_mbps, "MB/s")],
        right=[TimeSeries("base latency", data.base_lat_us, "µs")],
        events=[ChartEvent(t, label) for t, label in data.events],
    )
    assert svg.startswith("<svg") and "base stopped" in svg and "2 x 1 MiB" in svg


@needs_fio
@pytest.mark.slow
@pytest.mark.paced  # one shared run
def test_the_large_io_has_its_own_latency_and_is_drawn_alone(fio_run: Run):
    """dbi's key observations: the large I/O's own latency beside the base load and in the
    "background alone" phase, and its MB/s over the whole test (issue 27)."""
    from arraybench.analysis.interference import read_background_iops, read_background_latency
    from arraybench.plan.model import InterferenceTest
    from arraybench.report.sections.special import background_timeline, interference_report
    from arraybench.run.kinds.interference import interference_findings

    bg_lat = read_background_latency(fio_run.folder)
    base_iops, base_lat, bg_mbps = read_interference_logs(fio_run.folder)
    t0 = run_start_second(base_iops)
    rows = step_table(fio_run.spec, base_iops, base_lat, bg_mbps, t0,
                      bg=(bg_lat, read_background_iops(fio_run.folder)))  # fmt: skip
    assert rows[0].bg_lat_mean_us is None  # base alone: no large I/O
    for row in rows[1:]:  # beside the base load, and alone
        assert row.bg_lat_mean_us is not None and row.bg_lat_mean_us > 0
    bg = [j for j in fio_run.doc.jobs if j.name.startswith("bg")]
    fio_mean = sum(j.read.lat_mean_ns * j.read.ios for j in bg) / sum(j.read.ios for j in bg)
    whole = sum(v * w for v, w in ((bg_lat[s], 1) for s in bg_lat)) / len(bg_lat)
    assert whole == pytest.approx(fio_mean / 1000, rel=0.5)  # the logs agree with fio.json
    test = InterferenceTest(base_rate_iops=2000, bg_rate_iops=50, steps=2, interval=3)
    data = interference_findings(fio_run.spec, test, fio_run.folder)
    table, _ = interference_report(data)
    assert table.columns[-1] == "background mean latency"
    assert table.rows[-1][0] == "background alone" and table.rows[-1][-1].endswith("µs")
    (line,) = background_timeline(data)
    assert line.throughput_unit == "MB/s" and max(v or 0 for v in line.throughput) > 50
    assert any(v for v in line.lat_mean_us) and ("base stopped" in [e[1] for e in line.events])
