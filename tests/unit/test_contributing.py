"""CONTRIBUTING.md's "Add an X" table names files that exist: a moved or renamed file (a
registry, a guarding test) fails here, so the page cannot send a contributor to nothing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "CONTRIBUTING.md"
ROWS = ("a load engine", "a report section", "an output format", "an importer",
        "an event kind", "a template")  # fmt: skip


def table_rows(text: str) -> dict[str, tuple[list[str], list[str]]]:
    """Each row of the "Add an X" table: what it adds -> (the files it touches, its tests)."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("to add", "---"):
            touch, guard = (re.findall(r"`([^`]+)`", c) for c in cells[1:])
            rows[cells[0]] = (touch, guard)
    return rows


def _files(spans: list[str]) -> list[str]:
    """The spans that are repository paths: those with a folder, in a file or a folder."""
    return [s for s in spans if "/" in s or s.endswith(".md")]


def test_every_row_is_there_with_its_tests() -> None:
    rows = table_rows(PAGE.read_text(encoding="utf-8"))
    assert tuple(rows) == ROWS
    for what, (_, guard) in rows.items():
        assert guard and all(g.startswith("tests/") for g in guard), what


def missing_files(text: str) -> list[str]:
    missing = []
    for what, (touch, guard) in table_rows(text).items():
        for span in _files(touch) + guard:
            # `<name>` is the contributor's own: its folder must exist
            path = ROOT / (span.split("<name>")[0] if "<name>" in span else span)
            if not path.exists():
                missing.append(f"{what}: {span}")
    return missing


def test_every_file_the_table_names_exists() -> None:
    missing = missing_files(PAGE.read_text(encoding="utf-8"))
    assert not missing, missing


def test_a_renamed_file_is_caught() -> None:
    page = (
        "| to add | touch | guarded by |\n|---|---|---|\n"
        "| a x | `src/arraybench/nope.py`, `src/arraybench/<name>/x.py` | `tests/x.py` |"
    )
    assert missing_files(page) == ["a x: src/arraybench/nope.py", "a x: tests/x.py"]
