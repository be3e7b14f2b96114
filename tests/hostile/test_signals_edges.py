"""Ctrl-C and SIGTERM at the edges of a run, on real arraybench processes: while Python still
imports the program (0.1, 0.25, 0.5 s after the start), and while the report is written
(held there by a FIFO as its output). Each ends with one line and the shell's code (130,
143), never a traceback or a death by the signal (-2)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import main_cli, small_plan
from tests.fake_engine import PLAN_LINES
from tests.hostile.procs import start_cli, start_fake_cli

SIGTERM_BIT = 1 << (signal.SIGTERM - 1)


def _handlers_in(pid: int) -> bool:
    """Whether the process catches SIGTERM (Python does not by default: arraybench's
    __main__ sets it together with SIGINT, first thing)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True  # gone: communicate() says how
    lines = status.splitlines()
    if any(line.startswith("State:") and "Z" in line.split()[1] for line in lines):
        return True  # ended, not yet reaped (a zombie catches nothing): communicate() says how
    caught = next(line for line in lines if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & SIGTERM_BIT)


def _signal_at(proc: subprocess.Popen[str], seconds: float, sig: int) -> tuple[int, list[str]]:
    """`sig` `seconds` after the start (later only when the interpreter itself has not yet
    reached arraybench's first line: a loaded machine starts Python slowly)."""
    start = time.monotonic()
    while time.monotonic() - start < seconds or not _handlers_in(proc.pid):
        time.sleep(0.005)
        assert time.monotonic() - start < 30, "arraybench never started"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert "Traceback" not in out + err and "KeyboardInterrupt" not in err, err
    return proc.returncode, err.strip().splitlines()


@pytest.mark.parametrize("seconds", [0.1, 0.25, 0.5])
def test_ctrl_c_while_starting_is_130_and_one_line(tmp_path: Path, seconds: float) -> None:
    plan = small_plan(tmp_path)
    proc = start_cli("run", str(plan), "--results", str(tmp_path / "res"))
    code, err = _signal_at(proc, seconds, signal.SIGINT)
    assert code == 130 and len(err) == 1 and err[0].startswith("error: interrupted"), err


def test_sigterm_while_starting_is_143_and_one_line(tmp_path: Path) -> None:
    # `run`, not `runs`: `runs` now starts and ends within 0.2 s, before any signal lands
    proc = start_cli("run", str(small_plan(tmp_path)), "--results", str(tmp_path / "res"))
    code, err = _signal_at(proc, 0.25, signal.SIGTERM)
    assert code == 143 and err == ["error: interrupted by SIGTERM"], err


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_the_report_is_written(tmp_path: Path, sig: int, code: int) -> None:
    """The run is the test engine's (`python -m tests.fake_engine`): the report is the
    subject, not fio."""
    plan = small_plan(tmp_path, workers="[1]", extra=PLAN_LINES,
                      workloads="  - {name: r, pattern: random, bs: 4k, read: 100}\n")  # fmt: skip
    results = tmp_path / "res"
    report = tmp_path / "report.html"  # its writer held a minute (a FIFO is refused up front)
    proc = start_fake_cli("run", str(plan), "--results", str(results), "-o", str(report),
                          hold_report=True)  # fmt: skip
    out = ""
    deadline = time.monotonic() + 60
    while "optimal" not in out and time.monotonic() < deadline:  # the summary, then the report
        line = proc.stdout.readline() if proc.stdout else ""
        assert line or proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        out += line
    time.sleep(0.5)
    got, err = _signal_at(proc, 0, sig)
    assert got == code and len(err) == 1, err
    assert "while the report was written" in err[0] and "is complete" in err[0]
    assert main_cli("runs", "--results", str(results)).stdout.count("complete") == 1
    # the report command itself, held the same way
    again = start_fake_cli("report", "latest", "--results", str(results), "-o", str(report),
                           hold_report=True)  # fmt: skip
    got, err = _signal_at(again, 1.0, sig)
    assert got == code and len(err) == 1 and err[0].startswith("error: interrupted"), err
