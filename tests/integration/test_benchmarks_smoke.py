"""Every script in benchmarks/ runs: its `--smoke` mode (seconds, real fio on small files) as a
child process, so that a change under a script breaks the suite, not the next measurement
months later. A new script without `--smoke` fails here too (argparse: exit 2)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import needs_fio

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py"))
SMOKE_BUDGET_S = 60.0  # each script's smoke on the loaded 2-vCPU machine took 0.3-13 s


def test_every_script_is_smoked():
    """The list below is the glob of benchmarks/: nothing escapes by being new."""
    assert len(SCRIPTS) >= 7
    for name in SCRIPTS:
        text = (BENCHMARKS / name).read_text()
        assert '"--smoke"' in text, f"benchmarks/{name} has no --smoke mode"


@needs_fio
@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_smoke(script: str, tmp_path: Path) -> None:
    began = time.monotonic()
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), "--smoke"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=SMOKE_BUDGET_S * 3,
                          check=False)  # fmt: skip
    took = time.monotonic() - began
    assert done.returncode == 0, f"{script} --smoke: exit {done.returncode}\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"{script} --smoke printed nothing"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert took < SMOKE_BUDGET_S, f"{script} --smoke took {took:.1f} s"
