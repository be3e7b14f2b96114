"""SIGTERM, SIGHUP and SIGKILL at the moments that matter, on real arraybench and fio processes:
the run is marked interrupted, no fio survives, and a resume loses and repeats nothing."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from arraybench.cli import main
from arraybench.engines.fio import runner
from arraybench.errors import FioRunError
from tests.conftest import main_cli, needs_fio
from tests.hostile.procs import (
    fio_under,
    gone,
    point_count,
    runs,
    start_cli,
    stored_keys,
    wait_for,
)

pytestmark = needs_fio


def _plan(tmp_path: Path, *, size: str = "16m", duration: str = "2s") -> Path:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "name: sig\nscenario: test\n"
        f"targets:\n  - path: {tmp_path / 'target.dat'}\n    size: {size}\n"
        f"timing: {{ramp: 0s, duration: {duration}}}\n"
        "load:\n  workers: [1, 2]\n  iodepth: [2]\n"
        "workloads:\n  - {name: rand, pattern: random, bs: 4k, read: 50}\n"
    )
    return plan


def test_sigterm_mid_point_marks_interrupted_and_resume_completes(tmp_path, capsys):
    results = tmp_path / "res"
    proc = start_cli("run", str(_plan(tmp_path, duration="1s")), "--results", str(results))
    wait_for(lambda: point_count(results) >= 1, "the first point", proc)
    [run] = runs(results)
    # a second process on the same run, while the first lives, is refused in one line
    assert main(["run", "--resume", run["id"], "--results", str(results)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "being run by another arraybench process" in err[0], err
    wait_for(lambda: fio_under(results), "fio of the second point", proc)
    proc.send_signal(signal.SIGTERM)
    out, err_text = proc.communicate(timeout=60)
    assert proc.returncode == 143, err_text
    assert "Traceback" not in out + err_text
    assert f"--resume {run['id']} --results {results}" in err_text
    assert gone(tmp_path) == [], "fio outlived arraybench"
    [after] = runs(results)
    assert after["status"] == "interrupted" and after["points_done"] == 1

    resumed = main_cli("run", "--resume", run["id"], "--results", str(results))
    assert resumed.returncode == 0, resumed.stderr
    keys = stored_keys(results, run["id"])
    assert len(keys) == 2 and len(set(keys)) == 2  # as many as an uninterrupted run, no twice
    assert runs(results)[0]["status"] == "complete"


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_reverts_the_event_under_way(tmp_path, sig, code):
    """The event applied when the signal comes is reverted before arraybench exits (SIGTERM
    through the timeline's own handler first, SIGHUP through the CLI's alone)."""
    results, mark = tmp_path / "res", tmp_path / "reverted"
    plan = _plan(tmp_path, duration="20s")
    event = f"{{at: 0s, run: {{argv: [/bin/true], revert: [touch, {mark}]}}}}"
    plan.write_text(plan.read_text().replace("read: 50}", f"read: 50, events: [{event}]}}"))
    proc = start_cli("run", str(plan), "--results", str(results))
    wait_for(lambda: fio_under(results), "fio of the first point", proc)
    time.sleep(1.5)  # the event at 0s is applied (its argv ran) before the signal
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert mark.exists(), "the event was not reverted"
    assert len(err.strip().splitlines()) == 1 and signal.Signals(sig).name in err
    assert "Traceback" not in out + err and runs(results)[0]["status"] == "interrupted"
    assert gone(tmp_path) == []


def _layout_running(tmp_path: Path) -> list[int]:
    return [p for p in fio_under(tmp_path)
            if b"arraybench-layout" in Path(f"/proc/{p}/cmdline").read_bytes()]  # fmt: skip


def test_sigterm_between_points_is_143(tmp_path):
    """In the pause after a point (no fio running): the same line, code and run status."""
    results = tmp_path / "res"
    plan = _plan(tmp_path)
    plan.write_text(plan.read_text().replace("read: 50}", "read: 50, pause_after: 30s}"))
    proc = start_cli("run", str(plan), "--results", str(results))
    wait_for(lambda: point_count(results) >= 1, "the first point", proc)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "--resume" in err and "Traceback" not in out + err
    assert gone(tmp_path) == [] and runs(results)[0]["status"] == "interrupted"


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGKILL, -9)]
)
def test_a_signal_during_target_layout_leaves_no_fio(tmp_path, sig, code):
    results = tmp_path / "res"
    proc = start_cli("run", str(_plan(tmp_path, size="768m")), "--results", str(results))
    wait_for(lambda: _layout_running(tmp_path), "the layout fio", proc)
    proc.send_signal(sig)  # to arraybench alone: fio is in a session of its own
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    if sig != signal.SIGKILL:
        assert "before the run was created" in err and "Traceback" not in out + err
    assert gone(tmp_path) == [], "the layout fio outlived arraybench"


def test_sigkill_of_arraybench_takes_fio_with_it(tmp_path):
    """Nothing in arraybench runs after SIGKILL: fio ends by its parent-death signal."""
    results = tmp_path / "res"
    proc = start_cli("run", str(_plan(tmp_path, duration="20s")), "--results", str(results))
    wait_for(lambda: len(fio_under(results)) >= 2, "fio and its job", proc)
    proc.kill()
    proc.communicate(timeout=30)
    assert gone(tmp_path) == [], "fio kept running after arraybench was killed"


def test_sigkill_of_main_fio_leaves_no_job_process(tmp_path):
    folder = tmp_path / "point"
    folder.mkdir()
    job = folder / "point.fio"
    job.write_text(
        f"[global]\nfilename={tmp_path / 'f.dat'}\nsize=8m\ntime_based=1\nruntime=30\n"
        "rw=randread\n[a]\nnumjobs=2\n"
    )
    jobs: list[int] = []

    def kill_main(pid: int) -> None:
        def later() -> None:
            wait_for(lambda: len(fio_under(folder)) >= 3, "fio's job processes", None)
            jobs.extend(p for p in fio_under(folder) if p != pid)
            os.kill(pid, signal.SIGKILL)

        threading.Thread(target=later, daemon=True).start()

    with pytest.raises(FioRunError, match="code -9"):
        runner.run_jobfile(job, label="p", timeout_s=60, on_start=kill_main)
    assert len(jobs) == 2
    assert gone(folder, limit=5) == [], "fio's job processes outlived the killed main fio"


def test_terminal_closed_mid_point_is_sighup(tmp_path):
    """arraybench on a terminal (the live progress bar) whose terminal goes away: the kernel's
    SIGHUP, writes that fail from then on, and still exit 129, the run marked, no fio left."""
    results = tmp_path / "res"
    master, slave = pty.openpty()

    def own_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    argv = [sys.executable, "-m", "arraybench", "run", str(_plan(tmp_path, duration="3s")),
            "--results", str(results)]  # fmt: skip
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave,
                            preexec_fn=own_terminal)  # fmt: skip
    os.close(slave)
    stop = threading.Event()
    reader = threading.Thread(target=_drain, args=(master, stop), daemon=True)
    reader.start()
    wait_for(lambda: fio_under(results), "fio of the first point", proc)
    stop.set()
    reader.join()  # before the close: the number must not be read once it is reused
    os.close(master)  # the terminal hangs up
    assert proc.wait(timeout=60) == 129
    assert gone(tmp_path) == []
    assert runs(results)[0]["status"] == "interrupted"


def _drain(fd: int, stop: threading.Event) -> None:
    """Read the terminal's output (a full terminal would block arraybench) until told."""
    with contextlib.suppress(OSError):
        while not stop.is_set():
            if select.select([fd], [], [], 0.05)[0] and not os.read(fd, 65536):
                return
