"""One run's rows, out of a store and into another one, as plain data (a bundle's
`store/run.json`, docs/bundle.md): every table's rows of that run, by column name.

Rows read from a bundle are hostile input until checked: a table or a column this store does
not have is refused (so no name from the file ever reaches SQL text), a value must be text, a
whole number, a finite float or null, every row must belong to the run, and the point ids are
renumbered here (a child row naming a point the bundle does not hold is refused). The
injection journal is carried as evidence but never imported: `arraybench revert` on the
importing machine must not act on another machine's injections.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arraybench.errors import ArraybenchError, StoreError
from arraybench.store.db import Store

RUN_TABLES = ("runs", "findings", "injections")  # rows with a run_id (runs: its id)
POINT_TABLES = ("samples", "host_samples", "cpu_samples", "latency_bins", "job_files")
NOT_IMPORTED = ("injections",)  # evidence only: see the module's docstring
Value = str | int | float | None


class RowsRefused(ArraybenchError):
    """A bundle's rows that this store cannot take: one line, exit 2, nothing stored."""


@dataclass(frozen=True)
class RunRows:
    schema: int  # the store's schema version the rows were read under
    tables: dict[str, tuple[list[str], list[list[Value]]]]  # table -> (columns, rows)

    def as_data(self) -> dict[str, Any]:
        return {"schema": self.schema, "tables": {
            name: {"columns": cols, "rows": rows} for name, (cols, rows) in self.tables.items()
        }}  # fmt: skip


def _columns(store: Store, table: str) -> list[str]:
    return [str(r["name"]) for r in store._db.execute(f"PRAGMA table_info({table})")]


def run_rows(store: Store, run_id: str) -> RunRows:
    """Every row of `run_id`, table by table, in a stable order (a bundle made twice of one
    run holds the same rows)."""
    tables: dict[str, tuple[list[str], list[list[Value]]]] = {}
    for table in ("runs", "points", *RUN_TABLES[1:], *POINT_TABLES):
        cols = _columns(store, table)
        if table == "runs":
            where = "id = ?"
        elif table in ("points", *RUN_TABLES):
            where = "run_id = ?"
        else:
            where = "point_id IN (SELECT id FROM points WHERE run_id = ?)"
        rows = store._db.execute(
            f"SELECT * FROM {table} WHERE {where} ORDER BY rowid", (run_id,)
        ).fetchall()
        tables[table] = (cols, [list(r) for r in rows])
    return RunRows(store.schema_version, tables)


