"""Target preparation interrupted: no fio left running, no partial file left behind."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = """
import os, signal, sys, threading
from pathlib import Path
from arraybench.engines.fio.engine import FioEngine
from arraybench.targets.prepare import layout_file
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    layout_file(Path(sys.argv[1]), 1 << 30, FioEngine("fio"))
except KeyboardInterrupt:
    print("interrupted")
"""


def _fio_on(path: Path) -> list[str]:
    found = subprocess.run(["pgrep", "-af", "fio"], capture_output=True, text=True).stdout
    return [line for line in found.splitlines() if str(path) in line]


@pytest.mark.skipif(shutil.which("fio") is None or shutil.which("pgrep") is None,
                    reason="needs fio and pgrep")  # fmt: skip
def test_ctrl_c_during_the_layout_stops_fio_and_removes_the_file(tmp_path: Path) -> None:
    target = tmp_path / "layout.dat"
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(target)], capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.stdout.strip() == "interrupted", done.stderr
    deadline = time.monotonic() + 5
    while _fio_on(target) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _fio_on(target) == []
    assert not target.exists()
