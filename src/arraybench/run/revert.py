"""`arraybench revert`: undo what killed runs left in place, the host tuning journals and the
event injections journaled in the store."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arraybench.errors import StoreError
from arraybench.run.injections import MarkedUndone
from arraybench.run.request import stored_run_id
from arraybench.store.db import DB_NAME, Store


@dataclass(frozen=True)
class Reverted:
    done: list[str]
    problems: list[str]  # one line per change or injection not undone, and why
    running: dict[str, int]  # run id -> pid of a run still running (its events wait for it)


def revert_left_in_place(results: str, run_id: str | None) -> Reverted:
    """Each journal entry refused (a hand-edited or damaged journal) or not undone is a
    problem and stays journaled; the others are undone regardless. `run_id`: only that
    run's injections (`latest`: the newest run's); None: every run's."""
    from arraybench.events.tuning import revert_all
    from arraybench.run.injections import plan_hosts, revert_leftovers

    folder = Path(results)
    # no store yet: only host tuning journals to read
    store = Store(folder, create=False) if (folder / DB_NAME).is_file() else None
    tuning = revert_all(folder, plan_hosts(store))
    if store is None:
        return Reverted(tuning.done, tuning.problems, {})
    events = revert_leftovers(store, stored_run_id(store, run_id, results) if run_id else None)
    return Reverted(tuning.done + events.done, tuning.problems + events.problems,
                    dict(events.found.running))  # fmt: skip


def mark_undone_by_hand(results: str, run_id: str | None, entries: list[int]) -> MarkedUndone:
    """`revert --mark-undone ENTRY`: journal entries the user undid by hand, marked so (a new
    run no longer waits for them); nothing is run. `run_id`: only that run's entries."""
    from arraybench.run.injections import mark_undone

    folder = Path(results)
    if not (folder / DB_NAME).is_file():
        raise StoreError(f"{results}: no results store, so no journal entry to mark",
                         "give the --results folder of the run that left it")  # fmt: skip
    store = Store(folder, create=False)
    try:
        run = stored_run_id(store, run_id, results) if run_id else None
        return mark_undone(store, entries, run)
    finally:
        store.close()
