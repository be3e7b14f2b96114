"""`arraybench revert`: undo what killed runs left in place, the host tuning journals and the
event injections journaled in the store."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arraybench.errors import EXIT_LEFT_IN_PLACE, StoreError
from arraybench.run.injections import MarkedUndone
from arraybench.run.request import stored_run_id
from arraybench.store.db import DB_NAME, Store


@dataclass(frozen=True)
class Reverted:
    """What `revert` (or a run's end) undid and left, as the console says it."""

    done: list[str]
    problems: list[str]  # one line per change or injection not undone, and why
    running: dict[str, int]  # run id -> pid of a run still running (its events wait for it)
    nothing: str = ""  # said when nothing was done and nothing is left ("" for nothing)
    note: str = ""  # said after the problems: how to let what is left go
    code: int = 1  # the exit code when anything is left


def _journaled_note(results: str) -> str:
    return ("what was not undone stays journaled (and a new run waits for it): undo it by "
            "hand, then `arraybench revert` again; or, once it is undone, record that: a "
            f"journal entry N with `arraybench revert --mark-undone N --results {results}`, a "
            "host-tuning journal's line by removing it from its file")  # fmt: skip


def revert_or_mark(results: str, run_id: str | None, undone: list[int]) -> Reverted:
    """`arraybench revert`: with `undone` (--mark-undone), record those journal entries as
    undone by hand (a wrong entry number: exit 2); else undo what runs left in place."""
    if undone:
        marked = mark_undone_by_hand(results, run_id, undone)
        return Reverted(marked.marked, marked.problems, {}, code=2)
    return revert_left_in_place(results, run_id)


def left_in_place(store: Store, run_id: str, results: str) -> Reverted:
    """The end of a run: the injections its failed reverts left (exit EXIT_LEFT_IN_PLACE)."""
    from arraybench.run.injections import left_by_run

    lines = [f"left in place by run {run_id}: {line}" for line in left_by_run(store, run_id)]
    note = (f"undo it by hand, or run `arraybench revert --results {results}` to try again; "
            "once undone by hand, record it with `arraybench revert --mark-undone ENTRY "
            f"--results {results}` (a new run in {results} waits until then)")  # fmt: skip
    return Reverted([], lines, {}, note=note, code=EXIT_LEFT_IN_PLACE)


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
    nothing, note = f"nothing to revert in {results}", _journaled_note(results)
    if store is None:
        return Reverted(tuning.done, tuning.problems, {}, nothing, note)
    events = revert_leftovers(store, stored_run_id(store, run_id, results) if run_id else None)
    return Reverted(tuning.done + events.done, tuning.problems + events.problems,
                    dict(events.found.running), nothing, note)  # fmt: skip


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
