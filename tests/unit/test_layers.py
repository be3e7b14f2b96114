"""The layering contract: each module imports only modules of its own package or below it.

Layers, lowest first (docs/architecture.md): the words (errors, units, the store's records)
-> plan -> system, monitor, fio, hosts, targets, events, integrity -> analysis -> store ->
run, importer -> report -> console, cli. The order is strict inside every layer too: each
package has its own place, so two packages of one layer cannot import each other both ways.
Beside it, a second test finds cycles between the top-level packages themselves (a package
split over two layers, like store, could close one that the order does not see). Imports
are read with `ast` from the source, so an import inside a function or under TYPE_CHECKING
counts too.
"""

from __future__ import annotations

import ast
import functools
import itertools
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "arraybench"

# each layer's modules (or packages, by prefix), lowest first; a module may import its own
# entry and any entry before it; the longest matching prefix decides
ORDER: list[list[str]] = [
    [  # 0: the words every layer speaks
        "arraybench",  # the package itself: __version__
        "arraybench.errors",
        "arraybench.units",
        "arraybench.userregex",  # a user's regular expressions, compiled for linear time (RE2)
        "arraybench.userfiles",  # a user's input files: regular files only, size limits
        "arraybench.outfiles",  # files written: never through a link, never into a FIFO
        "arraybench.point_identity",  # a point's key and its typed parts
        # records imports nothing of arraybench above it, so the analysis functions and the
        # store share it without importing each other
        "arraybench.records",
        "arraybench.finding_kinds",  # the findings' TypedDicts, written below, read above
    ],
    ["arraybench.plan"],
    [  # 2: the machine and the tools on it
        "arraybench.system",  # block devices, processes: facts the packages after it ask
        "arraybench.monitor",
        "arraybench.engines",  # load engines (fio under engines/fio)
        "arraybench.hosts",  # fio client/server over SSH
        "arraybench.targets",
        "arraybench.events",  # injected on targets, over hosts
        "arraybench.integrity",
    ],
    ["arraybench.analysis"],
    ["arraybench.store"],
    ["arraybench.run", "arraybench.importer", "arraybench.bundle"],
    ["arraybench.report", "arraybench.live"],  # the live view draws with the report's charts
    [  # 7: the edge: what the user sees
        "arraybench.console_text",  # the commands' terminal text, printed by console
        "arraybench.console",
        "arraybench.progressbar",
        "arraybench.cli",
        "arraybench.__main__",
    ],
]
LAYERS: dict[str, tuple[int, int]] = {
    name: (layer, place) for layer, names in enumerate(ORDER) for place, name in enumerate(names)
}

# packages whose modules sit in more than one layer, with why; every other package is in one
SPLIT: dict[str, str] = {}

# upward imports not fixed yet: (importer, imported) -> why; printed by the test
ALLOWED: dict[tuple[str, str], str] = {}

# package-level cycles not fixed yet: (package, package), sorted -> why
CYCLES_ALLOWED: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Violation:
    module: str
    imported: str
    line: int

    def text(self) -> str:
        return (
            f"{self.module}:{self.line} imports {self.imported} "
            f"({place(self.module)} -> {place(self.imported)})"
        )


