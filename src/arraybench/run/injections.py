"""The injection journal in the results store, and what a killed controller left behind.

Injectors write their entries from the event timeline's threads, so each thread gets its own
connection to the store (a SQLite connection belongs to the thread that opened it).

`arraybench revert [RUN]` and the start of the next `run` look for entries not marked
reverted whose run is not running (its lock is free): those were left by a controller that
died (SIGKILL, power loss) and are undone from the journal alone, on whichever machine.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arraybench.errors import PlanError
from arraybench.events.errors import EventError, InjectorError
from arraybench.events.journal import Injection
from arraybench.events.leftovers import undo
from arraybench.fio.runner import end_leftover_fio
from arraybench.store.db import InjectionRow, Store


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class StoreInjectionLog:
    """events.journal.InjectionLog writing into the store, for one point of one run."""

    def __init__(self, results_dir: Path, run_id: str, point_key: str) -> None:
        self.results_dir = results_dir
        self.run_id = run_id
        self.point_key = point_key
        self._local = threading.local()  # connections close when their thread's local goes

    def _store(self) -> Store:
        store = getattr(self._local, "store", None)
        if store is None:
            store = Store(self.results_dir)
            self._local.store = store
        return store

    def before(self, injection: Injection) -> int:
        return self._store().add_injection(
            self.run_id, self.point_key, injection.kind, injection.label, injection.host,
            injection.reach, injection.undo, _now(),
        )  # fmt: skip

    def update(self, entry: int, undo: dict[str, Any]) -> None:
        self._store().update_injection(entry, undo)

    def reverted(self, entry: int) -> None:
        self._store().injection_reverted(entry, _now())


class RevertError(EventError):
    """A journaled injection could not be undone (the machine's fault: exit 1)."""

    exit_code = 1


@dataclass(frozen=True)
class Leftovers:
    rows: list[InjectionRow]
    running: dict[str, int]  # run id -> pid of the live process running it (left alone)


def leftovers(store: Store, run_id: str | None = None) -> Leftovers:
    """Injections not reverted whose run is not being run by a live process."""
    rows, running = [], {}
    for row in store.pending_injections(run_id):
        holder = store.run_locked_by_other(row.run_id)
        if holder is not None:
            running[row.run_id] = holder
        else:
            rows.append(row)
    return Leftovers(rows, running)


def revert_leftovers(store: Store, run_id: str | None = None) -> tuple[list[str], Leftovers]:
    """Undo every injection a killed controller left (newest first: the reverse of applying);
    (what was done, what was found); RevertError naming what could not be undone."""
    found = leftovers(store, run_id)
    done, problems = [], []
    for run in sorted({row.run_id for row in found.rows}):  # its fio (a client) ends first
        ended = end_leftover_fio(Path(store.get_run(run).folder))
        done += [f"{run}: ended {len(ended)} fio process(es) it left running"] if ended else []
    for row in reversed(found.rows):
        entry = Injection(row.kind, row.label, row.host, row.reach, row.undo)
        try:
            done.append(f"{row.run_id} {row.point_key}: {undo(entry)}")
        except InjectorError as exc:
            problems.append(f"{row.run_id} {row.point_key}: {row.label}: {exc.one_line()}")
            continue
        store.injection_reverted(row.id, _now())
    if problems:
        raise RevertError("; ".join(problems), "fix the host, then `arraybench revert` again")
    return done, found


def refuse_leftovers(store: Store, results_dir: Path) -> None:
    """Before a run: PlanError when a killed run left injections in place (a throttle, a
    stopped process would distort this run's figures)."""
    found = leftovers(store)
    if found.rows:
        row = found.rows[0]
        where = f" on host {row.host}" if row.host else ""
        raise PlanError(f"run {row.run_id} left {len(found.rows)} event injection(s) in place "
                        f"({row.label}{where}) when it was killed",
                        f"run `arraybench revert --results {results_dir}` first")  # fmt: skip
