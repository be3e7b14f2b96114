"""docs/architecture.md and the tree agree both ways: every path the page writes in backticks
exists, a name written right after a file (`run/campaign.py` `Campaign`) is in that file, and
every package and module of src/arraybench is named on the page.

A bare name (`journal.py`, `kinds/`) is looked up in the folder of the path written before it
on the same line (`integrity/writer.py`, `journal.py`), else in the folder a heading names
(### `run/`), else at the top of the package, else anywhere in it."""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "arraybench"
DOC = ROOT / "docs" / "architecture.md"
ROOT_FOLDERS = {"src", "tests", "docs", "benchmarks", "scripts", ".ci"}

SPAN = re.compile(r"`([^`\n]+)`")
PATHLIKE = re.compile(r"^[\w.-]+(/[\w.-]+)*/?$")  # no `<id>`, `+`, spaces: not a placeholder
# a file span followed by a span of names: `run/campaign.py` `Campaign.start`
FILE_THEN_NAME = re.compile(r"`([\w./-]+\.py)` `([A-Za-z_][\w.]*)`")


def packages() -> set[str]:
    return {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}


def resolve(text: str, pkgs: set[str], context: Path | None = None) -> Path | None:
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
        name, is_dir = text.rstrip("/"), text.endswith("/")
        for folder in (context, PACKAGE):
            if (
                folder is not None
                and (folder / name).exists()
                and (folder / name).is_dir() == is_dir
            ):
                return folder / name
        found = sorted(p for p in PACKAGE.rglob(name) if p.is_dir() == is_dir)
        return found[0] if found else PACKAGE / text
    if first in ROOT_FOLDERS:
        return ROOT / text
    if first in pkgs:
        return PACKAGE / text
    if text.endswith(".py"):  # a misspelt package still names a module: it must exist
        return PACKAGE / text
    return None


def named_paths(doc: str) -> dict[str, Path]:
    """Each backticked path of the page -> where it resolves (a bare name may resolve to
    several places on several lines: the key is then the span with its folder)."""
    pkgs, found = packages(), {}
    heading: Path | None = None
    for line in doc.splitlines():
        if line.startswith("#"):
            heading = None
        context = heading
        for span in SPAN.findall(line):
            path = resolve(span, pkgs, context)
            if path is None:
                continue
            key = (
                span
                if "/" in span.rstrip("/") or path.parent == PACKAGE
                else f"{span} in {path.parent.name}/"
            )
            found[key] = path
            if PACKAGE in path.parents and ("/" in span.rstrip("/") or span.endswith("/")):
                # the folder a bare name after it is looked up in
                context = path if span.endswith("/") else path.parent
                if line.startswith("#") and heading is None:
                    heading = context
    return found


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


def unnamed(doc: str) -> list[str]:
    """The packages and modules of src/arraybench that `doc` does not name."""
    named = set(named_paths(doc).values())
    tree = {p.parent if p.name == "__init__.py" else p for p in PACKAGE.rglob("*.py")} - {PACKAGE}
    return sorted(str(p.relative_to(PACKAGE)) for p in tree if p not in named)


def test_every_module_and_package_is_named():
    """A new module or package is written on the page (what it holds, where it sits)."""
    missing = unnamed(DOC.read_text())
    assert not missing, "docs/architecture.md does not name: " + ", ".join(missing)


def test_bare_names_resolve_beside_the_path_before_them():
    doc = "| `integrity/writer.py`, `journal.py` |\n### `run/`\n| `campaign.py`, `kinds/` |\n"
    found = set(named_paths(doc).values())
    integrity, run = PACKAGE / "integrity", PACKAGE / "run"
    assert found == {integrity / "writer.py", integrity / "journal.py", run, run / "campaign.py",
                     run / "kinds"}  # fmt: skip
    assert "events/journal.py" in unnamed(doc) and "integrity/journal.py" not in unnamed(doc)
    page = DOC.read_text()
    assert unnamed(page.replace("`targets/queue.py`", "the queue module")) == ["targets/queue.py"]


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
    doc = "`run/point/pipeline.py` `run_point` and `run/point/pipeline.py`, `no_such_function`"
    assert FILE_THEN_NAME.findall(doc) == [("run/point/pipeline.py", "run_point")]
    assert misnamed(doc) == []
    doc = "`run/point/pipeline.py` `run_point`, `run/fleet.py` `Fleet.go`, `run/nothing.py` `x`"
    assert misnamed(doc) == ["`run/fleet.py` `Fleet.go`: no go", "`run/nothing.py` `x`: no x"]


