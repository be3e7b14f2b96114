"""The engine seam holds: `run/` and `targets/` reach a load tool only through the Engine
protocol (`ctx.engine`), except the parts that are fio's by design (docs/engines.md), each
named here with why. A new import of `engines.fio` there fails this test."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "arraybench"

FIO_BY_DESIGN = {
    "run/fleet.py": "many hosts run fio's client/server mode",
    "run/point/hosts.py": "many hosts: the watchdog and job errors of fio's client",
    "run/checks.py": "`plan check` shows many-host job files and `hosts check` fio's version",
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


def _names_tested(source: str, engines: set[str]) -> list[int]:
    """The lines of `source` that compare with an engine's name: a registered name as a
    literal (alone or in a tuple) or the registry's default (`registry.DEFAULT`)."""

    def names_one(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in engines
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(names_one(e) for e in node.elts)
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "DEFAULT"
            and (
                isinstance(node.value, ast.Name) and node.value.id in ("registry", "engine_choice")
            )
        )

    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Compare)
            and any(names_one(n) for n in [node.left, *node.comparators])]  # fmt: skip


def test_run_asks_an_engine_what_it_can_never_its_name() -> None:
    """`run/` decides by `Engine.capabilities` (docs/engines.md), not by which engine it is."""
    from arraybench.engines import registry

    engines = set(registry.names())
    found = [f"{path.relative_to(SRC)}:{line}" for path in sorted((SRC / "run").rglob("*.py"))
             for line in _names_tested(path.read_text(), engines)]  # fmt: skip
    assert not found, found


def test_the_name_check_sees_the_forms_it_forbids() -> None:
    engines = {"fio", "mdtest"}
    code = ("if plan.engine != registry.DEFAULT: pass\nif facts.name == 'fio': pass\n"
            "x = engine in ('mdtest', 'other')\nif plan.engine == other: pass\n")  # fmt: skip
    assert _names_tested(code, engines) == [1, 2, 3]


def test_every_engine_declares_its_capabilities() -> None:
    from arraybench.engines import registry
    from arraybench.engines.base import Capabilities
    from tests.fake_engine import FakeEngine

    engines = [registry.engine_for(name) for name in registry.names()] + [FakeEngine()]
    assert all(isinstance(e.capabilities, Capabilities) for e in engines)
    by_name = {e.name: e.capabilities for e in engines}
    assert by_name["fio"].many_hosts and not by_name["mdtest"].grid
    assert by_name["fake"] == Capabilities()  # a plain engine: what the defaults mean


# fio's names once given to tool-neutral things (issue 36): the document every engine and
# importer fills, the error any tool's unreadable output raises, the store's version column
OLD_NAMES = ("FioDocument", "FioParseError", "set_run_fio_version")  # rename-names.sh keeps
FIO_NAMED = re.compile(rf"\b({'|'.join(OLD_NAMES)})\b")


def test_tool_neutral_things_have_no_fio_name() -> None:
    found = [f"{path.relative_to(SRC)}:{n}" for path in sorted(SRC.rglob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if FIO_NAMED.search(line)]  # fmt: skip
    assert not found, found
    from arraybench.records import PointRecord, RunRecord
    from arraybench.store.db import Store

    for record in (RunRecord, PointRecord):
        assert "engine_version" in record.__dataclass_fields__
    assert hasattr(Store, "set_run_engine_version")
