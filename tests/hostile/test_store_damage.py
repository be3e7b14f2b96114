"""A store a user (or a crash, or another tool) damaged: rows edited with sqlite3 so that a
column holds what it should not (labels that are not JSON, a block size as text, findings
that are not JSON, NULL where a value belongs, a blob). `runs` lists every run, the damaged
one marked; `show` and `report` of a damaged run end with one line naming the run, the point
or finding and the column, exit 1; an intact run of the same store is still shown."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.store.db import DB_NAME
from tests.conftest import DATA, main_cli

SAMPLE = DATA / "09_fioplot_fio3.1_json_ns_keys_randread.json"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with two imported runs (imports need no fio): `a` to damage, `b` kept."""
    results = tmp_path_factory.mktemp("store") / "res"
    for name in ("a", "b"):
        done = main_cli("import", str(SAMPLE), "--name", name, "--results", str(results))
        assert done.returncode == 0, done.stderr
    return results


@pytest.fixture
def results(pristine: Path, tmp_path: Path) -> Iterator[Path]:
    copy = tmp_path / "res"
    copy.mkdir()
    with (
        contextlib.closing(sqlite3.connect(pristine / DB_NAME)) as src,
        contextlib.closing(sqlite3.connect(copy / DB_NAME)) as dst,
    ):
        src.backup(dst)
    yield copy


def _ids(results: Path) -> tuple[str, str]:
    with contextlib.closing(sqlite3.connect(results / DB_NAME)) as db:
        rows = db.execute("SELECT id, plan_name FROM runs ORDER BY plan_name").fetchall()
    return rows[0][0], rows[1][0]


def _edit(results: Path, *statements: str) -> None:
    with contextlib.closing(sqlite3.connect(results / DB_NAME)) as db:
        db.executescript(";\n".join(statements))


def _no_constraints(table: str) -> list[str]:
    """What a user does to put NULL where NOT NULL stood: the table rebuilt without them."""
    return [f"CREATE TABLE loose AS SELECT * FROM {table}", f"DROP TABLE {table}",
            f"ALTER TABLE loose RENAME TO {table}"]  # fmt: skip


def _fails_in_one_line(results: Path, *argv: str, naming: tuple[str, ...]) -> str:
    done = main_cli(*argv, "--results", str(results))
    assert "Traceback" not in done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: "), done
    for word in naming:
        assert word in lines[0], (word, lines[0])
    return lines[0]


RUN_DAMAGE = [
    ("labels_json", "UPDATE runs SET labels_json = '{{not json' WHERE id = '{run}'"),
    ("targets_json", "UPDATE runs SET targets_json = '[1, 2]' WHERE id = '{run}'"),
    ("labels_json", "UPDATE runs SET labels_json = 'null' WHERE id = '{run}'"),
    ("scale", "UPDATE runs SET scale = 'big' WHERE id = '{run}'"),
    ("total_points", "UPDATE runs SET total_points = x'00ff' WHERE id = '{run}'"),
]


@pytest.mark.parametrize(("column", "statement"), RUN_DAMAGE)
def test_a_damaged_run_is_listed_marked_and_refused_by_show_and_report(
    results: Path, column: str, statement: str
) -> None:
    damaged, intact = _ids(results)
    _edit(results, statement.format(run=damaged))
    listed = main_cli("runs", "--results", str(results))
    assert listed.returncode == 0 and "Traceback" not in listed.stderr
    assert damaged in listed.stdout and intact in listed.stdout and "(damaged)" in listed.stdout
    assert f"run {damaged}: stored {column} cannot be read" in listed.stderr
    as_json = main_cli("runs", "--format", "json", "--results", str(results))
    assert as_json.returncode == 0 and f'"{column}"' in as_json.stdout
    for command in ("show", "report"):
        _fails_in_one_line(results, command, damaged, naming=(damaged, column))
    assert main_cli("show", intact, "--results", str(results)).returncode == 0


POINT_DAMAGE = [
    ("bs", "UPDATE points SET bs = 'eight k' WHERE run_id = '{run}'"),
    ("workers", "UPDATE points SET workers = 2.5 WHERE run_id = '{run}'"),
    ("total_iops", "UPDATE points SET total_iops = 'fast' WHERE run_id = '{run}'"),
    ("labels_json", "UPDATE points SET labels_json = '{{' WHERE run_id = '{run}'"),
    ("runtime_s", *_no_constraints("points"), "UPDATE points SET runtime_s = NULL"),
    ("key", *_no_constraints("points"), "UPDATE points SET key = NULL"),
]


@pytest.mark.parametrize("damage", POINT_DAMAGE, ids=[d[0] for d in POINT_DAMAGE])
def test_a_damaged_point_ends_show_and_report_with_a_line_naming_it(
    results: Path, damage: tuple[str, ...]
) -> None:
    column, *statements = damage
    damaged, _ = _ids(results)
    _edit(results, *(s.format(run=damaged) for s in statements))
    assert main_cli("runs", "--results", str(results)).returncode == 0
    for command in ("show", "report"):
        line = _fails_in_one_line(results, command, damaged, naming=(damaged, column, "point"))
        assert "sqlite3" in line  # the hint: what to do about it


def test_findings_that_are_not_json_are_named(results: Path) -> None:
    damaged, intact = _ids(results)
    _edit(results, f"UPDATE findings SET data_json = 'garbage' WHERE run_id = '{damaged}'")
    _fails_in_one_line(results, "report", damaged, naming=(damaged, "finding", "data_json"))
    assert main_cli("show", damaged, "--results", str(results)).returncode == 0  # not read
    _edit(results, f"UPDATE findings SET data_json = '[1]' WHERE run_id = '{intact}'")
    _fails_in_one_line(results, "report", intact, naming=("finding", "not a JSON object"))


def test_samples_with_text_values_are_named(results: Path) -> None:
    damaged, _ = _ids(results)
    _edit(results, "INSERT INTO samples SELECT id, 1, 'lots', 1, 1, 1, 1, 1 FROM points "
                   f"WHERE run_id = '{damaged}'")  # fmt: skip
    _fails_in_one_line(results, "report", damaged, naming=("sample", "'lots'"))
