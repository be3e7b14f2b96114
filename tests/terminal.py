"""`arraybench` on a real pseudo-terminal, answering the one question it asks (a `prompt`):
the e2e tests of what a user at a terminal sees share this one way of driving it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Answered:
    asked: bytes  # what the terminal showed up to and with the question
    seen: bytes  # all it showed, the question and after
    returncode: int


def answer_prompt(
    argv: list[str],
    *,
    wait_s: float,
    think_s: float,
    size: tuple[int, int] | None = None,
    env: dict[str, str] | None = None,
) -> Answered:
    """Run ``argv`` on a new pseudo-terminal (``size``: rows, columns), wait up to ``wait_s``
    for "press Enter", press it after ``think_s`` and read until the process ends: the
    terminal is drained all along, as a full one would block the run."""
    master, slave = pty.openpty()
    if size is not None:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", *size, 0, 0))
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True, env=env)  # fmt: skip
    os.close(slave)
    seen = b""
    try:
        deadline = time.monotonic() + wait_s
        while b"press Enter" not in seen:
            assert time.monotonic() < deadline and proc.poll() is None, seen.decode(
                errors="replace")  # fmt: skip
            if select.select([master], [], [], 0.1)[0]:
                seen += os.read(master, 65536)
        asked = seen
        time.sleep(think_s)
        os.write(master, b"\r")
        while proc.poll() is None:
            if select.select([master], [], [], 0.1)[0]:
                with contextlib.suppress(OSError):
                    seen += os.read(master, 65536)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return Answered(asked, seen, proc.wait(timeout=60))
