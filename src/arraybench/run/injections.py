"""The injection journal in the results store, and what a killed controller left behind.

Injectors write their entries from the event timeline's threads, so each thread gets its own
connection to the store (a SQLite connection belongs to the thread that opened it).

`arraybench revert [RUN]` and the start of the next `run` look for entries not marked
reverted whose run is not running (its lock is free): those were left by a controller that
died (SIGKILL, power loss) and are undone from the journal alone, on whichever machine.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arraybench.engines.fio.runner import end_leftover_fio
from arraybench.errors import ArraybenchError, PlanError, StoreError
from arraybench.events import remote as sh
from arraybench.events.entries import CheckedInjection, Refused, check_injection
from arraybench.events.errors import InjectorError
from arraybench.events.event_kinds import runtime_of
from arraybench.events.journal import Injection
from arraybench.events.leftovers import undo
from arraybench.events.tuning import HostsOf
from arraybench.hosts.server import HostSpec
from arraybench.plan.events import Event
from arraybench.plan.load import parse_plan_text
from arraybench.records import INJECTION_REVERT_FAILED
from arraybench.run.fleet import host_spec
from arraybench.store.db import InjectionRow, Store

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,200}")  # a folder name under runs/


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


@dataclass(frozen=True)
class RunPlan:
    """What a run's stored plan allows revert to do: its hosts (reached with the plan's SSH
    settings and arraybench's fixed options) and its events (what their kinds may undo)."""

    hosts: dict[str, HostSpec]
    events: list[Event]


def run_plan(store: Store, run_id: str) -> RunPlan:
    """The run's plan as the store recorded it; ArraybenchError when there is none."""
    run = store.get_run(run_id)
    plan = parse_plan_text(run.plan_yaml, f"{run.folder}/plan.yaml")
    events = [e for w in plan.workloads for e in w.events]
    return RunPlan({h.name: host_spec(h) for h in plan.hosts}, events)


def _allowed(entry: CheckedInjection, plan: RunPlan | str, run_id: str) -> None:
    """Refused when the entry needs its run's plan (a host to reach, or what its kind's
    `plan_guard` wants named: a command to run, a qdisc to delete) and the plan cannot be
    read or does not name it."""
    runtime = runtime_of(entry.kind)
    guard = runtime.plan_guard if runtime is not None else None
    if not (entry.host or guard):
        return  # SIGCONT, a SCSI disk back to running, our own cgroup: nothing to abuse
    if isinstance(plan, str):
        raise Refused(f"the plan of run {run_id} cannot be read ({plan})")
    refusal = guard(entry.undo, plan.events) if guard is not None else None
    if refusal is not None:
        raise Refused(refusal)


def plan_hosts(store: Store | None) -> HostsOf:
    """For `revert_all`: a run id -> the hosts of its stored plan."""

    def of(run_id: str) -> dict[str, HostSpec]:
        if store is None:
            raise StoreError("there is no results store to read the run's plan from", None)
        return run_plan(store, run_id).hosts

    return of


Undoable = tuple[CheckedInjection, "sh.Remote | None"]


def _checked(row: InjectionRow, plans: dict[str, RunPlan | str], store: Store) -> Undoable:
    """The row validated, with its host as the run's plan reaches it; Refused saying why not."""
    entry = check_injection(row.kind, row.label, row.host, row.reach, row.undo)
    if row.run_id not in plans:
        try:
            plans[row.run_id] = run_plan(store, row.run_id)
        except ArraybenchError as exc:
            plans[row.run_id] = exc.message
    plan = plans[row.run_id]
    _allowed(entry, plan, row.run_id)
    if not entry.host:
        return entry, None
    assert isinstance(plan, RunPlan)
    spec = plan.hosts.get(entry.host)
    if spec is None or spec.ssh is None:
        raise Refused(f"host {entry.host} is not a host of the run's plan with ssh settings")
    return entry, sh.Remote(spec)


@dataclass(frozen=True)
class RevertResult:
    done: list[str]
    problems: list[str]  # one line per injection not undone (refused, or failed), and why
    found: Leftovers


