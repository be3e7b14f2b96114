"""Commit subjects stay under 72 characters (CONTRIBUTING.md, "Commits"): `git log --oneline`,
a merge request's title and a terminal show them whole; the why goes in the body.

Checked from BASE on: 3e9a7e8 is main where the rule was made (issue 36); the history before
it keeps its longer subjects, since rewriting published commits would break every clone.
Skipped outside a git checkout, without git, or where BASE is absent (a shallow clone, an
exported tree)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASE = "3e9a7e8"  # main when the rule was made: the subjects after it are checked
LIMIT = 72


def git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                          check=False, timeout=60)  # fmt: skip


def long_subjects(subjects: list[str]) -> list[str]:
    return [f"{len(s)} characters: {s}" for s in subjects if len(s) > LIMIT]


def test_every_subject_since_the_rule_is_short() -> None:
    if shutil.which("git") is None or git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout")
    if git("cat-file", "-e", f"{BASE}^{{commit}}").returncode != 0:
        pytest.skip(f"{BASE} is not in this clone (shallow?)")
    log = git("log", "--format=%s", f"{BASE}..HEAD")
    assert log.returncode == 0, log.stderr
    long = long_subjects(log.stdout.splitlines())
    assert not long, f"commit subjects over {LIMIT} characters (the why goes in the body):\n" + (
        "\n".join(long)
    )


def test_the_limit_counts_characters() -> None:
    assert long_subjects(["x" * 72, "é" * 72]) == []
    assert long_subjects(["y" * 73]) == ["73 characters: " + "y" * 73]
