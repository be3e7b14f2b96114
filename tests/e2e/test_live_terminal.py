"""The live view on the terminal of `run` (a real pseudo-terminal, 100 columns): each host's
last second and the last minute's sparkline above the progress bar, and a `prompt` event
still asks its question on its own line and waits for Enter."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from arraybench.live.terminal import BARS, HEADER, WIDTH, view_lines
from tests.conftest import needs_fio
from tests.terminal import answer_prompt
from tests.unit.test_live_server import HOSTILE, running_snapshot

WORKLOAD = ("  - {name: rr, pattern: random, bs: 4k, read: 100, rate_iops: 500,\n"
            "     events: [{at: 3s, prompt: Pull cable A now}]}\n")  # fmt: skip


@needs_fio
def test_terminal_view_and_a_prompt_during_a_point(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "name: tty\n"
        f"targets: [{{path: {tmp_path / 't.dat'}, size: 16m}}]\n"
        "timing: {ramp: 0s, duration: 6s}\n"
        "load: {workers: [1], iodepth: [1]}\n"
        f"workloads:\n{WORKLOAD}"
    )
    argv = [sys.executable, "-m", "arraybench", "run", str(plan), "--results",
            str(tmp_path / "res")]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = answer_prompt(argv, wait_s=90, think_s=0.5, size=(40, WIDTH), env=env)
    text = done.seen.decode(errors="replace")
    assert done.returncode == 0, text
    before = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", done.asked.decode(errors="replace"))
    assert "read IOPS" in before and any(c in before for c in BARS[1:]), before  # the view
    assert "ACTION: Pull cable A now" in before  # the question, on its own line
    assert "event" in text and "prompt" in text


def test_view_lines_fit_100_columns_whatever_the_names() -> None:
    snap = running_snapshot(1000)
    snap["hosts"] = {HOSTILE * 3: snap["hosts"]["h1"], "h2": snap["hosts"]["h1"]}
    snap["series"] = [[t, float(t % 7) * 100, 1.0, {}] for t in range(900, 1000)]
    lines = view_lines(snap)
    assert lines[1] == HEADER and len(lines) >= 5
    assert all(len(line) <= WIDTH for line in lines)
    spark = next(line for line in lines if line.startswith("IOPS last 60 s "))
    assert len(spark.split()[4]) == 60  # one character per second of the last minute
