"""No module of src/ grows past a screenful of screens: past 700 lines it owns too much
(issue 26). A module that needs more is split by what its parts own."""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "arraybench"
LIMIT = 700


def test_no_module_is_over_700_lines() -> None:
    big = {
        str(p.relative_to(SRC)): n
        for p in SRC.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > LIMIT
    }
    assert not big, f"modules over {LIMIT} lines: {big}"
