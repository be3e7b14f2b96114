"""One run's rows, out of a store and into another one, as JSON Lines (a bundle's
`rows.jsonl` in its `store/`, docs/bundle.md): a first line naming the store's schema version
and each table's columns, then one line per row, `[TABLE, [VALUE, ...]]`, a run's rows before its
points' and the points' before the rows that name them. Both ways go a row at a time: a long
many-host run (a million host samples) is never held whole in memory.

Rows read from a bundle are hostile input until checked: a table or a column this store does
not have is refused (so no name from the file ever reaches SQL text), a value must be text, a
whole number, a finite float or null, every row must belong to the run, and the point ids are
renumbered here (a row naming a point the bundle has not given before is refused). The
injection journal is carried as evidence but never imported: `arraybench revert` on the
importing machine must not act on another machine's injections.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from arraybench.errors import ArraybenchError, StoreError
from arraybench.store.db import Store

RUN_TABLES = ("runs", "points", "findings", "injections")  # by run id, in this order
POINT_TABLES = ("samples", "host_samples", "cpu_samples", "latency_bins", "job_files")
TABLES = (*RUN_TABLES, *POINT_TABLES)
NOT_IMPORTED = ("injections",)  # evidence only: see the module's docstring
MAX_LINE_BYTES = 64 << 20  # one row (a job file's text is the longest value)
BATCH = 5000  # rows inserted at once
# in the folder of a run imported from a bundle: where it came from. A run so marked is
# evidence: `run --resume` refuses it (its plan would drive this machine's targets, and its
# folder's leftovers name another machine's processes)
IMPORTED_MARK = "imported-bundle.json"
Value = str | int | float | None
# columns a migration renamed, by the migration's number: a bundle's rows written under an
# older schema name them as they were, and are read under the names they have now
RENAMED: dict[int, dict[str, dict[str, str]]] = {
    8: {t: {"fio_version": "engine_version"} for t in ("runs", "points")},  # before migration 8
}


class RowsRefused(ArraybenchError):
    """A bundle's rows that this store cannot take: one line, exit 2, nothing stored."""


def columns(store: Store, table: str) -> list[str]:
    return [str(r["name"]) for r in store._db.execute(f"PRAGMA table_info({table})")]


def _where(table: str) -> str:
    if table == "runs":
        return "id = ?"
    if table in RUN_TABLES:
        return "run_id = ?"
    return "point_id IN (SELECT id FROM points WHERE run_id = ?)"


def run_lines(store: Store, run_id: str) -> Iterator[bytes]:
    """`run_id`'s rows as JSON Lines, in a stable order (a bundle made twice of one run holds
    the same rows)."""
    named = {table: columns(store, table) for table in TABLES}
    yield _line({"schema": store.schema_version, "run_id": run_id, "columns": named})
    held: list[str] = []
    size = 0
    for table, row in table_rows(store, run_id, TABLES):
        held.append(_ENCODE([table, row]))
        size += len(held[-1])
        if size > CHUNK_CHARS:  # a million rows written one by one: a million compress calls
            yield ("\n".join(held) + "\n").encode()
            held, size = [], 0
    if held:
        yield ("\n".join(held) + "\n").encode()


def table_rows(
    store: Store, run_id: str, tables: Iterable[str]
) -> Iterator[tuple[str, list[Value]]]:
    """Each row of `tables` (names of TABLES) of the run, read a batch at a time."""
    for table in tables:
        assert table in TABLES  # a name that reaches SQL text: only ours
        cursor = store._db.execute(
            f"SELECT * FROM {table} WHERE {_where(table)} ORDER BY rowid", (run_id,)
        )
        while batch := cursor.fetchmany(BATCH):
            for row in batch:
                yield table, list(row)


_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
CHUNK_CHARS = 1 << 20


def _line(data: object) -> bytes:
    return _ENCODE(data).encode() + b"\n"


def _plain(value: object) -> bool:
    if value is None or isinstance(value, str):
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) < 2**63
    return isinstance(value, float) and math.isfinite(value)


@dataclass
class _Loading:
    """What a bundle's rows have given so far."""

    run_id: str
    columns: dict[str, list[str]]
    points: dict[object, int] = field(default_factory=dict)  # the bundle's id -> this store's
    runs: int = 0
    pending: dict[str, list[list[Value]]] = field(default_factory=dict)


