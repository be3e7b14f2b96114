"""mdtest as an `Engine` (engines/base.py) for the metadata test: `mpirun` starts mdtest's
tasks (here, or on the plan's hosts over mpirun's own ssh launcher), its standard output is
kept beside the point (`mdtest.txt`) and read into the store.

The job file (`point.mdtest`) is the command itself, one argument per line after `#`
comments: the run executes exactly those lines as an argv (no shell), and a person re-runs
it by hand with `xargs -d '\\n' -a <(grep -v '^#' point.mdtest)` or by copying the lines.
mdtest measures no grid point: `point_job` and `precondition_job` refuse (exit 2).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from arraybench.engines.base import Capabilities, EngineFacts, RunOutcome, RunSpec
from arraybench.engines.fio.runner import POLL_S, ExitWaiter, FioProcess
from arraybench.engines.mdtest import argv
from arraybench.engines.mdtest.results import summary_document
from arraybench.engines.mdtest.summary import MdtestSummary, failure_line, parse_mdtest
from arraybench.engines.measurement import EngineDocument
from arraybench.errors import FioMissingError, FioRunError, OutputParseError, PlanError
from arraybench.plan.expand import Point
from arraybench.plan.model import Plan, Precondition
from arraybench.records import Sample
from arraybench.system.procs import PROC, cwd_of, executable_name, numeric_dirs
from arraybench.system.signals import send_each

OUTPUT = "mdtest.txt"  # mdtest's standard output: the raw results, kept beside the point
STDERR = "mdtest.stderr"
STOP_WAIT_S = 5.0  # how long a stopped run's tasks are waited for (SIGKILLed again meanwhile)
_PROCESSES = ("mpirun", "orterun", "prterun", "orted", "prted", "mdtest")
_ONLY = "mdtest runs only the metadata test (`metadata:` with `engine: mdtest`)"


def find(name: str, hint: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise FioMissingError(f"{name} not found", hint)
    return found


def mpi_version(mpirun: str) -> str:
    """mpirun's first line (`mpirun (Open MPI) 4.1.4`); FioMissingError when it does not run."""
    try:
        done = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = f"cannot run {mpirun} --version: {exc}"
        raise FioMissingError(why, "install Open MPI (apt-get install openmpi-bin)") from None
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    return lines[0].strip() if lines else "mpirun (unknown version)"


def metadata_tool(engine: str, binary: str = "mdtest") -> str:
    """The metadata test's tool: `auto` is mdtest when mdtest and mpirun are both found."""
    if engine != "auto":
        return engine
    return "mdtest" if shutil.which(binary) and shutil.which("mpirun") else "fio"


def on_mdtest(engine: str, binary: str = "mdtest") -> bool:
    """The metadata test runs on mdtest (`metadata.engine` mdtest, or `auto` finding it): what
    `run/` asks, so that it never compares a tool's name itself."""
    return metadata_tool(engine, binary) == "mdtest"