BARE_PATH = re.compile(r"(?<![\w/.`-])((?:[\w-]+/)+[\w.-]+\.(?:py|md))(?![\w/])")


def _docstring_path(text: str, module: Path, pkgs: set[str]) -> Path | None:
    """Where a path a module's docstring names is: beside the module or in a package above
    it (`render/formats.py` in report/), else from the top (`engines/fio/results.py`, `docs/x.md`);
    None for what names no file of ours (`points/NNN-key/point.fio`, a run's `warmup/`)."""
    text = text.rstrip(".,;:")
    if not PATHLIKE.match(text) or "/" not in text.rstrip("/"):
        return None if not text.endswith(".py") else resolve(text, pkgs, module.parent)
    first = text.split("/", 1)[0]
    if first in ROOT_FOLDERS or text.endswith(".md"):
        return ROOT / text
    if not text.endswith(".py") and first not in pkgs:
        return None
    for folder in [module.parent, *module.parent.parents]:
        if (folder / text).exists() or folder == PACKAGE:
            return folder / text
    return PACKAGE / text


def docstring_paths(source: str, module: Path) -> dict[str, Path]:
    """Each path a module's docstring names (in backticks, or a bare `x/y.py` or `docs/x.md`)
    -> where it resolves."""
    doc = ast.get_docstring(ast.parse(source)) or ""
    spans = set(SPAN.findall(doc)) | set(BARE_PATH.findall(doc))
    pkgs, found = packages(), {}
    for span in spans:
        path = _docstring_path(span, module, pkgs)
        if path is not None:
            found[span] = path
    return found


def test_every_path_a_module_docstring_names_exists():
    """A module's docstring that points to a moved or renamed file fails here."""
    missing = []
    for module in sorted(PACKAGE.rglob("*.py")):
        for span, path in docstring_paths(module.read_text(), module).items():
            if not path.exists():
                missing.append(f"{module.relative_to(PACKAGE)}: {span}")
    assert not missing, "module docstrings name missing files:\n" + "\n".join(missing)


def test_the_docstring_check_resolves_beside_the_module_and_from_the_top():
    show = PACKAGE / "report" / "show.py"
    source = '"""`render/formats.py`, `report/seedfigures.py`, docs/engines.md, `warmup/`."""'
    found = docstring_paths(source, show)
    assert found["render/formats.py"] == PACKAGE / "report" / "render" / "formats.py"
    assert not found["report/seedfigures.py"].exists() and "warmup/" not in found
    assert found["docs/engines.md"] == ROOT / "docs" / "engines.md"


MAX_DOCSTRING_LINES = 15  # the why at length goes to docs/


def test_no_module_docstring_is_an_essay():
    long = []
    for module in sorted(PACKAGE.rglob("*.py")):
        doc = ast.get_docstring(ast.parse(module.read_text()), clean=False) or ""
        if len(doc.strip().splitlines()) > MAX_DOCSTRING_LINES:
            long.append(f"{module.relative_to(PACKAGE)} ({len(doc.strip().splitlines())} lines)")
    assert not long, f"module docstrings over {MAX_DOCSTRING_LINES} lines: " + ", ".join(long)


# Comments and every docstring (a class's, a function's, not only the module's) name paths
# and dotted module names too; a module moved or renamed leaves them pointing to nothing.
DOTTED = re.compile(r"(?<![\w./-])([a-z_]\w*(?:\.[A-Za-z_]\w*)+)")
# a dotted word ending so is a file's name (`run.py`, `plan.yaml`, `arraybench.db`, report.FMT
# for report.html, report.pdf, ...), not a module
FILE_ENDINGS = {"py", "md", "yaml", "yml", "json", "db", "sql", "fio", "log", "csv", "html",
                "txt", "slice", "FMT"}  # fmt: skip


def prose(source: str) -> list[str]:
    """Every docstring and comment of a module's source."""
    tree = ast.parse(source)
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docs = [ast.get_docstring(node) or "" for node in ast.walk(tree) if isinstance(node, kinds)]
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [d for d in docs if d] + [t.string for t in tokens if t.type == tokenize.COMMENT]