def revert_leftovers(store: Store, run_id: str | None = None) -> RevertResult:
    """Undo every injection a killed controller left (newest first: the reverse of applying),
    each row validated first (events.entries) and its host reached as the run's plan says.
    A row refused or failed stays pending; the others are undone regardless."""
    found = leftovers(store, run_id)
    done: list[str] = []
    problems: list[str] = []
    for run in sorted({row.run_id for row in found.rows}):  # its fio (a client) ends first
        folder = store.path.parent / "runs" / run
        if RUN_ID.fullmatch(run) and folder.is_dir():
            ended = end_leftover_fio(folder)
            done += [f"{run}: ended {len(ended)} fio process(es) it left running"] if ended else []
    plans: dict[str, RunPlan | str] = {}
    for row in reversed(found.rows):
        where = f"{row.run_id} {row.point_key} (journal entry {row.id})"
        try:
            entry, remote = _checked(row, plans, store)
            done.append(f"{row.run_id} {row.point_key}: {undo(entry, remote)}")
        except Refused as exc:
            problems.append(f"{where}: refused: {exc}")
            continue
        except InjectorError as exc:
            problems.append(f"{where}: {row.label}: {exc.one_line()}")
            continue
        store.injection_reverted(row.id, _now())
    return RevertResult(done, problems, found)


def refuse_leftovers(store: Store, results_dir: Path) -> None:
    """Before a run: PlanError when a run left injections in place (a throttle, a stopped
    process would distort this run's figures): one whose revert failed, or a killed one's."""
    found = leftovers(store)
    if found.rows:
        row = found.rows[0]
        raise PlanError(f"run {row.run_id} left {len(found.rows)} event injection(s) in place: "
                        f"{left_line(row)}",
                        f"run `arraybench revert --results {results_dir}` first (it tries to "
                        "undo them again); one you undid by hand: `arraybench revert "
                        f"--mark-undone {row.id} --results {results_dir}`")  # fmt: skip


def left_line(row: InjectionRow) -> str:
    """What one entry left in place, and how it came to be left (its state says it)."""
    where = f" on host {row.host}" if row.host else ""
    how = ("undoing it failed when its event ended" if row.state == INJECTION_REVERT_FAILED
           else "the run was killed before it undid it")  # fmt: skip
    point = f", point {row.point_key}" if row.point_key else ""  # a fio server: no point
    return f"{row.label}{where} (journal entry {row.id}{point}): {how}"


def left_by_run(store: Store, run_id: str) -> list[str]:
    """At the end of a run: its injections whose revert failed (the campaign marked them),
    one line each (the run then ends with EXIT_LEFT_IN_PLACE, said by the CLI)."""
    return [left_line(row) for row in store.injections_revert_failed(run_id)]


@dataclass(frozen=True)
class MarkedUndone:
    marked: list[str]  # one line per entry marked undone by hand
    problems: list[str]  # one line per entry that could not be marked, and why


def mark_undone(store: Store, entries: list[int], run_id: str | None) -> MarkedUndone:
    """`revert --mark-undone ENTRY`: the user undid these injections by hand; each pending
    entry (of `run_id` when given) not held by a live run is marked so. Nothing is run."""
    marked: list[str] = []
    problems: list[str] = []
    pending = {row.id: row for row in store.pending_injections(run_id)}
    for entry in entries:
        row = pending.get(entry)
        if row is None:
            of = f" of run {run_id}" if run_id else ""
            problems.append(f"--mark-undone {entry}: no journal entry {entry}{of} is left to "
                            "undo (see `arraybench revert` for those that are)")  # fmt: skip
            continue
        holder = store.run_locked_by_other(row.run_id)
        if holder is not None:
            problems.append(f"--mark-undone {entry}: run {row.run_id} is running (pid "
                            f"{holder}); it undoes its own injections when it ends")  # fmt: skip
            continue
        store.injection_undone_by_hand(entry, _now())
        marked.append(f"{row.run_id}: {row.label} (journal entry {entry}) marked undone by hand; "
                      "nothing was run")  # fmt: skip
    return MarkedUndone(marked, problems)