def entry_of(module: str) -> str:
    """The entry of ORDER that `module` belongs to (the longest matching prefix)."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in LAYERS:
            return prefix
    raise AssertionError(f"{module}: no layer; add its package to ORDER")


def layer_of(module: str) -> tuple[int, int]:
    """(layer, place inside the layer): compared as a pair, so the order is strict."""
    return LAYERS[entry_of(module)]


def place(module: str) -> str:
    layer, inside = layer_of(module)
    return f"layer {layer}.{inside} {entry_of(module)}"


def package_of(module: str) -> str:
    """The top-level package (`arraybench.store`) or module (`arraybench.console`) of `module`."""
    return ".".join(module.split(".")[:2])


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


def package_edges(files: dict[str, tuple[str, bool]]) -> dict[tuple[str, str], list[str]]:
    """(package, package it imports) -> the imports that make that edge, as `module:line`."""
    modules = set(files)
    edges: dict[tuple[str, str], list[str]] = {}
    for module, (source, is_package) in sorted(files.items()):
        for name, line in imports_of(source, module, is_package):
            target = known(name, modules)
            if target is None or package_of(target) == package_of(module):
                continue
            edge = (package_of(module), package_of(target))
            edges.setdefault(edge, []).append(f"{module}:{line} -> {target}")
    return edges


def way(edges: dict[tuple[str, str], list[str]], start: str, goal: str) -> list[str] | None:
    """The shortest chain of package imports from `start` to `goal` (one import a step), or
    None when there is none."""
    came: dict[str, tuple[str, str]] = {}
    todo, seen = [start], {start}
    while todo:
        here = todo.pop(0)
        for (x, y), imps in sorted(edges.items()):
            if x == here and y not in seen:
                seen.add(y)
                came[y] = (here, imps[0])
                todo.append(y)
    if goal not in came:
        return None
    steps, at = [], goal
    while at != start:
        at, step = came[at]
        steps.append(step)
    return steps[::-1]


def cycles(files: dict[str, tuple[str, bool]]) -> dict[tuple[str, str], list[str]]:
    """Every pair of packages (sorted) that reach each other through imports, directly or
    through other packages, with a chain of imports there and one back."""
    edges = package_edges(files)
    packages = sorted({p for edge in edges for p in edge})
    pairs = {}
    for a, b in itertools.combinations(packages, 2):
        there, back = way(edges, a, b), way(edges, b, a)
        if there and back:
            pairs[(a, b)] = there + back
    return pairs


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


def test_no_two_packages_import_each_other() -> None:
    """Through any chain of imports, at module level or inside a function alike."""
    found = cycles(source_files())
    for pair in set(found) & set(CYCLES_ALLOWED):
        print(f"allowed for now: {pair}: {CYCLES_ALLOWED[pair]}")
    wrong = [f"{a} <-> {b}: {', '.join(how)}" for (a, b), how in found.items()
             if (a, b) not in CYCLES_ALLOWED]  # fmt: skip
    assert not wrong, "package cycles:\n" + "\n".join(wrong)
    assert set(CYCLES_ALLOWED) <= set(found), "fixed, remove from CYCLES_ALLOWED"


def test_each_package_sits_in_one_layer() -> None:
    """Only the packages SPLIT names straddle layers."""
    layers: dict[str, set[int]] = {}
    for module in source_files():
        layers.setdefault(package_of(module), set()).add(layer_of(module)[0])
    split = {p for p, found in layers.items() if len(found) > 1}
    assert split == set(SPLIT), f"packages over several layers: {sorted(split)}"


def test_system_holds_facts_only() -> None:
    """system/ reads the machine (sysfs, /proc) and imports nothing of arraybench: an error
    with a hint for the user belongs to the package that asked (events/procs.py)."""
    files = source_files()
    found = [(m, name) for m, (source, is_package) in files.items()
             if m.startswith("arraybench.system")
             for name, _ in imports_of(source, m, is_package)
             if not (known(name, set(files)) or "").startswith("arraybench.system")]  # fmt: skip
    assert not found, found


def test_the_order_is_strict_inside_every_layer() -> None:
    """Each entry is written once, so it has one place: within a layer, one package is below
    the other (a second line for an entry would silently move it)."""
    names = [name for layer in ORDER for name in layer]
    assert len(names) == len(set(names)) == len(set(LAYERS.values()))


def test_the_contract_catches_an_upward_import() -> None:
    files = {
        "arraybench.store.db": ("from arraybench.analysis.aggregate import x\n", False),
        "arraybench.analysis.aggregate": ("", False),
        "arraybench.analysis.findings": ("from ..store import db\n", False),
        "arraybench.store": ("", True),
        "arraybench.analysis": ("", True),
        "arraybench.engines.fio.parse": ("import arraybench.run.campaign\n", False),
        "arraybench.run.campaign": ("", False),
        "arraybench.run": ("from arraybench.run import campaign\n", True),
    }
    found = {(v.module, v.imported) for v in violations(files)}
    assert found == {
        ("arraybench.analysis.findings", "arraybench.store"),
        ("arraybench.analysis.findings", "arraybench.store.db"),
        ("arraybench.engines.fio.parse", "arraybench.run.campaign"),
    }


def test_the_contract_catches_a_cycle_inside_one_layer() -> None:
    """Two packages of layer 2 importing each other (one of them inside a function): the
    order says which import is upward, and the cycle test names the pair."""
    files = {
        "arraybench.events": ("", True),
        "arraybench.events.paths": ("from arraybench.targets.queue import q\n", False),
        "arraybench.targets": ("", True),
        "arraybench.targets.queue": ("def f():\n    from ..events import paths\n", False),
    }
    found = {(v.module, v.imported) for v in violations(files)}
    assert found == {("arraybench.targets.queue", "arraybench.events"),
                     ("arraybench.targets.queue", "arraybench.events.paths")}  # fmt: skip
    assert set(cycles(files)) == {("arraybench.events", "arraybench.targets")}


def test_the_cycle_test_sees_a_cycle_through_a_third_package() -> None:
    """fio -> events -> hosts -> fio: each step may look fine alone."""
    files = {
        "arraybench.engines.fio.runner": ("from arraybench.events.procs import x\n", False),
        "arraybench.events.procs": ("import arraybench.hosts.server\n", False),
        "arraybench.hosts.server": ("from arraybench.engines.fio import runner\n", False),
        "arraybench.plan.load": ("from arraybench.engines.fio import runner\n", False),
    }
    assert set(cycles(files)) == {
        ("arraybench.engines", "arraybench.events"),
        ("arraybench.events", "arraybench.hosts"),
        ("arraybench.engines", "arraybench.hosts"),
    }


def test_only_the_edge_and_the_words_are_top_level_modules() -> None:
    top = {p.stem for p in (SRC / PACKAGE).glob("*.py")}
    assert top == {"__init__", "__main__", "console", "console_text", "errors",
                   "finding_kinds", "outfiles", "point_identity", "progressbar", "records",
                   "units", "userfiles", "userregex"}  # fmt: skip


def test_the_charts_need_no_output_format() -> None:
    """report/charts/ draws for the report's formats and for the live view alike: it imports
    nothing of report/render/, so the live view never loads a format's code."""
    files = source_files()
    found = [(m, name) for m, (source, is_package) in files.items()
             if m.startswith("arraybench.report.charts")
             for name, _ in imports_of(source, m, is_package)
             if name.startswith("arraybench.report.render")]  # fmt: skip
    assert not found, found
