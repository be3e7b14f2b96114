"""Events during a point: failures and disturbances injected while the fio load runs.

Each event names WHEN it happens (`at` an offset from the point's start, or `when: steady`,
once the load has reached steady state), optionally how long it lasts (`duration`, then it is
reverted; without it, it lasts until the point ends) and WHAT happens, as one key naming the
kind. Every applied event is reverted when the point ends, whatever happened. The kinds and
their actions' models are plan/event_kinds/ (one module each, listed once there); `Event`
gets one key per kind from that list.

More: docs/internals.md, `plan/events.py`."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, Field, StringConstraints, model_validator
from pydantic.fields import FieldInfo

from arraybench.plan.event_kinds import BUILT_IN
from arraybench.plan.event_kinds.base import Duration, EventKind, Offset
from arraybench.plan.types import Strict

_KINDS: dict[str, EventKind] = {kind.name: kind for kind in BUILT_IN}


def kinds() -> list[EventKind]:
    """Every event kind a plan may name, in the reference's order."""
    return list(_KINDS.values())


def kind_named(name: str) -> EventKind:
    return _KINDS[name]


def _names(hosts: str) -> list[str]:
    return [k.name for k in _KINDS.values() if k.hosts == hosts]


def example() -> str:
    """The documented example, every form once (docs/plan.md's examples are read from it)."""
    return "events:\n" + "".join(k.examples for k in _KINDS.values())


HostName = Annotated[str, StringConstraints(pattern="^[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}$")]


class ByOperator(Protocol):
    """An action done by hand: the timeline shows `text` and asks for `revert_text`."""

    text: str
    revert_text: str | None
    assume_after: float


class Event(Strict):
    """One event: when (`at` or `when`), for how long (`duration`) and one action key."""

    # seconds after the point's start
    at: Offset | None = Field(None, description="When: seconds after the point's start (e.g. 30s).")
    when: Literal["steady"] | None = Field(
        None, description="When: `steady` = once the load has reached steady state."
    )
    label: str | None = Field(
        None,
        min_length=1,
        description=("The event's name in reports (default: a description of the action)."),
    )
    # None: until the point ends
    duration: Duration | None = Field(
        None,
        description=(
            "How long the event holds, from when it is in force, before it is reverted (absent: "
            "until the point ends)."
        ),
    )
    # one key per event kind goes here (`_install_kinds`)
    host: HostName | None = Field(None)
    hosts: list[HostName] | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one_time_one_action(self) -> Event:
        if (self.at is None) == (self.when is None):
            raise ValueError("give either at (an offset such as 30s) or when: steady")
        given = [k for k in _KINDS if getattr(self, k, None) is not None]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one action of {', '.join(_KINDS)}"
                + (f" (got {', '.join(given)})" if given else "")
            )
        if self.host is not None and self.hosts is not None:
            raise ValueError("give host or hosts, not both")
        if self.named_hosts and _KINDS[self.kind].hosts == "never":
            raise ValueError(f"a {self.kind} happens on the controller: remove host/hosts")
        return self

    @property
    def named_hosts(self) -> list[str]:
        """The hosts the plan names for this event (empty: the default)."""
        return [self.host] if self.host is not None else list(self.hosts or [])

    @property
    def kind(self) -> str:
        return next(k for k in _KINDS if getattr(self, k, None) is not None)

    @property
    def action(self) -> Any:
        """The action's model (the kind's, plan/event_kinds/)."""
        return getattr(self, self.kind)

    @property
    def by_operator(self) -> ByOperator | None:
        """The action when the operator does it by hand (the timeline asks), else None."""
        return self.action if _KINDS[self.kind].by_operator else None

    @property
    def name(self) -> str:
        """The label, or a short description of the action."""
        return self.label or describe_action(self)

    def when_text(self) -> str:
        return "when steady" if self.when == "steady" else f"at +{self.at:g}s"


_BASE = ("at", "when", "label", "duration")