def add_run_lines(store: Store, lines: Iterable[bytes], run_id: str) -> int:
    """The bundle's rows of `run_id` stored as one transaction (RowsRefused, or whatever
    `lines` raises, stores nothing); the number of points stored."""
    if store._db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
        raise StoreError(f"run {run_id} is already in {store.path}",
                         "import it into another results folder (--results DIR)")  # fmt: skip
    try:
        with store.atomic():
            loading: _Loading | None = None
            for n, raw in enumerate(lines, 1):
                data = _parsed(raw, n)
                if loading is None:
                    loading = _header(store, data, run_id)
                else:
                    _row(store, loading, data, n)
            if loading is None or loading.runs != 1:
                raise RowsRefused(f"the bundle's rows do not hold run {run_id}")
            _flush(store, loading)
            return len(loading.points)
    except sqlite3.IntegrityError as exc:  # a value the schema refuses: the bundle's fault
        raise RowsRefused(f"the bundle's rows break the store's rules ({exc})") from None


def _parsed(raw: bytes, n: int) -> object:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise RowsRefused(f"the bundle's rows, line {n}: not JSON ({exc})") from None


def _header(store: Store, data: object, run_id: str) -> _Loading:
    if not isinstance(data, dict) or not isinstance(data.get("columns"), dict):
        raise RowsRefused("the bundle's rows: the first line names no columns")
    schema = data.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise RowsRefused("the bundle's rows: `schema` is not a whole number")
    if schema > store.schema_version:
        raise RowsRefused(f"the bundle's rows were written under store schema {schema}, "
                          f"this arraybench knows {store.schema_version}",
                          "import it with a newer arraybench")  # fmt: skip
    named: dict[str, list[str]] = {}
    for table, cols in data["columns"].items():
        if table not in TABLES:
            raise RowsRefused(f"the bundle's rows name table {table!r}, which a store has not")
        if not isinstance(cols, list) or len(set(map(str, cols))) != len(cols):
            raise RowsRefused(f"the bundle's table {table!r}: columns not a list of names")
        cols = [_renamed(str(c), table, schema) for c in cols]
        if unknown := sorted(set(map(str, cols)) - set(columns(store, table))):
            why = f"the bundle's table {table!r} has column {unknown[0]!r}: this store has not"
            raise RowsRefused(why, "import it with a newer arraybench")
        named[table] = [str(c) for c in cols]
    return _Loading(run_id, named)


def _renamed(column: str, table: str, schema: int) -> str:
    """A column of a bundle written under `schema`, by the name this store gives it now."""
    for number in sorted(n for n in RENAMED if n > schema):
        column = RENAMED[number].get(table, {}).get(column, column)
    return column


def _row(store: Store, loading: _Loading, data: object, n: int) -> None:
    where = f"the bundle's rows, line {n}"
    if not (isinstance(data, list) and len(data) == 2 and isinstance(data[1], list)):
        raise RowsRefused(f"{where}: not [TABLE, [VALUES]]")
    table, row = data
    cols = loading.columns.get(table) if isinstance(table, str) else None
    if cols is None or len(row) != len(cols):
        raise RowsRefused(f"{where}: table {table!r:.60} not named first, or not its columns")
    bad = [v for v in row if not _plain(v)]
    if bad:
        raise RowsRefused(f"{where}: value {bad[0]!r:.60} is not text, a number or null")
    values = dict(zip(cols, row, strict=True))
    if table in NOT_IMPORTED:
        return
    if values.get("run_id", loading.run_id) != loading.run_id:
        raise RowsRefused(f"{where}: a row of another run")
    if table == "runs":
        if values.get("id") != loading.run_id or loading.runs:
            raise RowsRefused(f"{where}: not the one row of run {loading.run_id}")
        loading.runs += 1
        _insert(store, table, values)
        return
    if table == "points":
        old = values.pop("id", None)
        if old in loading.points or loading.pending:
            raise RowsRefused(f"{where}: point id {old!r} again, or a point after its rows")
        loading.points[old] = _insert(store, table, values)
        return
    values.pop("id", None)  # findings' own ids: renumbered by the store
    if values.get("point_id") is not None:
        if values["point_id"] not in loading.points:
            raise RowsRefused(f"{where}: point id {values['point_id']!r} was not given before")
        values["point_id"] = loading.points[values["point_id"]]
    key = f"{table}\0{','.join(values)}"
    loading.pending.setdefault(key, []).append(list(values.values()))
    if len(loading.pending[key]) >= BATCH:
        _flush(store, loading)


def _insert(store: Store, table: str, values: dict[str, Value]) -> int:
    """One row; its keys were checked against the store's own columns. Its id."""
    cols = ", ".join(values)
    marks = ", ".join("?" * len(values))
    sql = f"INSERT INTO {table} ({cols}) VALUES ({marks})"
    return int(store._db.execute(sql, list(values.values())).lastrowid or 0)


def _flush(store: Store, loading: _Loading) -> None:
    for key, rows in loading.pending.items():
        table, cols = key.split("\0")
        marks = ", ".join("?" * len(rows[0]))
        store._db.executemany(f"INSERT INTO {table} ({cols}) VALUES ({marks})", rows)
    loading.pending.clear()
