"""A frontend region that covers the whole (small) target is said in the report's notes (the
plan and the target's size are the subject: the test engine's run, tests/fake_engine.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arraybench.report.assemble import report_for_run
from arraybench.store.db import Store
from tests.conftest import main_cli
from tests.fake_engine import PLAN_LINES

pytestmark = [pytest.mark.usefixtures("fake_engine")]


def test_a_frontend_region_as_large_as_the_target_is_said(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"{PLAN_LINES}name: fe\n"
        "timing: {ramp: 0s, duration: 1s}\nload: {pairs: [[1, 1]]}\n"
        f"targets: [{{path: {tmp_path / 't.dat'}, size: 4m}}]\nworkloads:\n"
        "  - {name: fe-all, pattern: random, bs: 8k, read: 100, region: frontend}\n"
        "  - {name: fe-part, pattern: random, bs: 8k, read: 100, region: frontend,"
        " frontend_blocks: 16}\n"
    )
    done = main_cli("run", str(plan), "--results", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    store = Store(tmp_path / "r", create=False)
    ((run, _),) = store.list_runs()
    notes = [n for n in report_for_run(store, run.id).notes if "frontend region" in n]
    assert notes == ["fe-all: its frontend region (1,000 x 8 KiB = 7.8 MiB) is the whole target "
                     "(4 MiB): its figures are the backend's too, not a cache's; use a larger "
                     "target or fewer frontend_blocks"]  # fmt: skip
