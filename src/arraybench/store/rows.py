"""Rows read back from the store, checked before anything uses them.

SQLite keeps whatever a column is given: a user with `sqlite3` (or a crash, or another
tool) can leave a block size as text, a NULL where a number belongs, labels or findings that
are not JSON. Every row read becomes its typed record here, each value checked against the
record's field type; what does not fit is either marked (`RunRecord.damaged`: `runs` lists
the run, marked) or refused with one line naming the run, the point and the column
(`DamagedStoreError`, exit 1: a report built on a wrong number would mislead).

Stored paths are not trusted to be where the results folder is now: a run's folder and its
points' folders are rebuilt under the store's own folder (`relocated`), so a results folder
that was moved (or reached by another path) is read and written where it is.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path, PurePath
from typing import Any

from arraybench.errors import StoreMachineError
from arraybench.point_identity import PointIdentity
from arraybench.records import Damaged, Finding, InjectionRow, PointRecord, RunRecord

HINT = "the store was edited or damaged: restore it from a copy, or delete that row with sqlite3"
RUN_FIELDS = {f.name: str(f.type) for f in fields(RunRecord) if f.name != "damaged"}
POINT_FIELDS = {f.name: str(f.type) for f in fields(PointRecord)
                if f.name not in ("metrics", "identity")}  # fmt: skip
# a point's identity: its columns and their types (the workload is a field of its own too)
IDENTITY_COLUMNS = {"level": "str", "round": "int | None", "repetition": "int",
                    "plan_scenario": "str | None"}  # fmt: skip
RUN_DEFAULTS: dict[str, Any] = {"str": "", "float": 0.0, "int": 0}


class DamagedStoreError(StoreMachineError):
    """A stored value that is not what its column holds (exit 1, one line naming it)."""


def _number_ok(value: object, kind: str) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) if kind == "int" else isinstance(value, int | float)


def fits(value: object, annotation: str) -> bool:
    """Whether a stored value is of the field's declared type (`int`, `float | None` ...)."""
    kinds = [k.strip() for k in annotation.split("|")]
    if value is None:
        return "None" in kinds
    for kind in kinds:
        if kind == "str" and isinstance(value, str):
            return True
        if kind in ("int", "float") and _number_ok(value, kind):
            return True
    return False


def _what(value: object) -> str:
    if value is None:
        return "NULL"
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _json(text: object) -> object:
    """A JSON column decoded; a Damaged saying why not."""
    if not isinstance(text, str):
        return Damaged(f"{_what(text)} is not JSON text")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return Damaged(f"{_what(text)} is not JSON")


def relocated(stored: object, results_dir: Path, run_id: str) -> str:
    """A stored run or point folder as it is now: the part from `runs/RUN` on, under the
    store's own folder; a path of another layout is kept as it was stored."""
    if not isinstance(stored, str):
        return str(results_dir / "runs" / run_id)
    parts = PurePath(stored).parts
    for k in range(len(parts) - 1, 0, -1):
        if parts[k - 1] == "runs" and parts[k] == run_id:
            return str(results_dir.joinpath("runs", *parts[k:]))
    return stored


def run_record(row: sqlite3.Row, results_dir: Path) -> RunRecord:
    """A runs row; fields that do not fit are replaced (empty, zero) and named in `damaged`."""
    keys = set(row.keys())
    data: dict[str, Any] = {}
    damaged: list[str] = []
    for name, annotation in RUN_FIELDS.items():
        if name in ("labels", "targets"):
            value = _json(row[f"{name}_json"]) if f"{name}_json" in keys else None
            ok = isinstance(value, dict if name == "labels" else list) and all(
                isinstance(v, str) for v in (value.values() if isinstance(value, dict) else value)
            )
            if not ok:
                damaged.append(f"{name}_json")
            data[name] = value if ok else ({} if name == "labels" else [])
            continue
        value = row[name] if name in keys else None
        if not fits(value, annotation):
            damaged.append(name)
            value = None if "None" in annotation else RUN_DEFAULTS[annotation]
        data[name] = float(value) if annotation == "float" and value is not None else value
    run_id = data["id"] or "?"
    data["folder"] = relocated(data["folder"], results_dir, run_id)
    return RunRecord(**data, damaged=tuple(damaged))


def intact(run: RunRecord) -> RunRecord:
    """The run, or DamagedStoreError naming its damaged columns."""
    if run.damaged:
        raise DamagedStoreError(f"run {run.id}: stored {', '.join(run.damaged)} cannot be read",
                                HINT)  # fmt: skip
    return run


