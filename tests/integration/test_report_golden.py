"""A report of a fixed store is the same before and after a restructuring of report/.

The store is rebuilt from committed data, never from a new fio run (fio's timing would make
every figure differ): a real campaign's store (24 points: two scenarios, two workloads, a
repeated level, a fabric ceiling, acceptance criteria; `tests/data/golden/store`, its SQL
dump at schema 5 with `@ROOT@` for the folder it lived in, and each point's `fio.json` and
`point.fio`), plus two committed fio outputs imported with `arraybench import`. Its run
report, an import's report and a compare of the two scenarios are rendered as HTML, Markdown,
CSV and XLSX (every sheet's cell values) and compared with tests/data/golden/*, with the
folder, the import's run id, times and duration and arraybench's version masked.

The goldens were generated from the base code (moves26) before report/ was restructured.
After a deliberate change of a report, regenerate them with
`ARRAYBENCH_GOLDEN_UPDATE=1 pytest tests/integration/test_report_golden.py` and review the
diff: every changed line is a change a user sees.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from openpyxl import load_workbook

from arraybench import __version__
from arraybench.run.reportable import keep_for_report
from arraybench.store.db import Store
from tests.conftest import DATA, main_cli

GOLDEN = DATA / "golden"
FIXED_RUN = "20261127-014610-golden"
IMPORTED = [
    "fresh_fio3.33_jsonplus_randrw_2jobs.json",  # json+ bins: percentiles from histograms
    "20_fioplot_fio3.16_json_randread.json",
]
FORMATS = ("html", "md", "csv", "xlsx")
UPDATE = os.environ.get("ARRAYBENCH_GOLDEN_UPDATE") == "1"


def build_store(root: Path) -> Path:
    """The fixed store under `root` (its results folder returned): the committed run's rows
    and files with `@ROOT@` made `root`, at the schema version its dump was taken at."""
    results = root / "res"
    shutil.copytree(GOLDEN / "store", results)
    for path in results.rglob("*"):
        if path.is_file() and path.suffix in (".sql", ".yaml", ".fio"):
            path.write_text(path.read_text().replace("@ROOT@", str(root)))
    dump = results / "arraybench.sql"
    db = sqlite3.connect(results / "arraybench.db")
    db.executescript(dump.read_text())
    db.execute("PRAGMA user_version=5")  # the dump was taken of a store at migration 5
    db.commit()
    db.close()
    dump.unlink()
    return results


def import_run(root: Path, results: Path) -> str:
    sources = root / "sources"
    sources.mkdir()
    for name in IMPORTED:
        shutil.copy(DATA / name, sources / name)
    done = main_cli("import", str(sources), "--name", "imported", "--results", str(results))
    assert done.returncode == 0, done.stderr
    store = Store(results, create=False)
    (imported,) = [run.id for run, _ in store.list_runs() if run.id != FIXED_RUN]
    store.close()
    return imported


def xlsx_cells(path: Path) -> str:
    """Every sheet's non-empty cells, one `sheet!A1<TAB>value` a line."""
    book = load_workbook(path)
    lines = []
    for sheet in book.worksheets:
        for row in sheet.iter_rows():
            lines += [f"{sheet.title}!{c.coordinate}\t{c.value!r}" for c in row
                      if c.value is not None]  # fmt: skip
    return "\n".join(lines) + "\n"


def masked(text: str, root: Path, volatile: dict[str, str]) -> str:
    for value, mask in volatile.items():
        text = text.replace(value, mask)
    text = text.replace(str(root), "<ROOT>").replace(str(root).replace("_", "\\_"), "<ROOT>")
    # an import's duration: from its files' own times to the minute it was imported
    text = re.sub(r"\(\d+ h \d+ min\)", "(<DURATION>)", text)
    # the charts' clip-path ids count up over the process (report/interact.py): renumbered
    # in the order they appear, so a report rendered after others reads the same
    ids: dict[str, str] = {}
    text = re.sub(r"plotclip\d+", lambda m: ids.setdefault(m[0], f"plotclip{len(ids) + 1}"), text)
    text = text.replace(f"arraybench {__version__}", "arraybench <VERSION>")
    text = re.sub(r"(arraybench['\",\s:|<>/a-z=]{1,40})" + re.escape(__version__),
                  r"\1<VERSION>", text)  # fmt: skip
    return text


