"""Running fio: find it, check engines, run one job file under a watchdog."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arraybench.errors import FioMissingError, FioRunError
from arraybench.events.procs import process_tree_pids
from arraybench.fio.results import FioJobResult

JSON_NAME = "fio.json"
STDERR_NAME = "fio.stderr"
POLL_S = 0.25


@dataclass(frozen=True)
class FioOutcome:
    returncode: int
    elapsed_s: float
    json_path: Path
    stderr: str


def fio_binary() -> str:
    path = shutil.which("fio")
    if path is None:
        raise FioMissingError(
            "fio is not installed (not found on PATH)",
            "install it: apt-get install fio (or ./scripts/install.sh)",
        )
    return path


def fio_version(binary: str) -> str:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip() or out.stderr.strip() or "unknown"


def available_engines(binary: str) -> set[str]:
    out = subprocess.run([binary, "--enghelp"], capture_output=True, text=True, check=False)
    return {line.strip() for line in out.stdout.splitlines()[1:] if line.strip()}


def first_error_line(text: str) -> str:
    """The line of fio's stderr/stdout that says what went wrong."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if re.search(r"error|not loadable|fio: |No such|Permission|denied|invalid", line, re.I):
            return line
    return lines[-1] if lines else "no message"


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End fio and every child it forked: SIGINT first (fio stops its jobs and reports), then
    SIGKILL to its process group and to its job processes, which fio 3.x moves into sessions
    of their own (setsid), out of the group's reach."""
    for sig, wait_s in ((signal.SIGINT, 5.0), (signal.SIGKILL, 5.0)):
        tree = process_tree_pids(proc.pid)
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        if sig == signal.SIGKILL:
            for pid in tree:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def run_jobfile(
    jobfile: Path,
    *,
    label: str,
    timeout_s: float,
    on_tick: Callable[[float], None] | None = None,
    binary: str | None = None,
    on_start: Callable[[int], None] | None = None,
) -> FioOutcome:
    """Run fio on `jobfile` in its folder; raise FioRunError naming `label` on any failure."""
    binary = binary or fio_binary()
    folder = jobfile.parent
    json_path = folder / JSON_NAME
    command = [
        binary,
        jobfile.name,
        "--output-format=json+",
        f"--output={JSON_NAME}",
        "--eta=never",
    ]
    start = time.monotonic()
    with open(folder / STDERR_NAME, "wb") as err:
        proc = subprocess.Popen(
            command, cwd=folder, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True
        )
        try:
            if on_start:
                on_start(proc.pid)
            while proc.poll() is None:
                elapsed = time.monotonic() - start
                if elapsed > timeout_s:
                    _stop(proc)
                    raise FioRunError(
                        f"point {label}: fio ran {elapsed:.0f}s, past its watchdog of "
                        f"{timeout_s:.0f}s, and was stopped",
                        f"check the target; raw output in {folder}",
                    )
                if on_tick:
                    on_tick(elapsed)
                time.sleep(POLL_S)
        except BaseException:
            _stop(proc)
            raise
    stderr = (folder / STDERR_NAME).read_text(errors="replace")
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        detail = stderr + (json_path.read_text(errors="replace") if json_path.exists() else "")
        raise FioRunError(
            f"point {label}: fio exited with code {proc.returncode}: {first_error_line(detail)}",
            f"job file and fio's output are in {folder}",
        )
    return FioOutcome(proc.returncode, elapsed, json_path, stderr)


def check_job_errors(label: str, jobs: Sequence[FioJobResult], folder: Path) -> None:
    """fio can exit 0 with a job that failed (it reports `error` per job): refuse that point."""
    failed = [j for j in jobs if j.error]
    if failed:
        raise FioRunError(
            f"point {label}: fio job {failed[0].name} ended with error {failed[0].error}",
            f"see {folder / STDERR_NAME}",
        )


def watchdog_seconds(expected_s: float) -> float:
    """Generous: fio may lay out files or wait on a slow device before its clock starts."""
    return expected_s * 3 + 60
