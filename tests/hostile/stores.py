"""Helpers for the hostile input tests: a results folder with one real run in it, and what a
refused command must leave as it was (the store's whole content, every file's name)."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

from tests.conftest import DATA, main_cli

SAMPLE = DATA / "09_fioplot_fio3.1_json_ns_keys_randread.json"  # a real fio 3.1 JSON output


def results_with_a_run(results: Path) -> str:
    """`results` holding one imported run (a real fio output); the run's id."""
    done = main_cli("import", str(SAMPLE), "--results", str(results), "--name", "base")
    assert done.returncode == 0, done.stderr
    return next(p.name for p in (results / "runs").iterdir())


def snapshot(results: Path) -> tuple[list[str], list[str]]:
    """The store's content (every row of every table, as SQL) and the results folder's files:
    a refused command must leave both exactly as they were. The store is read through a
    connection of its own, closed at once (SQLite removes its WAL files then, as the CLI's)."""
    files = (
        sorted(str(p.relative_to(results)) for p in results.rglob("*")) if results.exists() else []
    )
    db = results / "arraybench.db"
    if not db.exists():
        return [], files
    conn = sqlite3.connect(db)
    try:
        rows = list(conn.iterdump())
    finally:
        conn.close()
    return rows, files


def refused(argv: list[str], said: str, code: int = 2) -> str:
    """arraybench ARGV in this process: exit `code`, one line on stderr holding `said`, no
    traceback; the line."""
    done = main_cli(*argv)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == code, (argv, done.returncode, done.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), (argv, done.stderr)
    assert said in lines[0], (said, lines[0])
    assert "Traceback" not in done.stdout + done.stderr
    return lines[0]


def mkfifo(path: Path) -> Path:
    subprocess.run(["mkfifo", str(path)], check=True)
    return path
