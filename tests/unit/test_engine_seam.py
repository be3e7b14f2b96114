"""The engine seam holds: `run/` and `targets/` reach a load tool only through the Engine
protocol (`ctx.engine`), except the parts that are fio's by design (docs/engines.md), each
named here with why. A new import of `engines.fio` there fails this test."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "arraybench"

FIO_BY_DESIGN = {
    "run/fleet.py": "many hosts run fio's client/server mode",
    "run/point/hosts.py": "many hosts: the watchdog and job errors of fio's client",
    "run/hosts_live.py": "many hosts (fio only): live seconds in the record fio's status gives",
    "run/context.py": "the Observer's live seconds are fio's status reports (run/live_feed.py)",
    "run/checks.py": "`plan check` shows many-host job files and `hosts check` fio's version",
    "run/live_feed.py": "the live view's seconds are fio's status reports",
    "run/plan_values.py": "the plan's values checked for fio's job file syntax",
    "run/reportable.py": "a store made before the report files: its points' fio.json read",
    "run/injections.py": "revert ends the fio a killed run left before undoing its events",
    "run/kinds/interference.py": "the interference test writes fio job files of its own",
    "run/kinds/metadata.py": "the metadata test writes fio job files of its own",
    "run/data_reduction.py": "`data:` is fio's buffer options: fio itself writes the sample",
    "run/openloop_watch.py": "open loop reads fio's histogram logs and asks fio to stop early",
}


def _fio_importers(folder: str) -> set[str]:
    found = set()
    for path in sorted((SRC / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            if any(n.startswith("arraybench.engines.fio") for n in names):
                found.add(str(path.relative_to(SRC)))
    return found


def test_run_and_targets_reach_fio_only_where_it_is_fio_by_design() -> None:
    found = _fio_importers("run") | _fio_importers("targets")
    assert found <= set(FIO_BY_DESIGN), sorted(found - set(FIO_BY_DESIGN))


def test_the_list_names_no_module_that_no_longer_imports_fio() -> None:
    assert set(FIO_BY_DESIGN) <= _fio_importers("run"), "shorten FIO_BY_DESIGN"
