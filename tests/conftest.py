"""Shared fixtures: small plans, a CLI runner, fio availability."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"

# A suite started in the background of a shell without job control inherits SIGINT and
# SIGQUIT ignored, and so would every arraybench and fio it starts (an ignored signal stays
# ignored through exec): the Ctrl-C tests would then test nothing. Python's own handler here
# makes every child start with the default again, however the suite was launched.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if signal.getsignal(signal.SIGQUIT) is signal.SIG_IGN:
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")

# A `serial` test judges CPU use or the noise between runs: it starts once the machine is
# quiet. Right after the paced phase, two identical CPU-bound runs of test_compare_noise came
# out 9 % apart (the first one slower and noisier): what the phase before left (network
# namespaces the kernel tears down in its own threads after their last process, workers
# exiting) still ran. Waited for at most SETTLE_S, then the test runs anyway.
QUIET_BUSY_PCT, SETTLE_S, SETTLE_STEP_S = 15.0, 15.0, 0.5


@pytest.fixture(autouse=True)
def _settled_before_a_serial_test(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("serial") is None:
        return
    from arraybench.monitor.cpu import CpuCounters, cpu_rates, parse_proc_stat

    def counters() -> CpuCounters:
        return parse_proc_stat(Path("/proc/stat").read_text())

    deadline = time.monotonic() + SETTLE_S
    before = counters()
    while time.monotonic() < deadline:
        time.sleep(SETTLE_STEP_S)
        after = counters()
        if cpu_rates(before, after).busy_pct < QUIET_BUSY_PCT:
            return
        before = after


# A current fio beside the distribution's: `../shared/tools/fio-3.42/fio` from the project's
# root (CI has the same layout). The core fio tests run on both (`each_fio`).
FIO_ENV = "ARRAYBENCH_FIO"  # engines.fio.choice.FIO_ENV
FIO_342 = Path(__file__).resolve().parents[1].parent / "shared" / "tools" / "fio-3.42" / "fio"
FIO_342_MISSING = (f"fio 3.42 is not at {FIO_342} (../shared/tools/fio-3.42/fio from the "
                   "project's root): the tests on a current fio are skipped")  # fmt: skip
needs_fio_342 = pytest.mark.skipif(not os.access(FIO_342, os.X_OK), reason=FIO_342_MISSING)


@pytest.fixture(params=["system-fio", "fio-3.42"])
def each_fio(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The test once on the system's fio (PATH) and once on fio 3.42 ($ARRAYBENCH_FIO, as
    `--fio` sets it: this process and every arraybench it starts): the binary's path."""
    if request.param == "system-fio":
        monkeypatch.delenv(FIO_ENV, raising=False)
        found = shutil.which("fio")
        if found is None:
            pytest.skip("fio is not installed")
        return found
    if not os.access(FIO_342, os.X_OK):
        pytest.skip(FIO_342_MISSING)
    monkeypatch.setenv(FIO_ENV, str(FIO_342))
    return str(FIO_342)


def small_plan(
    tmp_path: Path, *, workers: str = "[1, 2]", extra: str = "", workloads: str = ""
) -> Path:
    """A plan on a 32 MiB file in tmp_path, 1-second points without ramp."""
    workloads = workloads or (
        "  - {name: rand-8k-rw70, pattern: random, bs: 8k, read: 70}\n"
        "  - {name: seq-128k-read, pattern: sequential, bs: 128k, read: 100}\n"
    )
    text = (
        "name: small\n"
        "scenario: test\n"
        "labels: {purpose: tests}\n"
        f"targets:\n  - path: {tmp_path / 'target.dat'}\n    size: 32m\n"
        "timing: {ramp: 0s, duration: 1s}\n"
        f"load:\n  workers: {workers}\n  iodepth: [2]\n"
        f"{extra}"
        f"workloads:\n{workloads}"
    )
    path = tmp_path / "plan.yaml"
    path.write_text(text)
    return path


def run_cli(*args: str, timeout: float = 600, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="160")
    return subprocess.run(
        [sys.executable, "-m", "arraybench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


def main_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`arraybench ARGS` in this process (no 0.5 s of imports): run_cli's shape and width."""
    from arraybench import cli, console

    out, err = io.StringIO(), io.StringIO()
    widths = [(c, c._width) for c in (console.out, console.err)]  # restored below: setting fixes it
    try:
        for c, _ in widths:
            c.width = 160  # what run_cli's COLUMNS=160 gives both consoles
        with contextlib.chdir(cwd or Path.cwd()), redirect_stdout(out), redirect_stderr(err):
            try:
                code = cli.main(list(args))
            except SystemExit as exc:  # argparse's own mistakes and --help
                code = exc.code if isinstance(exc.code, int) else 2
    finally:
        for c, width in widths:
            c._width = width
    texts = [_universal_newlines(f.getvalue()) for f in (out, err)]
    return subprocess.CompletedProcess(["arraybench", *args], code, *texts)


def _universal_newlines(text: str) -> str:
    """As run_cli's text-mode pipes read it: CSV's CR LF (and a lone CR) become LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def fio_jobs(json_path: Path) -> list[dict]:
    """fio's own job entries from a point's raw output (the last JSON document)."""
    text = json_path.read_text()
    return json.loads(text[text.index("{") :])["jobs"]


@pytest.fixture
def fake_engine() -> Iterator[None]:
    """The test engine (tests/fake_engine.py) registered as `engine: fake` for one test."""
    from tests.fake_engine import registered

    with registered():
        yield


SHARED_SCOPES = ("module", "package", "class")  # fixtures built once for several tests


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (--dist loadgroup)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that uses a fixture built once per module (test hosts in namespaces, a campaign
    run for several assertions) runs on the same xdist worker as its module's other tests:
    two workers would build the fixture twice, at once, on the same names and ports."""
    _check_phase_marks(items)  # before -m deselects them: the parallel phase sees every test
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else []
        if any(d.scope in SHARED_SCOPES for chain in defs for d in chain):
            module = getattr(item, "module", None)
            item.add_marker(pytest.mark.xdist_group(module.__name__ if module else item.nodeid))


PHASE_MARKS = ("paced", "serial")  # scripts/test.sh runs these from the files that say them


def _check_phase_marks(items: list[pytest.Item]) -> None:
    """scripts/test.sh gives the paced and serial phases only the files that say
    `pytest.mark.paced` / `pytest.mark.serial`: a test marked from elsewhere (a mark list
    imported from another module) would run in no phase at all."""
    texts: dict[Path, str] = {}
    for item in items:
        for name in PHASE_MARKS:
            if item.get_closest_marker(name) is None:
                continue
            path = Path(str(item.path))
            text = texts.setdefault(path, path.read_text(encoding="utf-8"))
            if not re.search(rf"pytest\.mark\.{name}\b", text):
                said = f"pytest.mark.{name}: scripts/test.sh would skip it"
                raise pytest.UsageError(f"{item.nodeid} is {name}, its file never says {said}")


def pytest_collection_finish(session: pytest.Session) -> None:
    """On an xdist worker with --dist loadgroup, a grouped test's id carries its group: if not,
    the grouping silently does nothing (pytest-xdist 3.8 under pytest 9) and module fixtures
    would be built on two workers at once."""
    if not session.config.getoption("loadgroup", default=False):
        return
    lost = [i.nodeid for i in session.items
            if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]  # fmt: skip
    if lost:
        raise pytest.UsageError(f"--dist loadgroup did not group {lost[0]}: pytest and "
                                "pytest-xdist do not fit (see pyproject.toml)")  # fmt: skip
