"""compare with repeats on real fio: two runs of the same plan differ within noise, a throttled
run differs beyond it."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from arraybench import cli
from tests.conftest import needs_fio

pytestmark = [needs_fio, pytest.mark.slow, pytest.mark.serial]  # two runs within noise


def _plan(tmp_path: Path, name: str, rate: str = "") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f'name: {name}\nioengine: "null"\nmonitor: false\nrepeat: 3\n'
        "timing: {ramp: 0s, duration: 1s}\nload: {workers: [1], iodepth: [1]}\n"
        f"targets: [{{path: {tmp_path / 't.dat'}, size: 16m}}]\n"
        f"workloads:\n  - {{name: rr, pattern: random, bs: 4k, read: 100{rate}}}\n"
    )
    return path


def _compare(results: Path, a: str, b: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["compare", a, b, "--results", str(results)]) == 0
    return " ".join(out.getvalue().split())


def _run(plan: Path, results: Path) -> str:
    assert cli.main(["run", str(plan), "--results", str(results)]) == 0
    runs = sorted((results / "runs").iterdir(), key=lambda p: p.stat().st_mtime)
    return runs[-1].name


def test_same_plan_is_within_noise_and_a_throttled_run_is_not(tmp_path: Path) -> None:
    results = tmp_path / "res"
    first = _run(_plan(tmp_path, "same"), results)
    second = _run(_plan(tmp_path, "same"), results)
    throttled = _run(_plan(tmp_path, "slow", ", rate_iops: 200"), results)
    same = _compare(results, f"{first}:a", f"{second}:b")
    assert "(within noise)" in same and "beyond noise)" not in same
    slow = _compare(results, f"{first}:a", f"{throttled}:slow")
    assert "(beyond noise)" in slow and "(within noise)" not in slow
    assert "Student t" in slow
