"""The live view on the terminal of `run` (a real pseudo-terminal, 100 columns): each host's
last second and the last minute's sparkline above the progress bar, and a `prompt` event
still asks its question on its own line and waits for Enter."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from arraybench.live.terminal import BARS, HEADER, WIDTH, view_lines
from tests.conftest import needs_fio
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
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, WIDTH, 0, 0))
    argv = [sys.executable, "-m", "arraybench", "run", str(plan), "--results",
            str(tmp_path / "res")]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True, env=env)  # fmt: skip
    os.close(slave)
    seen = b""
    try:
        deadline = time.monotonic() + 90
        while b"press Enter" not in seen:
            assert time.monotonic() < deadline and proc.poll() is None, seen.decode(
                errors="replace")  # fmt: skip
            if select.select([master], [], [], 0.1)[0]:
                seen += os.read(master, 65536)
        asked = seen
        time.sleep(0.5)
        os.write(master, b"\r")
        while proc.poll() is None:
            if select.select([master], [], [], 0.1)[0]:
                with contextlib.suppress(OSError):
                    seen += os.read(master, 65536)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    text = seen.decode(errors="replace")
    assert proc.wait(timeout=60) == 0, text
    before = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", asked.decode(errors="replace"))
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
