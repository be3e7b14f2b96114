"""A process group whose members are all zombies has ended: an array source's command stopped
with its children is not waited for again while init has not reaped them yet (on this VM's
init, a second or two: every `stop()` of such a command cost STOP_WAIT_S)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from arraybench.system.procs import living_in_group


def _state(pid: int) -> str:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rfind(")") + 2]


def test_a_group_of_zombies_has_no_living_member() -> None:
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert living_in_group(proc.pid) == [proc.pid]
        os.kill(proc.pid, 9)
        deadline = time.monotonic() + 10
        while _state(proc.pid) != "Z":  # not reaped (no wait): a zombie still in its group
            assert time.monotonic() < deadline
            time.sleep(0.01)
        os.killpg(proc.pid, 0)  # killpg still finds the group...
        assert living_in_group(proc.pid) == []  # ...but nothing in it lives
    finally:
        proc.kill()
        proc.wait()