def parse_rows(data: object, where: str) -> RunRows:
    """`store/run.json` read back: its shape checked, values plain (no nested data)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("tables"), Mapping):
        raise RowsRefused(f"{where}: not a run's rows (no `tables` object)")
    schema = data.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise RowsRefused(f"{where}: `schema` is not a whole number")
    tables: dict[str, tuple[list[str], list[list[Value]]]] = {}
    for name, table in data["tables"].items():
        if not isinstance(table, Mapping):
            raise RowsRefused(f"{where}: table {name!r} is not an object")
        cols, rows = table.get("columns"), table.get("rows")
        if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols):
            raise RowsRefused(f"{where}: table {name!r}: `columns` is not a list of names")
        if not isinstance(rows, list):
            raise RowsRefused(f"{where}: table {name!r}: `rows` is not a list")
        for n, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != len(cols):
                raise RowsRefused(f"{where}: table {name!r} row {n}: not {len(cols)} values")
            bad = [v for v in row if not _plain(v)]
            if bad:
                raise RowsRefused(f"{where}: table {name!r} row {n}: value {bad[0]!r:.60} is "
                                  "not text, a number or null")  # fmt: skip
        tables[str(name)] = (list(cols), rows)
    return RunRows(schema, tables)


def _plain(value: object) -> bool:
    if value is None or isinstance(value, str):
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) < 2**63
    return isinstance(value, float) and math.isfinite(value)


def add_run_rows(store: Store, rows: RunRows, run_id: str) -> int:
    """The bundle's rows of `run_id` stored as one transaction; the points stored. A run
    already in this store is refused (the same id: the same run)."""
    if rows.schema > store.schema_version:
        raise RowsRefused(f"the bundle's rows were written under store schema {rows.schema}, "
                          f"this arraybench knows {store.schema_version}",
                          "import it with a newer arraybench")  # fmt: skip
    _check_tables(store, rows)
    run_cols, run_rows_ = rows.tables["runs"]
    if len(run_rows_) != 1 or dict(zip(run_cols, run_rows_[0], strict=True)).get("id") != run_id:
        raise RowsRefused(f"the bundle's rows do not hold exactly one run {run_id!r}")
    if store._db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
        raise StoreError(f"run {run_id} is already in {store.path}",
                         "import it into another results folder (--results DIR)")  # fmt: skip
    ids: dict[object, int] = {}
    try:
        with store.atomic():
            _insert(store, "runs", run_cols, run_rows_)
            cols, points = rows.tables.get("points", ([], []))
            for row in points:
                values = dict(zip(cols, row, strict=True))
                old = values.pop("id", None)
                if values.get("run_id") != run_id or old in ids:
                    raise RowsRefused(f"a point row of the bundle is not of run {run_id} or "
                                      f"repeats point id {old!r}")  # fmt: skip
                ids[old] = _insert(store, "points", list(values), [list(values.values())])
            for table in (*RUN_TABLES[1:], *POINT_TABLES):
                if table not in NOT_IMPORTED:
                    found = rows.tables.get(table, ([], []))
                    _insert_children(store, table, *found, run_id, ids)
    except sqlite3.IntegrityError as exc:  # a value the schema refuses: the bundle's fault
        raise RowsRefused(f"the bundle's rows break the store's rules ({exc})") from None
    return len(ids)


def _check_tables(store: Store, rows: RunRows) -> None:
    known = ("runs", "points", *RUN_TABLES[1:], *POINT_TABLES)
    for name, (cols, _) in rows.tables.items():
        if name not in known:
            raise RowsRefused(f"the bundle's rows name table {name!r}, which a store has not")
        if unknown := sorted(set(cols) - set(_columns(store, name))):
            why = f"the bundle's table {name!r} has column {unknown[0]!r}, which this store has not"
            raise RowsRefused(why, "import it with a newer arraybench")
        if len(set(cols)) != len(cols):
            raise RowsRefused(f"the bundle's table {name!r} names a column twice")
    if "runs" not in rows.tables:
        raise RowsRefused("the bundle's rows hold no `runs` table")


def _insert_children(
    store: Store, table: str, cols: list[str], rows: list[list[Value]], run_id: str,
    ids: Mapping[object, int],
) -> None:  # fmt: skip
    kept: list[list[Value]] = []
    for row in rows:
        values = dict(zip(cols, row, strict=True))
        values.pop("id", None)  # findings' own ids: renumbered by the store
        if "run_id" in values and values["run_id"] != run_id:
            raise RowsRefused(f"a row of table {table!r} in the bundle is not of run {run_id}")
        if "point_id" in values and values["point_id"] is not None:
            if values["point_id"] not in ids:
                raise RowsRefused(f"a row of table {table!r} in the bundle names point id "
                                  f"{values['point_id']!r}, which the bundle has not")  # fmt: skip
            values["point_id"] = ids[values["point_id"]]
        kept.append(list(values.values()))
    names = [c for c in cols if c != "id"]
    if kept:
        marks = ", ".join("?" * len(names))
        store._db.executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})", kept)


def _insert(store: Store, table: str, cols: list[str], rows: list[list[Value]]) -> int:
    """Rows into `table`; `cols` were checked against the store's own columns. The last
    row's id."""
    marks = ", ".join("?" * len(cols))
    sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})"
    last = 0
    for row in rows:
        last = int(store._db.execute(sql, row).lastrowid or 0)
    return last
