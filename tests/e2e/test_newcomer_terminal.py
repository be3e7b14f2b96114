"""A terminal that fits: at 100 and 80 columns no line is longer, no name is cut to `…`, and
`report` prints its summary once however many formats it writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from arraybench.plan import catalog
from tests.conftest import needs_fio, small_plan

NAMES = ("rand-8k-read", "rand-8k-rw70")


def _cli(width: int, *args: str) -> str:
    env = dict(os.environ, COLUMNS=str(width))
    done = subprocess.run([sys.executable, "-m", "arraybench", *args], capture_output=True,
                          text=True, timeout=120, env=env, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def _fits(text: str, width: int) -> None:
    long = [line for line in text.splitlines() if cell_len(line) > width]
    assert long == [], f"{len(long)} line(s) over {width} columns: {long[:2]}"
    assert "…" not in text  # wrapped or folded, never cut


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run of two workloads whose names share their first 9 characters."""
    folder = tmp_path_factory.mktemp("terminal")
    workloads = "".join(
        f"  - {{name: {n}, pattern: random, bs: 8k, read: {100 if n.endswith('read') else 70}}}\n"
        for n in NAMES
    )
    plan = small_plan(folder, workers="[1, 16]", workloads=workloads)
    subprocess.run([sys.executable, "-m", "arraybench", "run", str(plan), "--results",
                    str(folder / "r")], capture_output=True, check=True, timeout=300)  # fmt: skip
    return folder / "r"


@needs_fio
@pytest.mark.parametrize("width", [100, 80])
def test_show_runs_compare_fit(results: Path, width: int) -> None:
    shown = _cli(width, "show", "latest", "--results", str(results))
    _fits(shown, width)
    for key in (f"{n}/w{w}-qd2" for n in NAMES for w in (1, 16)):
        assert key in shown  # whole point names, on one line
    _fits(_cli(width, "runs", "--results", str(results)), width)
    compared = _cli(width, "compare", "latest:before", "latest:after", "--results", str(results))
    _fits(compared, width)
    if width == 100:
        assert all(name in compared for name in NAMES)


@pytest.mark.parametrize("width", [100, 80])
def test_templates_fit(width: int) -> None:
    listed = _cli(width, "templates")
    _fits(listed, width)
    starts = [line.split()[0] for line in listed.splitlines() if not line.startswith(" ")]
    assert starts == catalog.template_names()


@needs_fio
def test_report_prints_its_summary_once(results: Path, tmp_path: Path) -> None:
    outputs = [str(tmp_path / f"r.{ext}") for ext in ("md", "csv", "html")]
    printed = _cli(100, "report", "latest", "--results", str(results),
                   *(a for o in outputs for a in ("-o", o)))  # fmt: skip
    assert printed.count("optimal @ latency") == 1
    assert all(Path(o).exists() for o in outputs)