def _plan_key(parts: list[str]) -> bool:
    """`report.headline_includes_flagged`: a key of the plan, not a module."""
    from arraybench.plan.model import Plan

    model: Any = Plan
    for part in parts:
        fields = getattr(model, "model_fields", {})
        if part not in fields:
            return False
        model = fields[part].annotation
    return True


def dotted_target_missing(name: str, pkgs: set[str]) -> bool:
    """True when a dotted name of our package (`arraybench.store.db`, `store.db.Store`,
    `analysis.curves.maximum`) names a module that is not there, or a name its module lacks.
    Names that are no module path of ours (`os.path`, `fio.json`, a plan key) are never
    missing."""
    parts = name.split(".")
    if parts[0] == "arraybench":
        parts = parts[1:]
    elif parts[0] not in pkgs or _plan_key(parts):
        return False
    if parts[-1] in FILE_ENDINGS:
        return False
    folder = PACKAGE
    for i, part in enumerate(parts):
        if (folder / part / "__init__.py").exists():
            folder = folder / part
            continue
        module = folder / f"{part}.py"
        if module.exists():
            source = module.read_text()
            return not all(re.search(rf"\b{re.escape(n)}\b", source) for n in parts[i + 1 :])
        # a name the package itself holds (its __init__), else a module that is not there
        return not re.search(rf"\b{re.escape(part)}\b", (folder / "__init__.py").read_text())
    return False


BARE_MODULE = re.compile(r"(?<![\w/.-])(\w+\.py)\b")
OTHERS_FILES = {"fiologparser_hist.py"}  # fio's own tools, named where arraybench reads alike


@functools.cache
def python_files() -> frozenset[str]:
    """The names of the repository's Python files (src, tests, benchmarks, scripts)."""
    folders = [ROOT / f for f in ("src", "tests", "benchmarks", "scripts")]
    return frozenset(p.name for folder in folders for p in folder.rglob("*.py"))


def prose_misnamed(source: str, module: Path) -> list[str]:
    """The paths, bare module names (`timechart.py`) and dotted module names a module's
    comments and docstrings name that are not there."""
    pkgs, wrong = packages(), []
    for text in prose(source):
        bare = set(BARE_MODULE.findall(text)) - OTHERS_FILES
        wrong += [name for name in bare if name not in python_files()]
        for span in set(SPAN.findall(text)) | set(BARE_PATH.findall(text)):
            path = _docstring_path(span, module, pkgs)
            if path is not None and not path.exists():
                wrong.append(span)
        wrong += [d for d in set(DOTTED.findall(text)) if dotted_target_missing(d, pkgs)]
    return sorted(set(wrong))


def test_every_path_and_module_a_comment_or_docstring_names_exists():
    """Comments and docstrings of src/ and benchmarks/ point to files and modules that exist:
    a moved module's old name (`store.records`, `report/headlines.py`) fails here."""
    wrong = []
    for module in sorted([*PACKAGE.rglob("*.py"), *(ROOT / "benchmarks").glob("*.py")]):
        names = prose_misnamed(module.read_text(), module)
        wrong += [f"{module.relative_to(ROOT)}: {name}" for name in names]
    assert not wrong, "comments and docstrings name missing files or modules:\n" + "\n".join(wrong)


def test_the_prose_check_catches_moved_modules_and_spares_other_words():
    module = PACKAGE / "report" / "show.py"
    source = (
        '"""Reads `store.records` (moved), store.findings.KINDS, arraybench.store.db.Store."""\n'
        "def f() -> None:\n"
        '    """As report/headlines.py does; `sections/summary.py` is beside it."""\n'
        "    # report.headline_includes_flagged (a plan key), run.py, arraybench.db, os.path\n"
        "    # analysis.curves.maximum, store.db.Store.add_finding, arraybench.records.Finding\n"
        "    # store.db.NoSuchName; timechart.py is there, seedfigures2.py is not\n"
    )
    assert prose_misnamed(source, module) == [
        "report/headlines.py", "seedfigures2.py", "store.db.NoSuchName", "store.findings.KINDS",
        "store.records",
    ]  # fmt: skip
