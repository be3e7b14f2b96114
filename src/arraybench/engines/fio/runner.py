"""Running fio: find it, check engines, run one job file under a watchdog."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arraybench.engines.fio.choice import fio_binary
from arraybench.engines.fio.jobfile import pin_filenames
from arraybench.engines.measurement import Measurement
from arraybench.errors import FioRunError
from arraybench.system.procs import (
    PROC,
    command_bytes,
    cwd_of,
    executable_name,
    numeric_dirs,
    process_tree_pids,
    start_ticks,
)
from arraybench.system.signals import send_each, signals_held

JSON_NAME = "fio.json"
STDERR_NAME = "fio.stderr"
POLL_S = 0.25


@dataclass(frozen=True)
class FioOutcome:
    returncode: int
    elapsed_s: float
    json_path: Path
    stderr: str


def fio_version(binary: str) -> str:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip() or out.stderr.strip() or "unknown"


def available_engines(binary: str) -> set[str]:
    out = subprocess.run([binary, "--enghelp"], capture_output=True, text=True, check=False)
    return _engines_of(out.stdout)


def _engines_of(enghelp: str) -> set[str]:
    return {line.strip() for line in enghelp.splitlines()[1:] if line.strip()}


@dataclass(frozen=True)
class FioFacts:
    version: str
    engines: set[str]


def fio_facts(binary: str) -> FioFacts:
    """fio's version and engines, the two fio starts side by side rather than one after the
    other (each is a process start: tens of milliseconds before a campaign's first point)."""

    def start(option: str) -> subprocess.Popen[str]:
        return subprocess.Popen([binary, option], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip

    with start("--version") as version, start("--enghelp") as enghelp:
        out, err = version.communicate()
        engines, _ = enghelp.communicate()
    return FioFacts(out.strip() or err.strip() or "unknown", _engines_of(engines))


def first_error_line(text: str) -> str:
    """The line of fio's stderr/stdout that says what went wrong."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if re.search(r"error|not loadable|fio: |No such|Permission|denied|invalid", line, re.I):
            return line
    return lines[-1] if lines else "no message"


PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)  # resolved before any fork: the child only calls it


def _die_with_arraybench(parent: int) -> Callable[[], None]:
    """In the forked child, before exec: fio gets SIGTERM (and stops its jobs) when the thread
    that started it dies, so even a SIGKILLed arraybench leaves no load running."""

    def arm() -> None:
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # arraybench died before the line above
            os.kill(os.getpid(), signal.SIGTERM)

    return arm


# a sidecar that ends the load early on purpose (a stuck I/O: run/openloop_watch.py) writes
# this file in the point's folder before it sends fio SIGINT: fio then reports what it
# measured and exits non-zero (128 on 3.33), which is the end asked for, not a failure
STOP_REQUESTED = "stop-requested"


def stop_requested(folder: Path) -> bool:
    return (folder / STOP_REQUESTED).exists()


class FioProcess:
    """One fio: in a session of its own, dying with arraybench, and ended with every job
    process it forked. fio's jobs call setsid() and outlive a SIGKILLed main fio, re-parented
    away; they are found by what they inherit from it (command line and working directory),
    started no earlier than it."""

    def __init__(
        self, command: Sequence[str], cwd: Path, stdout: Any, stderr: Any,
        pass_fds: Sequence[int] = (),
    ) -> None:  # fmt: skip
        self.argv = "\0".join(command).encode()
        self.cwd = cwd.resolve()
        self.started = 0  # until fio's start is read, `stop` takes any job with its argv
        proc: subprocess.Popen[bytes] | None = None
        try:
            with signals_held():  # a Ctrl-C in Popen's at-fork hooks would be lost: see there
                proc = subprocess.Popen(
                    list(command), cwd=cwd, stdin=subprocess.DEVNULL, stdout=stdout,
                    stderr=stderr, start_new_session=True,
                    preexec_fn=_die_with_arraybench(os.getpid()), pass_fds=tuple(pass_fds),
                )  # fmt: skip
                self.proc, self.pid = proc, proc.pid
                self.started = start_ticks(proc.pid) or 0
        except BaseException:
            if proc is not None:  # the signal came while fio started: it is ended first
                self.stop()
            raise

    def _jobs(self) -> list[int]:
        """fio's job processes still alive, whoever their parent is now."""
        found = []
        for pid in numeric_dirs(PROC):
            if pid == self.pid or command_bytes(pid) != self.argv or cwd_of(pid) != self.cwd:
                continue
            if (start_ticks(pid) or -1) >= self.started:
                found.append(pid)
        return found

    def reap_jobs(self) -> None:
        """After fio ended: SIGKILL what it left running (nothing, unless fio was killed)."""
        send_each(self._jobs(), signal.SIGKILL)

    def stop(self) -> None:
        """SIGINT first (fio stops its jobs and reports), then SIGKILL to its group, its jobs
        and all they forked."""
        for sig, wait_s in ((signal.SIGINT, 5.0), (signal.SIGKILL, 5.0)):
            tree = process_tree_pids(self.pid)
            try:
                os.killpg(self.pid, sig)
            except ProcessLookupError:
                break
            if sig == signal.SIGKILL:
                send_each(tree, sig)
            try:
                self.proc.wait(timeout=wait_s)
                break
            except subprocess.TimeoutExpired:
                continue
        self.reap_jobs()


def end_leftover_fio(folder: Path) -> list[int]:
    """SIGKILL every fio (main or job process) still working in `folder`, e.g. a run's folder
    when its arraybench was SIGKILLed: fio is sent SIGTERM then, but a fio hit during its
    start-up can hang in a futex forever (seen with fio 3.33), and its jobs run in sessions
    of their own. Only the caller holding the run's lock may call this. The pids ended."""
    root = folder.resolve()
    found = []
    for pid in numeric_dirs(PROC):
        if pid == os.getpid() or not (executable_name(pid) or "").startswith("fio"):
            continue
        cwd = cwd_of(pid)
        if cwd is not None and (cwd == root or root in cwd.parents):
            found.append(pid)
    return send_each(found, signal.SIGKILL)[0]


class ExitWaiter:
    """Sleeps until a process exits or a time passes, whichever comes first, so a polling loop
    goes on the moment fio ends instead of up to POLL_S later (a pidfd; a plain sleep where
    the kernel has none)."""

    def __init__(self, pid: int) -> None:
        self.fd: int | None = None
        with contextlib.suppress(AttributeError, OSError):
            self.fd = os.pidfd_open(pid)

    def wait(self, seconds: float) -> None:
        if self.fd is None:
            time.sleep(seconds)
        else:  # readable once the process has exited
            select.select([self.fd], [], [], seconds)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def run_captured(
    command: Sequence[str], cwd: Path, pass_fds: Sequence[int] = ()
) -> tuple[int, str]:
    """Run a short fio command to its end (target layout); its exit code and its output. An
    interrupt or a signal stops it and its jobs before going on. `pass_fds`: descriptors fio
    inherits (a target it opens as /dev/fd/N)."""
    with tempfile.TemporaryFile() as out:
        fio = FioProcess(command, cwd, out, subprocess.STDOUT, pass_fds)
        try:
            code = fio.proc.wait()
        except BaseException:
            fio.stop()
            raise
        fio.reap_jobs()
        out.seek(0)
        return code, out.read().decode(errors="replace")


def run_jobfile(
    jobfile: Path,
    *,
    label: str,
    timeout_s: float,
    on_tick: Callable[[float], None] | None = None,
    binary: str | None = None,
    on_start: Callable[[int], None] | None = None,
    pins: Mapping[str, int] | None = None,
    status_interval_s: int = 0,
) -> FioOutcome:
    """Run fio on `jobfile` in its folder; raise FioRunError naming `label` on any failure.

    `pins` (target path -> an open descriptor, ``TargetGuard.pinned``): fio runs a copy of
    the job file, ``<name>.pinned.fio``, that names those targets ``/dev/fd/N``, and inherits
    the descriptors; `jobfile` itself keeps the paths (it is the one to re-run by hand).
    With `status_interval_s` fio appends a report to its output that often (`fio/status.py`)."""
    binary = binary or fio_binary()
    folder = jobfile.parent
    json_path = folder / JSON_NAME
    if pins:
        pinned = jobfile.with_name(f"{jobfile.stem}.pinned{jobfile.suffix}")
        pinned.write_text(pin_filenames(jobfile.read_text(), pins))
        jobfile = pinned
    command = [
        binary,
        jobfile.name,
        "--output-format=json+",
        f"--output={JSON_NAME}",
        "--eta=never",
    ]
    if status_interval_s > 0:
        command.append(f"--status-interval={status_interval_s}")
    start = time.monotonic()
    with open(folder / STDERR_NAME, "wb") as err:
        fio = FioProcess(command, folder, subprocess.DEVNULL, err, list((pins or {}).values()))
        proc = fio.proc
        waiter = ExitWaiter(proc.pid)
        try:
            if on_start:
                on_start(proc.pid)
            while proc.poll() is None:
                elapsed = time.monotonic() - start
                if elapsed > timeout_s:
                    fio.stop()
                    raise FioRunError(
                        f"point {label}: fio ran {elapsed:.0f}s, past its watchdog of "
                        f"{timeout_s:.0f}s, and was stopped",
                        f"check the target; raw output in {folder}",
                    )
                if on_tick:
                    on_tick(elapsed)
                waiter.wait(POLL_S)
        except BaseException:
            fio.stop()
            raise
        finally:
            waiter.close()
        if proc.returncode != 0:  # fio ended normally only after its jobs: nothing to look for
            fio.reap_jobs()
    stderr = (folder / STDERR_NAME).read_text(errors="replace")
    elapsed = time.monotonic() - start
    if proc.returncode != 0 and not (stop_requested(folder) and json_path.exists()):
        detail = stderr + (json_path.read_text(errors="replace") if json_path.exists() else "")
        raise FioRunError(
            f"point {label}: fio exited with code {proc.returncode}: {first_error_line(detail)}",
            f"job file and fio's output are in {folder}",
        )
    return FioOutcome(proc.returncode, elapsed, json_path, stderr)


def check_job_errors(label: str, jobs: Sequence[Measurement], folder: Path) -> None:
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
