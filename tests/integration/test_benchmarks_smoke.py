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
FILES = sorted(BENCHMARKS.glob("*.py"))
# a script runs as __main__; the rest are helpers the scripts import (adaptive_sim.py)
SCRIPTS = [p.name for p in FILES if 'if __name__ == "__main__":' in p.read_text()]
HELPERS = [p.stem for p in FILES if p.name not in SCRIPTS]
# a script's other modes worth a smoke of their own (start_spread's default needs root and `ip`;
# --loopback is what runs on a machine without network namespaces)
EXTRA = [("start_spread.py", "--loopback")]
SMOKE_BUDGET_S = 60.0  # each script's smoke on the loaded 2-vCPU machine took 0.3-13 s


def test_every_script_is_smoked():
    """SCRIPTS is the glob of benchmarks/: nothing escapes by being new; a helper (no
    __main__) is run through a script that imports it."""
    assert len(SCRIPTS) >= 9
    for name in SCRIPTS:
        text = (BENCHMARKS / name).read_text()
        assert '"--smoke"' in text, f"benchmarks/{name} has no --smoke mode"
    scripts = "".join((BENCHMARKS / name).read_text() for name in SCRIPTS)
    for helper in HELPERS:
        assert f"import {helper}" in scripts or f"from {helper} import" in scripts, (
            f"benchmarks/{helper}.py is neither a script (no __main__) nor imported by one"
        )


@needs_fio
@pytest.mark.slow
@pytest.mark.parametrize(("script", "mode"), [(s, "") for s in SCRIPTS] + EXTRA)
def test_smoke(script: str, mode: str, tmp_path: Path) -> None:
    began = time.monotonic()
    extra = [mode] if mode else []
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), "--smoke", *extra],
                          cwd=tmp_path, capture_output=True, text=True,
                          timeout=SMOKE_BUDGET_S * 3, check=False)  # fmt: skip
    took = time.monotonic() - began
    assert done.returncode == 0, f"{script} --smoke: exit {done.returncode}\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"{script} --smoke printed nothing"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert took < SMOKE_BUDGET_S, f"{script} --smoke took {took:.1f} s"
