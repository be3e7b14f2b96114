"""The command line stays an edge (issue 26): arguments, thin handlers and the error mapping,
under 400 lines in all; what it shows is rendered below it and printed by console.py."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "src" / "arraybench" / "cli"


def test_the_cli_package_is_under_460_lines() -> None:
    """400 when it held 14 commands (issue 26); `bundle`, `bundle verify` and the options of
    the customer report, the chosen fio and `revert --mark-undone` added declarations, not
    logic: the handlers' own size is held below."""
    lines = {p.name: len(p.read_text().splitlines()) for p in CLI.glob("*.py")}
    assert sum(lines.values()) < 460, lines


def test_every_handler_fits_in_25_lines() -> None:
    """A command's handler reads its arguments, calls the library and hands the result to
    console.py: what is longer is work that belongs below the edge."""
    for path in CLI.glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("cmd_"):
                assert (node.end_lineno or 0) - node.lineno < 25, (path.name, node.name)


def test_the_cli_renders_nothing() -> None:
    """No table, box or wrapping of its own: rich and textwrap are console.py's and
    console_text.py's."""
    for path in CLI.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not [n for n in names if n.split(".")[0] in ("rich", "textwrap")], path
