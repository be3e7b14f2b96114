"""fio under arraybench's runner: the watchdog and error reporting, with real fio."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from arraybench.engines.fio import runner
from arraybench.errors import FioRunError
from tests.conftest import needs_fio

pytestmark = needs_fio

LONG_JOB = """\
[long]
ioengine=null
rw=randread
bs=4k
size=1g
time_based=1
runtime=60
"""


def test_watchdog_stops_a_fio_that_runs_past_its_time(tmp_path: Path):
    jobfile = tmp_path / "point.fio"
    jobfile.write_text(LONG_JOB)
    began = time.monotonic()
    with pytest.raises(FioRunError) as info:
        runner.run_jobfile(jobfile, label="wd/w1-qd1", timeout_s=1.0)
    assert time.monotonic() - began < 20
    assert "point wd/w1-qd1" in info.value.message and "watchdog" in info.value.message
    left = subprocess.run(["pgrep", "-f", str(jobfile.name) + " --output-format"],
                          capture_output=True, text=True)  # fmt: skip
    assert str(tmp_path) not in left.stdout
    assert not any(
        str(tmp_path) in Path(f"/proc/{pid}/cwd").resolve().as_posix()
        for pid in left.stdout.split()
        if Path(f"/proc/{pid}").exists()
    )


def test_ticks_and_outcome_of_a_short_run(tmp_path: Path):
    jobfile = tmp_path / "point.fio"
    jobfile.write_text(LONG_JOB.replace("runtime=60", "runtime=1"))
    ticks: list[float] = []
    outcome = runner.run_jobfile(jobfile, label="ok", timeout_s=30, on_tick=ticks.append)
    assert outcome.returncode == 0 and outcome.json_path.exists()
    assert ticks and ticks == sorted(ticks) and 0.5 < outcome.elapsed_s < 30


def test_first_error_line_picks_the_cause():
    text = "starting\nfio: io_u error on file /x: Invalid argument: read offset=0\nmore\n"
    assert runner.first_error_line(text).startswith("fio: io_u error")
    assert runner.first_error_line("") == "no message"


def test_engine_list_and_version():
    fio = runner.fio_binary()
    assert {"libaio", "psync", "null"} <= runner.available_engines(fio)
    assert runner.fio_version(fio).startswith("fio-")


def _fio_in(folder: Path) -> list[int]:
    """fio processes (main and jobs) working in `folder`."""
    found = []
    for name in (n for n in Path("/proc").iterdir() if n.name.isdigit()):
        try:
            if Path((name / "exe").readlink()).name.startswith("fio") and (
                (name / "cwd").readlink() == folder.resolve()
            ):
                found.append(int(name.name))
        except OSError:
            continue
    return found


def _detached_fio(folder: Path) -> subprocess.Popen[bytes]:
    """A fio left running in `folder` as a SIGKILLed arraybench leaves it: its own session,
    two job processes, time-based for a minute."""
    folder.mkdir()
    (folder / "point.fio").write_text(
        "[global]\nioengine=null\nsize=1m\ntime_based=1\nruntime=60\n[a]\nnumjobs=2\n"
    )
    return subprocess.Popen(["fio", "point.fio"], cwd=folder, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip


@needs_fio
def test_leftover_fio_of_a_run_folder_is_ended_and_no_other(tmp_path: Path):
    mine, other = tmp_path / "run-a", tmp_path / "run-b"
    procs = [_detached_fio(mine), _detached_fio(other)]
    try:
        deadline = time.monotonic() + 20
        while len(_fio_in(mine)) < 3 or len(_fio_in(other)) < 3:  # main + 2 jobs each
            assert time.monotonic() < deadline, "fio did not start its jobs"
            time.sleep(0.1)
        ended = runner.end_leftover_fio(mine)
        assert len(ended) == 3
        procs[0].wait(timeout=10)
        deadline = time.monotonic() + 10
        while _fio_in(mine):
            assert time.monotonic() < deadline, f"fio still in {mine}: {_fio_in(mine)}"
            time.sleep(0.1)
        assert len(_fio_in(other)) == 3  # another run's fio is not touched
    finally:
        runner.end_leftover_fio(mine)
        runner.end_leftover_fio(other)
        for proc in procs:
            proc.wait(timeout=10)


def test_the_exit_waiter_wakes_when_the_process_ends_not_at_its_timeout():
    proc = subprocess.Popen(["sleep", "0.2"])
    waiter = runner.ExitWaiter(proc.pid)
    began = time.monotonic()
    try:
        waiter.wait(60)  # a plain sleep would take the whole minute
    finally:
        waiter.close()
    assert time.monotonic() - began < 30
    assert proc.wait(timeout=5) == 0


def test_fio_facts_are_the_version_and_the_engines():
    fio = runner.fio_binary()
    facts = runner.fio_facts(fio)
    assert facts.version == runner.fio_version(fio) and facts.version.startswith("fio-")
    assert facts.engines == runner.available_engines(fio) and "libaio" in facts.engines