def rendered(args: list[str], out: Path, fmt: str) -> str:
    path = out.with_suffix(f".{fmt}")
    done = main_cli(*args, "-o", str(path))
    assert done.returncode in (0, 3), done.stderr  # 3: an acceptance criterion failed
    return xlsx_cells(path) if fmt == "xlsx" else path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("golden")
    results = build_store(root)
    imported = import_run(root, results)
    store = Store(results, create=False)
    run = store.get_run(imported)
    store.close()
    volatile = {imported: "<IMPORTED-RUN>", run.started: "<STARTED>"}
    if run.finished:
        volatile[run.finished] = "<FINISHED>"
    return root, results, volatile


def reports(results: Path) -> dict[str, list[str]]:
    """Each report's name -> its CLI arguments (all but -o)."""
    res = ["--results", str(results)]
    store = Store(results, create=False)
    (imported,) = [run.id for run, _ in store.list_runs() if run.id != FIXED_RUN]
    store.close()
    return {
        "run": ["report", FIXED_RUN, *res],
        "imported": ["report", imported, *res],
        "compare": ["compare", f"{FIXED_RUN}:A", f"{FIXED_RUN}:B", *res],
    }


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["run", "imported", "compare"])
def test_a_fixed_store_reports_as_its_golden(
    fixed: tuple[Path, Path, dict[str, str]], name: str, fmt: str
) -> None:
    root, results, volatile = fixed
    out = root / "out" / name
    out.parent.mkdir(exist_ok=True)
    text = masked(rendered(reports(results)[name], out, fmt), root, volatile)
    golden = GOLDEN / f"{name}.{fmt}.txt"
    if UPDATE:
        golden.write_text(text, encoding="utf-8")
    assert golden.exists(), f"no golden {golden.name}: run with ARRAYBENCH_GOLDEN_UPDATE=1"
    expected = golden.read_text(encoding="utf-8")
    if text != expected:  # the first differing line, not a wall of text
        pairs = zip(text.splitlines(), expected.splitlines(), strict=False)
        for n, (got, want) in enumerate(pairs, 1):
            assert got == want, f"{golden.name} line {n}:\n got  {got[:300]}\n want {want[:300]}"
        assert text == expected, f"{golden.name}: length differs"


@pytest.mark.parametrize("fmt", ["html", "md", "xlsx"])
@pytest.mark.parametrize("name", ["run", "compare"])
def test_files_stored_at_run_time_report_as_the_folders_did(
    tmp_path_factory: pytest.TempPathFactory, name: str, fmt: str
) -> None:
    """A store with each point's latency bins and job files stored (what a run stores now)
    and no fio.json or point.fio left reports as the old store that read them did."""
    tmp_path = tmp_path_factory.mktemp("golden")
    results = build_store(tmp_path)
    store = Store(results, create=False)  # migrated: its tables of report files are empty
    for point in store.points(FIXED_RUN):
        keep_for_report(store, point.id, Path(point.folder))  # as a point on many hosts
        (Path(point.folder) / "fio.json").unlink()
        (Path(point.folder) / "point.fio").unlink()
    store.close()
    res = ["--results", str(results)]
    args = {"run": ["report", FIXED_RUN, *res],
            "compare": ["compare", f"{FIXED_RUN}:A", f"{FIXED_RUN}:B", *res]}[name]  # fmt: skip
    text = masked(rendered(args, tmp_path / "out" / name, fmt), tmp_path, {})
    assert text == (GOLDEN / f"{name}.{fmt}.txt").read_text(encoding="utf-8")


def test_a_run_report_reads_its_stored_plan_once(
    fixed: tuple[Path, Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every section reads the one parsed plan (RunInputs.plan): none asks for it again."""
    from arraybench.plan import load
    from arraybench.report.assemble import report_for_run

    asked: list[str] = []
    real = load.stored_plan

    def counted(text: str, source: str):  # type: ignore[no-untyped-def]
        asked.append(source)
        return real(text, source)

    monkeypatch.setattr(load, "stored_plan", counted)
    store = Store(fixed[1], create=False)
    model = report_for_run(store, FIXED_RUN)
    store.close()
    assert model.verdicts and model.overlays  # the plan's acceptance and chart keys were read
    assert len(asked) == 1, asked
