"""docs/architecture.md names real files: every path it writes in backticks exists, and a name
written right after a file (`run/point.py` `run_point`) is in that file."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "arraybench"
DOC = ROOT / "docs" / "architecture.md"
ROOT_FOLDERS = {"src", "tests", "docs", "benchmarks", "scripts", ".ci"}

SPAN = re.compile(r"`([^`\n]+)`")
PATHLIKE = re.compile(r"^[\w.-]+(/[\w.-]+)*/?$")  # no `<id>`, `+`, spaces: not a placeholder
# a file span followed by a span of names: `run/point.py` `run_point`, `Campaign.start`
FILE_THEN_NAME = re.compile(r"`([\w./-]+\.py)` `([A-Za-z_][\w.]*)`")


def packages() -> set[str]:
    return {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}


def resolve(text: str, pkgs: set[str]) -> Path | None:
    """The file or folder a backticked span names, None when the span is no path of ours
    (`points/NNN-key/point.fio`, `C3/rr/w4-qd1`); a path that should exist but does not
    resolves to where it would be."""
    if not PATHLIKE.match(text):
        return None
    first = text.split("/", 1)[0]
    if "/" not in text.rstrip("/"):
        if not text.endswith((".py", "/")):
            return None
        # a bare module or package (`cli.py`, `markdown.py` after `report/html.py`, `kinds/`
        # in the table of run/): somewhere in the package
        name = text.rstrip("/")
        found = sorted(p for p in PACKAGE.rglob(name) if p.is_dir() == text.endswith("/"))
        return found[0] if found else PACKAGE / text
    if first in ROOT_FOLDERS:
        return ROOT / text
    if first in pkgs:
        return PACKAGE / text
    if text.endswith(".py"):  # a misspelt package still names a module: it must exist
        return PACKAGE / text
    return None


def named_paths(doc: str) -> dict[str, Path]:
    pkgs = packages()
    return {s: p for s in SPAN.findall(doc) if (p := resolve(s, pkgs)) is not None}


def test_every_path_the_page_names_exists():
    paths = named_paths(DOC.read_text())
    assert len(paths) > 60, "the extraction found too few paths: is the pattern still right?"
    missing = sorted(s for s, p in paths.items() if not p.exists())
    assert not missing, "docs/architecture.md names missing files: " + ", ".join(missing)


def misnamed(doc: str) -> list[str]:
    """Names written right after a file that the file does not hold."""
    pkgs, wrong = packages(), []
    for file, names in FILE_THEN_NAME.findall(doc):
        path = resolve(file, pkgs)
        source = path.read_text() if path is not None and path.is_file() else ""
        absent = [n for n in names.split(".") if not re.search(rf"\b{re.escape(n)}\b", source)]
        if absent:
            wrong.append(f"`{file}` `{names}`: no {', '.join(absent)}")
    return wrong


def test_every_name_after_a_file_is_in_that_file():
    wrong = misnamed(DOC.read_text())
    assert not wrong, "docs/architecture.md:\n" + "\n".join(wrong)


def test_the_check_catches_a_renamed_module():
    pkgs = packages()

    def exists(text: str) -> bool:
        path = resolve(text, pkgs)
        assert path is not None, f"{text} is a path"
        return path.exists()

    assert resolve("run/point.py", pkgs) == PACKAGE / "run" / "point.py"
    assert resolve("tests/unit/test_layers.py", pkgs) == ROOT / "tests/unit/test_layers.py"
    assert resolve("kinds/", pkgs) == PACKAGE / "run" / "kinds"
    for gone in ("run/hostverify.py", "hostverify.py", "rnu/point.py", "src/arraybench/run/x.py"):
        assert not exists(gone)
    for not_a_path in ("points/NNN-key/point.fio", "C3/rr/w4-qd1", "runs/<id>/", "Campaign.start"):
        assert resolve(not_a_path, pkgs) is None
    doc = "`run/point.py` `run_point` and `run/point.py`, `no_such_function`"
    assert FILE_THEN_NAME.findall(doc) == [("run/point.py", "run_point")]
    assert misnamed(doc) == []
    doc = "`run/point.py` `run_point`, `run/fleet.py` `Fleet.go`, `run/nothing.py` `x`"
    assert misnamed(doc) == ["`run/fleet.py` `Fleet.go`: no go", "`run/nothing.py` `x`: no x"]
