"""fio under arraybench's runner: the watchdog and error reporting, with real fio."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from arraybench.errors import FioRunError
from arraybench.fio import runner
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
