"""The layering contract: each module imports only modules of its own layer or below.

Layers, lowest first (docs/architecture.md): the words (errors, units, the store's records)
-> plan -> fio, hosts, targets, events, integrity, monitor -> analysis -> store -> run, importer
-> report -> cli, console. Imports are read with `ast` from the source, so an import inside a
function or under TYPE_CHECKING counts too.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "arraybench"

# modules (or packages, by prefix) and their layer; the longest matching prefix decides
LAYERS: dict[str, int] = {
    # the words every layer speaks; store.records imports nothing of arraybench, so the
    # analysis functions and the store share it without importing each other
    "arraybench": 0,
    "arraybench.errors": 0,
    "arraybench.units": 0,
    "arraybench.userregex": 0,  # a user's regular expressions, compiled for linear time (RE2)
    "arraybench.userfiles": 0,  # a user's input files: regular files only, size limits
    "arraybench.store.records": 0,
    "arraybench.store.findings": 0,  # the findings' TypedDicts, written below, read above
    "arraybench.plan": 1,
    "arraybench.fio": 2,
    "arraybench.hosts": 2,
    "arraybench.targets": 2,
    "arraybench.events": 2,
    "arraybench.integrity": 2,
    "arraybench.monitor": 2,
    "arraybench.analysis": 3,
    "arraybench.store": 4,
    "arraybench.run": 5,
    "arraybench.importer": 5,
    "arraybench.report": 6,
    "arraybench.live": 6,  # the live view draws with the report's chart code
    "arraybench.cli": 7,
    "arraybench.console": 7,
    "arraybench.__main__": 7,
}

# upward imports not fixed yet: (importer, imported) -> why; printed by the test
ALLOWED: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Violation:
    module: str
    imported: str
    line: int

    def text(self) -> str:
        return (
            f"{self.module}:{self.line} imports {self.imported} "
            f"(layer {layer_of(self.module)} -> {layer_of(self.imported)})"
        )


def layer_of(module: str) -> int:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in LAYERS:
            return LAYERS[prefix]
    raise AssertionError(f"{module}: no layer; add its package to LAYERS")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str, is_package: bool) -> list[tuple[str, int]]:
    """Every arraybench module named by an import in `source`, with its line."""
    package = module if is_package else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolved against the importing package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.append((name, node.lineno))
            # `from arraybench.run import provenance` imports the module run.provenance
            found += [(f"{name}.{a.name}", node.lineno) for a in node.names]
    return [(n, line) for n, line in found if n == PACKAGE or n.startswith(PACKAGE + ".")]


def known(name: str, modules: set[str]) -> str | None:
    """`name` as a module or package of the source tree (a name imported from a module is
    that module)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def violations(files: dict[str, tuple[str, bool]]) -> list[Violation]:
    """Upward imports among `files` (module -> (source, is_package))."""
    modules = set(files)
    out = []
    for module, (source, is_package) in sorted(files.items()):
        for name, line in imports_of(source, module, is_package):
            target = known(name, modules)
            if target is None or target == module:
                continue
            if layer_of(target) > layer_of(module):
                out.append(Violation(module, target, line))
    return sorted(set(out), key=lambda v: (v.module, v.line, v.imported))


@functools.cache
def source_files() -> dict[str, tuple[str, bool]]:
    return {
        module_name(p): (p.read_text(), p.name == "__init__.py")
        for p in sorted((SRC / PACKAGE).rglob("*.py"))
    }


def test_no_module_imports_a_layer_above_it() -> None:
    found = violations(source_files())
    allowed = [v for v in found if (v.module, v.imported) in ALLOWED]
    for v in allowed:
        print(f"allowed for now: {v.text()}: {ALLOWED[(v.module, v.imported)]}")
    wrong = [v.text() for v in found if (v.module, v.imported) not in ALLOWED]
    assert not wrong, "upward imports:\n" + "\n".join(wrong)


def test_every_allowed_exception_still_exists() -> None:
    """An exception that was fixed leaves the list, so the list never hides a new one."""
    found = {(v.module, v.imported) for v in violations(source_files())}
    assert set(ALLOWED) <= found, f"fixed, remove from ALLOWED: {set(ALLOWED) - found}"


def test_every_module_has_a_layer() -> None:
    for module in source_files():
        layer_of(module)


def test_the_contract_catches_an_upward_import() -> None:
    files = {
        "arraybench.store.db": ("from arraybench.analysis.aggregate import x\n", False),
        "arraybench.analysis.aggregate": ("", False),
        "arraybench.analysis.findings": ("from ..store import db\n", False),
        "arraybench.store": ("", True),
        "arraybench.analysis": ("", True),
        "arraybench.fio.parse": ("import arraybench.run.campaign\n", False),
        "arraybench.run.campaign": ("", False),
        "arraybench.run": ("from arraybench.run import campaign\n", True),
    }
    found = {(v.module, v.imported) for v in violations(files)}
    assert found == {
        ("arraybench.analysis.findings", "arraybench.store"),
        ("arraybench.analysis.findings", "arraybench.store.db"),
        ("arraybench.fio.parse", "arraybench.run.campaign"),
    }


def test_only_the_edge_and_the_words_are_top_level_modules() -> None:
    top = {p.stem for p in (SRC / PACKAGE).glob("*.py")}
    assert top == {"__init__", "__main__", "cli", "console", "errors", "units", "userfiles",
                   "userregex"}  # fmt: skip
