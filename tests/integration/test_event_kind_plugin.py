"""An event kind plugged in from a test, touching no source file: `mark`, defined below (its
action model, its injector, its journal entry's check and undo), registered through
plan.events.register_kind and events.event_kinds.register. It validates in a plan (its errors
located like a built-in kind's), a real run applies and reverts it through the timeline and
the injection journal, `arraybench revert` undoes a left-over entry of it, and the plan
reference lists it: the generic code walks the registry and names no kind."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from arraybench.errors import PlanError
from arraybench.events import event_kinds as kinds
from arraybench.events.entries import Refused, mapping, text
from arraybench.events.injectors import Injector, PidSource
from arraybench.events.journal import Injection
from arraybench.events.remote import Remote
from arraybench.finding_kinds import EVENTS
from arraybench.plan import events
from arraybench.plan.event_kinds.base import EventKind, _text_form
from arraybench.plan.load import parse_plan_text
from arraybench.plan.reference import plan_reference
from arraybench.plan.types import Strict
from arraybench.run.injections import StoreInjectionLog, revert_leftovers
from arraybench.store.db import RunRecord, Store
from tests.conftest import main_cli, needs_fio

MARKS: list[str] = []  # what the mark injector and its undo did, in order


class MarkAction(Strict):
    """Write a mark in the test's list (a test's own event kind)."""

    note: str = Field(min_length=1, description="The mark's text.")


class MarkInjector(Injector):
    kind = "mark"

    def __init__(self, action: MarkAction) -> None:
        self.action = action
        self._on = False

    @property
    def applied(self) -> bool:
        return self._on

    def apply(self) -> str:
        self._journal(Injection(self.kind, self.label, undo={"note": self.action.note}))
        self._on = True
        MARKS.append(f"apply {self.action.note}")
        return f"marked {self.action.note}"

    def revert(self) -> str:
        if not self._on:
            return "nothing to revert"
        self._on = False
        self._undone()
        MARKS.append(f"revert {self.action.note}")
        return f"unmarked {self.action.note}"


@dataclass(frozen=True)
class MarkUndo:
    note: str


def _check(undo: Mapping[str, object], host: str) -> MarkUndo:
    mapping(undo, "undo", {"note"}, {"note"})
    return MarkUndo(text(undo["note"], "note"))


def _undo(u: Any, remote: Remote | None) -> str:
    assert isinstance(u, MarkUndo)
    MARKS.append(f"undo {u.note}")
    return f"unmarked {u.note}"


def _local(action: MarkAction, pids: PidSource, sys_root: str) -> Injector:
    return MarkInjector(action)


MARK = EventKind(
    "mark",
    MarkAction,
    "Write a mark (a string is the note).",
    lambda action: f"mark {action.note}",
    hosts="never",
    short_form=_text_form("note"),
    examples="  - {at: 1s, mark: here}\n",
)


@pytest.fixture
def mark_kind() -> Iterator[None]:
    events.register_kind(MARK)
    kinds.register("mark", kinds.Runtime(_local, check=_check, undo=_undo))
    MARKS.clear()
    try:
        yield
    finally:
        kinds.unregister("mark")
        events.unregister_kind("mark")


def _plan(folder: Path, event: str) -> str:
    return (
        "name: mk\n"
        f"targets: [{{path: {folder}/t.dat, size: 16m}}]\n"
        "timing: {ramp: 0s, duration: 2s}\n"
        "load: {workers: [1], iodepth: [1]}\n"
        "workloads:\n"
        "  - {name: w, pattern: random, bs: 4k, read: 100, ioengine: psync, rate_iops: 200,\n"
        f"     events: [{event}]}}\n"
    )


def test_a_registered_kind_validates_in_a_plan_and_is_gone_after(
    tmp_path: Path, mark_kind: None
) -> None:
    plan = parse_plan_text(_plan(tmp_path, "{at: 0.5s, mark: here}"), "p.yaml")
    (event,) = plan.workloads[0].events
    assert (event.kind, event.name, event.action.note) == ("mark", "mark here", "here")
    assert event.by_operator is None
    with pytest.raises(PlanError) as empty:  # its own model's errors, located as any kind's
        parse_plan_text(_plan(tmp_path, "{at: 0.5s, mark: {note: ''}}"), "p.yaml")
    assert "p.yaml:7" in empty.value.message and "mark.note" in empty.value.message
    with pytest.raises(PlanError) as host:  # its hosts rule: never on a host
        parse_plan_text(_plan(tmp_path, "{at: 0.5s, host: h, mark: x}"), "p.yaml")
    assert "a mark happens on the controller" in host.value.message
    with pytest.raises(PlanError) as two:
        parse_plan_text(_plan(tmp_path, "{at: 1s, mark: x, run: [ls]}"), "p.yaml")
    assert "(got run, mark)" in two.value.message
    assert "scsi_offline, mark" in two.value.message  # listed after the built-in kinds

    events.unregister_kind("mark")
    with pytest.raises(PlanError) as gone:
        parse_plan_text(_plan(tmp_path, "{at: 0.5s, mark: here}"), "p.yaml")
    assert "mark" in gone.value.message
    assert "mark" not in events.Event.model_fields


def test_a_registered_kind_is_in_the_plan_reference(mark_kind: None) -> None:
    reference = plan_reference()
    row = ("| `mark` | [MarkAction](#markaction) or string | – |  | Write a mark (a string is the "
           "note). | `here` |")  # fmt: skip
    assert row in reference.splitlines()
    assert "## MarkAction" in reference and "| `note` | string | required |" in reference
    assert "over SSH (not for prompt, mark)." in reference  # the hosts rule, said by the kind
    assert "mark: here" in events.example()


@needs_fio
def test_a_registered_kind_runs_is_journaled_and_reverted(tmp_path: Path, mark_kind: None) -> None:
    plan, results = tmp_path / "p.yaml", tmp_path / "res"
    plan.write_text(_plan(tmp_path, "{at: 0.5s, duration: 0.5s, mark: here}"))
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stderr
    assert MARKS == ["apply here", "revert here"]
    store = Store(results, create=False)
    ((run, _),) = store.list_runs()
    (finding,) = store.findings(run.id, EVENTS.name)
    records = EVENTS.of(finding)["records"]
    assert [(r["kind"], r["action"], r["outcome"]) for r in records] == [
        ("mark", "apply", "ok"),
        ("mark", "revert", "ok"),
    ]
    assert records[0]["detail"] == "marked here" and records[0]["label"] == "mark here"
    assert store.pending_injections() == []  # journaled before, marked reverted after


def test_a_left_over_entry_of_a_registered_kind_is_undone_by_revert(
    tmp_path: Path, mark_kind: None
) -> None:
    store = Store(tmp_path, create=True)
    store.create_run(RunRecord(
        id="r1", plan_name="mk", scenario="s", labels={},
        plan_yaml=_plan(tmp_path, "{at: 1s, mark: here}"), folder=str(tmp_path / "runs" / "r1"),
        scale=1.0, status="running", started="x", finished=None, total_points=1,
        engine_version=None, arraybench_version="0", host="h", kernel="k", targets=[],
        latency_bound_us=1000.0, latency_stat="mean"))  # fmt: skip
    injector = MarkInjector(MarkAction(note="left"))
    injector.journal, injector.label = StoreInjectionLog(tmp_path, "r1", "w/w1-qd1"), "m"
    injector.apply()  # a controller killed here leaves the entry pending
    with pytest.raises(Refused, match="undo has unknown key"):
        _check({"note": "x", "more": 1}, "")
    done = revert_leftovers(store)
    assert done.problems == [] and MARKS == ["apply left", "undo left"]
    assert done.done == ["r1 w/w1-qd1: m (mark, this machine): unmarked left"]
    assert store.pending_injections() == []
