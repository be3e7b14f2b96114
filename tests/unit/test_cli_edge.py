"""The command line stays an edge (issue 26): arguments, thin handlers and the error mapping,
under 400 lines in all; what it shows is rendered below it and printed by console.py."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "src" / "arraybench" / "cli"


def test_the_cli_package_is_under_400_lines() -> None:
    lines = {p.name: len(p.read_text().splitlines()) for p in CLI.glob("*.py")}
    assert sum(lines.values()) < 400, lines


def test_the_cli_renders_nothing() -> None:
    """No table, box or wrapping of its own: rich and textwrap are console.py's and
    report/render/text.py's."""
    for path in CLI.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not [n for n in names if n.split(".")[0] in ("rich", "textwrap")], path