class MdtestEngine:
    name = "mdtest"
    job_name = "point.mdtest"
    capabilities = Capabilities(grid=False)  # the metadata test's tool (`metadata.engine`)

    def __init__(self, binary: str = "mdtest", mpirun: str = "mpirun") -> None:
        self.binary, self.mpirun = binary, mpirun
        self._mpi: str | None = None

    def check(self) -> EngineFacts:
        """mdtest and mpirun found, and mpirun answering: the version stored is MPI's (mdtest
        has no --version; its own is in its output, `mdtest-4.0.0`, stored with the point)."""
        find(self.binary, "install IOR's mdtest (github.com/hpc/ior) on PATH, or give "
             "metadata.mdtest its path")  # fmt: skip
        mpirun = find(self.mpirun, "install Open MPI (apt-get install openmpi-bin)")
        if self._mpi is None:
            self._mpi = mpi_version(mpirun)
        return EngineFacts(self.name, f"mdtest with {self._mpi}")

    @property
    def open_mpi(self) -> bool:
        return "Open MPI" in (self._mpi or "") or "OpenRTE" in (self._mpi or "")

    def job(self, spec: argv.MdtestSpec) -> str:
        """The job file of one mdtest run: comments, then its argv one argument per line.
        mdtest and mpirun by their absolute paths: mpirun runs in the point's folder, where a
        relative path would name another file (the hosts need mdtest at that path too)."""
        self.check()
        spec = replace(spec, mdtest=os.path.abspath(find(spec.mdtest, "")),
                       mpirun=os.path.abspath(find(spec.mpirun, "")))  # fmt: skip
        args = argv.command(spec, self.open_mpi, os.geteuid() == 0)
        head = [f"# arraybench metadata test on mdtest: {spec.tasks} task(s) per node x "
                f"{spec.items} items each, {spec.iterations} iteration(s), "
                f"{spec.nodes} node(s); operations: {', '.join(spec.ordered_ops)}",
                "# the command, one argument per line (run without a shell):"]  # fmt: skip
        return "\n".join([*head, *args]) + "\n"

    def watchdog_seconds(self, expected_s: float) -> float:
        return expected_s * 3 + 60  # mpirun's start over ssh and a slow metadata server

    def point_job(self, point: Point, sizes: Mapping[str, int], title: str = "") -> str:
        raise PlanError(f"point {point.key}: {_ONLY}", "run the grid on fio (no `engine:`)")

    def precondition_job(self, plan: Plan, spec: Precondition, sizes: Mapping[str, int]) -> str:
        raise PlanError(f"precondition: {_ONLY}", "run preconditioning on fio (no `engine:`)")

    def run(self, job: Path, spec: RunSpec) -> RunOutcome:
        folder = job.parent
        command = [line for line in job.read_text().splitlines() if not line.startswith("#")]
        start = time.monotonic()
        with open(folder / OUTPUT, "wb") as out, open(folder / STDERR, "wb") as err:
            proc = FioProcess(command, folder, out, err)  # a session of its own, dies with us
            waiter = ExitWaiter(proc.pid)
            try:
                if spec.on_start:
                    spec.on_start(proc.pid)
                while proc.proc.poll() is None:
                    elapsed = time.monotonic() - start
                    if elapsed > spec.timeout_s:
                        self._stop(proc, folder)
                        raise FioRunError(f"point {spec.label}: mdtest ran {elapsed:.0f}s, past "
                                          f"its watchdog of {spec.timeout_s:.0f}s, and was "
                                          "stopped", f"raw output in {folder}")  # fmt: skip
                    if spec.on_tick:
                        spec.on_tick(elapsed)
                    waiter.wait(POLL_S)
            except BaseException:
                self._stop(proc, folder)
                raise
            finally:
                waiter.close()
        if proc.proc.returncode != 0:
            text = (folder / OUTPUT).read_text(errors="replace")
            text += (folder / STDERR).read_text(errors="replace")
            raise FioRunError(f"point {spec.label}: mpirun exited with code "
                              f"{proc.proc.returncode}: {failure_line(text)}",
                              f"the command and mdtest's output are in {folder}")  # fmt: skip
        return RunOutcome(time.monotonic() - start, folder)

    def _stop(self, proc: FioProcess, folder: Path) -> None:
        """mpirun's session stopped, then its tasks waited for: they are mpirun's children,
        killed with its group but still exiting for a moment after it (seen under load)."""
        proc.stop()
        deadline = time.monotonic() + STOP_WAIT_S
        while self.end_leftovers(folder) and time.monotonic() < deadline:
            time.sleep(0.05)

    def summary(self, folder: Path, label: str) -> MdtestSummary:
        """The run's one SUMMARY (one task count per run)."""
        try:
            with open(folder / OUTPUT, errors="replace") as lines:
                return parse_mdtest(lines, str(folder / OUTPUT))[-1]
        except (OutputParseError, OSError) as exc:
            why = exc.message if isinstance(exc, OutputParseError) else str(exc)
            raise FioRunError(f"point {label}: {why}", f"see {folder}") from None

    def results(self, outcome: RunOutcome, label: str) -> EngineDocument:
        return summary_document(self.summary(outcome.folder, label), outcome.elapsed_s)

    def samples(self, folder: Path) -> list[Sample]:
        return []  # mdtest prints no per-second figures

    def live_reader(self, folder: Path) -> None:
        return None  # nor live ones

    def check_path(self, path: str, where: str) -> None:
        argv.mdtest_arg(path, where, "@")

    def lay_out(self, path: Path, size: int, fd: int) -> str | None:
        return "mdtest lays out no target files (it runs only the metadata test)"

    def end_leftovers(self, folder: Path) -> list[int]:
        """SIGKILL mpirun and the mdtest tasks still working in `folder` (a killed run's)."""
        root = folder.resolve()
        found = []
        for pid in numeric_dirs(PROC):
            if pid == os.getpid() or (executable_name(pid) or "") not in _PROCESSES:
                continue
            cwd = cwd_of(pid)
            if cwd is not None and (cwd == root or root in cwd.parents):
                found.append(pid)
        return send_each(found, signal.SIGKILL)[0]