def point_record(row: sqlite3.Row, results_dir: Path, metric_columns: Iterable[str]) -> PointRecord:
    """A points row; DamagedStoreError naming the run, the point and the column."""
    data: dict[str, Any] = {}
    for name, annotation in POINT_FIELDS.items():
        value = row[name]
        if not fits(value, annotation):
            raise _damaged_point(row, name, value)
        data[name] = float(value) if annotation.startswith("float") and value is not None else value
    metrics = {}
    for column in metric_columns:
        value = row[column]
        if not fits(value, "float | None"):
            raise _damaged_point(row, column, value)
        metrics[column] = value
    if data["labels_json"] is not None and not isinstance(_json(data["labels_json"]), dict):
        raise _damaged_point(row, "labels_json", data["labels_json"])
    data["folder"] = relocated(data["folder"], results_dir, data["run_id"])
    return PointRecord(**data, metrics=metrics, identity=_identity(row, data["workload"]))


def _identity(row: sqlite3.Row, workload: str) -> PointIdentity:
    parts: dict[str, Any] = {}
    for name, annotation in IDENTITY_COLUMNS.items():
        if not fits(row[name], annotation):
            raise _damaged_point(row, name, row[name])
        parts[name] = row[name]
    return PointIdentity(workload, parts["level"], parts["plan_scenario"], parts["round"],
                         parts["repetition"])  # fmt: skip


def identity_columns(identity: PointIdentity) -> dict[str, Any]:
    """The columns a point's identity is stored in, its key among them."""
    return {"key": identity.key, "workload": identity.workload, "level": identity.level,
            "round": identity.round, "repetition": identity.repetition,
            "plan_scenario": identity.scenario}  # fmt: skip


def _damaged_point(row: sqlite3.Row, column: str, value: object) -> DamagedStoreError:
    key = row["key"] if isinstance(row["key"], str) else f"id {row['id']}"
    return DamagedStoreError(f"run {row['run_id']}: point {key}: stored {column} {_what(value)} "
                             "cannot be read", HINT)  # fmt: skip


def finding(row: sqlite3.Row, run_id: str) -> Finding:
    """A findings row; DamagedStoreError when its data is not a JSON object."""
    data = _json(row["data_json"])
    kind = row["kind"]
    if not isinstance(data, dict) or not isinstance(kind, str):
        why = data if isinstance(data, Damaged) else "not a JSON object"
        raise DamagedStoreError(f"run {run_id}: finding {row['id']} ({_what(kind)}): stored "
                                f"data_json {why}", HINT)  # fmt: skip
    point = row["point_id"]
    return Finding(point if isinstance(point, int) else None, kind, data)


# what SQLite's typeof() may say of a column read into a field of this type (or NULL)
_SQL_TYPES = {"int": "'integer', 'null'", "float": "'integer', 'real', 'null'",
              "str": "'text', 'null'"}  # fmt: skip


def _base(annotation: object) -> str:
    return str(annotation).split("|")[0].strip()


def sample_types_wrong(build: Any) -> str:
    """An SQL condition true for a row of `build`'s table whose values are not of its
    fields' types (the table's columns are the fields, after point_id)."""
    return " OR ".join(f"typeof({f.name}) NOT IN ({_SQL_TYPES[_base(f.type)]})"
                       for f in fields(build))  # fmt: skip


def damaged_sample(row: sqlite3.Row, build: Any, where: str) -> DamagedStoreError:
    """The line for a sample row `sample_types_wrong` found."""
    for f in fields(build):
        value = row[f.name]
        if not fits(value, f"{_base(f.type)} | None"):
            return DamagedStoreError(f"{where}: a stored sample's {f.name} {_what(value)} "
                                     "cannot be read", HINT)  # fmt: skip
    return DamagedStoreError(f"{where}: a stored sample cannot be read", HINT)


def injection_row(row: sqlite3.Row) -> InjectionRow:
    """An injections row, its text columns as text (a number or blob a user put there shown as
    text, checked by events.entries), its JSON columns decoded or Damaged."""

    def text(name: str) -> str:
        value = row[name]
        return value if isinstance(value, str) else "" if value is None else repr(value)

    owner = row["owner_pid"]
    return InjectionRow(
        int(row["id"]), text("run_id"), text("point_key"), text("kind"), text("label"),
        text("host"), _json(row["reach_json"]), _json(row["undo_json"]), text("state"),
        text("created"), owner if isinstance(owner, int) else 0,
    )  # fmt: skip
