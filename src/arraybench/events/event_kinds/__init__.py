"""What each event kind does at run time: its injector here and on a host, its journal
entry's check and the undo from it (`Runtime`). One module per kind here, named as the
plan's key (its model is in plan/event_kinds/ under the same name), holding one `RUNTIME`:
found by the kind's name, or given with `register` (a test's own kind)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from arraybench.events.injectors import Injector, PidSource
from arraybench.events.remote import Remote
from arraybench.plan.events import Event, kinds

# (action, the load's pids, the sysfs root) -> the injector acting on this machine
LocalFactory = Callable[[Any, PidSource, str], Injector]
HostFactory = Callable[[Remote, Any], Injector]  # (the host, action) -> its injector there
# (a journal entry's undo object, its host or "") -> the checked undo record; Refused if not
EntryCheck = Callable[[Mapping[str, object], str], object]
Undo = Callable[[Any, "Remote | None"], str]  # (checked undo, its host) -> what was done
# (checked undo, the run's plan's events) -> why the plan does not allow the undo, or None
PlanGuard = Callable[[Any, list[Event]], "str | None"]


@dataclass(frozen=True)
class Runtime:
    """What one kind does when a point runs, and what `arraybench revert` does of it."""

    local: LocalFactory | None  # None: the operator does it (the timeline asks)
    host: HostFactory | None = None  # None: never on a host
    check: EntryCheck | None = None  # None: the kind journals nothing
    undo: Undo | None = None
    # its apply may take long (a command): run in a thread of its own, recorded as "run"
    runs_apart: bool = False
    # undoing it runs what the plan named (a command, a qdisc's interface): the run's plan
    # must name it, or revert refuses; None: nothing of the plan is needed
    plan_guard: PlanGuard | None = None


_REGISTERED: dict[str, Runtime] = {}


def register(name: str, runtime: Runtime) -> None:
    """The run-time side of a kind registered with plan.events.register_kind."""
    _REGISTERED[name] = runtime


def unregister(name: str) -> None:
    _REGISTERED.pop(name, None)


def runtime_of(kind: str) -> Runtime | None:
    """The kind's run-time side; None for a name that is no event kind (a journal row's kind
    is checked here before anything is imported by it)."""
    if kind in _REGISTERED:
        return _REGISTERED[kind]
    if kind not in {k.name for k in kinds()}:
        return None
    runtime: Runtime = importlib.import_module(f"{__name__}.{kind}").RUNTIME
    return runtime


def make_injector(event: Event, pids: PidSource, *, sys_root: str = "/sys") -> Injector | None:
    """The injector of an event on this machine; None for one the operator does by hand."""
    runtime = runtime_of(event.kind)
    if runtime is None or runtime.local is None:
        return None
    return runtime.local(event.action, pids, sys_root)


def runs_apart(event: Event) -> bool:
    runtime = runtime_of(event.kind)
    return runtime is not None and runtime.runs_apart