def _kind_field(kind: EventKind) -> FieldInfo:
    model: Any = kind.model
    annotated: Any = Annotated[model, kind.short_form] if kind.short_form else model
    return FieldInfo.from_annotated_attribute(annotated | None, Field(None, description=kind.help))


def _describe_hosts(fields: dict[str, FieldInfo]) -> None:
    """host and hosts say which kinds act where (the kinds' `hosts` rule)."""
    never, named = ", ".join(_names("never")), " or ".join(_names("named"))
    every = ", ".join(_names("every"))
    fields[
        "host"
    ].description = (
        f"On a plan with hosts: the host the action happens on, over SSH (not for {never})."
    )
    fields["hosts"].description = (
        "On a plan with hosts: the hosts the action happens on, over SSH (default for "
        f"{every}: every host of the point; a {named} without host or hosts runs on the "
        "controller)."
    )


def _install_kinds() -> None:
    """Event's keys: the timing ones, one per kind in the registry's order, then the hosts."""
    fields = Event.__pydantic_fields__
    ordered = {name: fields[name] for name in _BASE}
    ordered |= {kind.name: _kind_field(kind) for kind in _KINDS.values()}
    ordered |= {name: fields[name] for name in ("host", "hosts")}
    _describe_hosts(ordered)
    fields.clear()
    fields.update(ordered)
    Event.model_rebuild(force=True)


_install_kinds()


def _rebuild_holders() -> None:
    """The models that hold events, rebuilt after the kinds changed (inner ones first)."""
    from arraybench.plan import model, workload

    holders: list[type[BaseModel]] = [workload.Workload, model.Plan]
    for holder in holders:
        holder.model_rebuild(force=True)


def register_kind(kind: EventKind) -> None:
    """Make `kind` an event key of every plan read from now on (a test's own kind, a plugin);
    its run-time side registers with events.event_kinds.register."""
    _KINDS[kind.name] = kind
    _install_kinds()
    _rebuild_holders()


def unregister_kind(name: str) -> None:
    """Forget a kind registered with `register_kind`; the built-in ones stay."""
    if name in _KINDS and all(k.name != name for k in BUILT_IN):
        del _KINDS[name]
        _install_kinds()
        _rebuild_holders()


def describe_action(event: Event) -> str:
    """`throttle /dev/sdc`, `run systemctl`, `prompt "Pull cable A"`: a default label."""
    return _KINDS[event.kind].describe(event.action)


def event_host_errors(
    workloads_events: list[list[Event]], hosts: dict[str, bool]
) -> list[tuple[tuple[str | int, ...], str]]:
    """(location, message) for each event naming a host the plan does not declare, or one
    without SSH settings (`hosts`: name -> has ssh). Locations are inside `workloads`."""
    problems: list[tuple[tuple[str | int, ...], str]] = []
    known = ", ".join(hosts) or "the plan declares no hosts"
    for w, events in enumerate(workloads_events):
        for e, event in enumerate(events):
            field = "host" if event.host is not None else "hosts"
            for k, name in enumerate(event.named_hosts):
                loc: tuple[str | int, ...] = (w, "events", e, field)
                loc += (k,) if field == "hosts" else ()
                if name not in hosts:
                    problems.append((loc, f"unknown host {name!r} (hosts: {known})"))
                elif not hosts[name]:
                    problems.append((loc, f"host {name!r} has no ssh settings: events on a "
                                     "host need SSH (give the host `ssh:`)"))  # fmt: skip
            bare = [n for n, ssh in hosts.items() if not ssh]
            every = _KINDS[event.kind].hosts == "every"
            if hosts and not event.named_hosts and every and bare:
                problems.append(((w, "events", e, event.kind), f"acts on every host, and "
                                 f"{', '.join(bare)} has no ssh settings: name the hosts "
                                 "with `host:`/`hosts:` or give them `ssh:`"))  # fmt: skip
    return problems
