"""`arraybench revert`: undo what killed runs left in place, the host tuning journals and the
event injections journaled in the store."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arraybench.store.db import Store


@dataclass(frozen=True)
class Reverted:
    done: list[str]
    problems: list[str]  # one line per change or injection not undone, and why
    running: dict[str, int]  # run id -> pid of a run still running (its events wait for it)


def revert_left_in_place(results: Path, store: Store | None, run_id: str | None) -> Reverted:
    """Each journal entry refused (a hand-edited or damaged journal) or not undone is a
    problem and stays journaled; the others are undone regardless. `store`: None when the
    results directory has none (only host tuning journals to read)."""
    from arraybench.events.tuning import revert_all
    from arraybench.run.injections import plan_hosts, revert_leftovers

    tuning = revert_all(results, plan_hosts(store))
    if store is None:
        return Reverted(tuning.done, tuning.problems, {})
    events = revert_leftovers(store, run_id)
    return Reverted(tuning.done + events.done, tuning.problems + events.problems,
                    dict(events.found.running))  # fmt: skip
