"""A terminal that fits: at 100 and 80 columns no line is longer, no name is cut to `…`, and
`report` prints its summary once however many formats it writes. The run is the test
engine's (tests/fake_engine.py): the terminal's layout is the subject, not fio."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rich.cells import cell_len

from arraybench import console, console_text
from arraybench.cli import main
from arraybench.plan import catalog
from tests.conftest import main_cli, small_plan
from tests.fake_engine import PLAN_LINES, registered

pytestmark = pytest.mark.xdist_group("newcomer_terminal")  # one module run, one worker

NAMES = ("rand-8k-read", "rand-8k-rw70")


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., str]:
    """`arraybench ARGS` in-process on a terminal of `width` columns; its stdout."""

    def call(width: int, *args: str) -> str:
        monkeypatch.setattr(console.out, "width", width)  # what COLUMNS gives the console
        capsys.readouterr()
        assert main(list(args)) == 0
        return capsys.readouterr().out

    return call


def test_columns_sets_the_width_through_a_pipe() -> None:
    env = dict(os.environ, COLUMNS="80")
    done = subprocess.run([sys.executable, "-m", "arraybench", "templates"], capture_output=True,
                          text=True, timeout=60, env=env, check=True)  # fmt: skip
    assert max(cell_len(line) for line in done.stdout.splitlines()) <= 80


def _fits(text: str, width: int) -> None:
    long = [line for line in text.splitlines() if cell_len(line) > width]
    assert long == [], f"{len(long)} line(s) over {width} columns: {long[:2]}"
    assert "…" not in text  # wrapped or folded, never cut


@pytest.fixture(scope="module", autouse=True)
def _fake_engine() -> Iterator[None]:
    with registered():  # for the module's run and for show, compare and report of it
        yield


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run of two workloads whose names share their first 9 characters."""
    folder = tmp_path_factory.mktemp("terminal")
    workloads = "".join(
        f"  - {{name: {n}, pattern: random, bs: 8k, read: {100 if n.endswith('read') else 70}}}\n"
        for n in NAMES
    )
    plan = small_plan(folder, workers="[1, 16]", workloads=workloads, extra=PLAN_LINES)
    done = main_cli("run", str(plan), "--results", str(folder / "r"))
    assert done.returncode == 0, done.stderr
    return folder / "r"


@pytest.mark.parametrize("width", [100, 80])
def test_show_runs_compare_fit(
    results: Path, width: int, cli: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = cli(width, "show", "latest", "--results", str(results))
    _fits(shown, width)
    for key in (f"{n}/w{w}-qd2" for n in NAMES for w in (1, 16)):
        assert key in shown  # whole point names, on one line
    monkeypatch.setattr(console_text, "RICH_TABLE_MAX_ROWS", 1)  # a huge run: drawn directly
    direct = cli(width, "show", "latest", "--results", str(results))
    _fits(direct, width)
    assert all(f"{n}/w16-qd2" in direct for n in NAMES)
    _fits(cli(width, "runs", "--results", str(results)), width)
    compared = cli(width, "compare", "latest:before", "latest:after", "--results", str(results))
    _fits(compared, width)
    if width == 100:
        assert all(name in compared for name in NAMES)


@pytest.mark.parametrize("width", [100, 80])
def test_templates_fit(width: int, cli: Callable[..., str]) -> None:
    listed = cli(width, "templates")
    _fits(listed, width)
    starts = [line.split()[0] for line in listed.splitlines() if not line.startswith(" ")]
    assert starts == catalog.template_names()


def test_report_prints_its_summary_once(
    results: Path, tmp_path: Path, cli: Callable[..., str]
) -> None:
    outputs = [str(tmp_path / f"r.{ext}") for ext in ("md", "csv", "html")]
    printed = cli(100, "report", "latest", "--results", str(results),
                   *(a for o in outputs for a in ("-o", o)))  # fmt: skip
    assert printed.count("optimal @ latency") == 1
    assert all(Path(o).exists() for o in outputs)
