"""Helpers for the hostile tests: arraybench as a real process, fio processes found in /proc."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.fake_engine import HOLD_REPORT_ENV


def start_cli(*args: str) -> subprocess.Popen[str]:
    """arraybench in a process of its own, its output piped."""
    env = dict(os.environ, COLUMNS="160")
    return subprocess.Popen(
        [sys.executable, "-m", "arraybench", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def start_fake_cli(*args: str, hold_report: bool = False) -> subprocess.Popen[str]:
    """As `start_cli`, with the test engine (tests/fake_engine.py) known as `engine: fake`;
    `hold_report`: every report file's write waits a minute first (a signal lands in it)."""
    env = dict(os.environ, COLUMNS="160")
    if hold_report:
        env[HOLD_REPORT_ENV] = "1"
    return subprocess.Popen(
        [sys.executable, "-m", "tests.fake_engine", *args], cwd=Path(__file__).parents[2],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def fio_under(folder: Path) -> list[int]:
    """Live fio processes (main or job, whoever their parent is now) working in or on
    `folder`: their working directory or their command line names it."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if Path(f"/proc/{name}/comm").read_text().strip() != "fio":
                continue
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
            cwd = os.readlink(f"/proc/{name}/cwd")
            argv = Path(f"/proc/{name}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if state != "Z" and (cwd.startswith(str(folder)) or str(folder) in argv):
            found.append(int(name))
    return found


def wait_for(condition, what: str, proc: subprocess.Popen[str] | None, limit: float = 60):  # type: ignore[no-untyped-def]
    """Poll `condition` until it returns something true; fail if `proc` ends first."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"arraybench ended before {what}: {proc.communicate()}")
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def gone(folder: Path, limit: float = 15) -> list[int]:
    """fio processes on `folder` still alive after `limit` seconds (empty: all gone)."""
    deadline = time.monotonic() + limit
    while (left := fio_under(folder)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def point_count(results: Path) -> int:
    db = results / "arraybench.db"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM points").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def runs(results: Path) -> list[dict]:  # type: ignore[type-arg]
    """The runs as `arraybench runs --format json` lists them (id, status, points_done), read
    from the store directly: a Python start-up less per look."""
    with sqlite3.connect(results / "arraybench.db") as conn:
        rows = conn.execute(
            "SELECT id, status, (SELECT COUNT(*) FROM points WHERE run_id = runs.id) "
            "FROM runs ORDER BY started"
        ).fetchall()
    return [{"id": r[0], "status": r[1], "points_done": r[2]} for r in rows]


def stored_keys(results: Path, run_id: str) -> list[str]:
    with sqlite3.connect(results / "arraybench.db") as conn:
        rows = conn.execute("SELECT key FROM points WHERE run_id = ?", (run_id,)).fetchall()
    return [r[0] for r in rows]
