"""Injectors acting on a plan's hosts over SSH (events.remote): what they share
(`HostInjector`), the one of an event on one host (its kind's, events/event_kinds/), and one
injector per event that acts on several hosts at once (`OnHosts`).

Each host's injection is journaled before it is applied (events.journal), with the host's
SSH settings, so `arraybench revert` reaches it again after the controller died.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from arraybench.events import remote as sh
from arraybench.events.errors import InjectorError
from arraybench.events.event_kinds import runtime_of
from arraybench.events.injectors import Injector
from arraybench.events.journal import Injection, InjectionLog
from arraybench.hosts.server import HostSpec
from arraybench.plan.events import Event, kind_named


class HostInjector(Injector):
    """An injection on one host."""

    def __init__(self, remote: sh.Remote) -> None:
        self.remote = remote

    def _journal_here(self, undo: dict[str, Any]) -> None:
        self._journal(Injection(self.kind, self.label, self.remote.name, self.remote.reach(),
                                undo))  # fmt: skip


# ----------------------------------------------------------------------------- many hosts


class OnHosts(Injector):
    """One event on several hosts: each host's injector applied (and reverted) at once, in
    threads; the detail names every host. A host that failed does not stop the others: the
    event is applied where it could be, and the apply says which failed."""

    def __init__(self, kind: str, parts: dict[str, Injector]) -> None:
        self.kind = kind  # type: ignore[misc]  # the event's kind, per instance
        self.parts = parts

    @property
    def applied(self) -> bool:
        return any(p.applied for p in self.parts.values())

    def _each(self, step: Callable[[Injector], str], which: list[str]) -> str:
        def one(name: str) -> tuple[str, str | None, InjectorError | None]:
            try:
                return name, step(self.parts[name]), None
            except InjectorError as exc:
                return name, None, exc
            except Exception as exc:
                return name, None, InjectorError(f"host {name}: {type(exc).__name__}: {exc}")

        with ThreadPoolExecutor(max_workers=max(1, len(which))) as pool:
            results = list(pool.map(one, which))
        codes = [p.last_exit_code for p in self.parts.values()]
        self.last_exit_code = next((c for c in codes if c), codes[0] if codes else None)
        self.last_output = "\n".join(f"[{n}] {p.last_output}" for n, p in self.parts.items()
                                     if p.last_output)  # fmt: skip
        failed = [(n, e) for n, _, e in results if e is not None]
        lines = [f"{n}: {d}" for n, d, _ in results if d is not None]
        if failed:
            timeout = all(e.outcome == "timeout" for _, e in failed)
            raise InjectorError("; ".join(lines + [e.one_line() for _, e in failed]),
                                outcome="timeout" if timeout else "failed")  # fmt: skip
        return "; ".join(lines)

    def apply(self) -> str:
        return self._each(lambda p: p.apply(), list(self.parts))

    def revert(self) -> str:
        return self._each(lambda p: p.revert(), [n for n, p in self.parts.items() if p.applied])

    def refresh(self) -> None:
        for part in self.parts.values():
            with contextlib.suppress(Exception):
                part.refresh()


def host_injector(event: Event, spec: HostSpec) -> Injector | None:
    """The injector of an event on one host; None for a kind never on a host (the operator's)."""
    runtime = runtime_of(event.kind)
    if runtime is None or runtime.host is None:
        return None
    return runtime.host(sh.Remote(spec), event.action)


def event_hosts(event: Event, point_hosts: Sequence[str]) -> list[str]:
    """The hosts an event acts on in a point: those named that take part in it (all of the
    point's when none are named); [] for the controller (a prompt, a run without host)."""
    if event.named_hosts:
        return [h for h in event.named_hosts if h in point_hosts]
    if kind_named(event.kind).hosts != "every":
        return []
    return list(point_hosts)


def hosts_injector(
    event: Event, specs: dict[str, HostSpec], point_hosts: Sequence[str], journal: InjectionLog
) -> Injector | None:
    """The injector of an event on a many-host point: on its hosts, or None when it runs on
    the controller (the caller then makes the local one)."""
    names = event_hosts(event, point_hosts)
    if not names:
        if event.named_hosts:  # named hosts, none in this point: the record says so
            return _NotHere(event, point_hosts)
        return None
    parts: dict[str, Injector] = {}
    for name in names:
        part = host_injector(event, specs[name])
        if part is not None:
            part.journal, part.label = journal, f"{event.name} @{name}"
            parts[name] = part
    return OnHosts(event.kind, parts)


class _NotHere(Injector):
    kind = "none"

    def __init__(self, event: Event, point_hosts: Sequence[str]) -> None:
        self.named, self.point_hosts = event.named_hosts, list(point_hosts)

    @property
    def applied(self) -> bool:
        return False

    def apply(self) -> str:
        raise InjectorError(f"host(s) {', '.join(self.named)} take no part in this point "
                            f"(its hosts: {', '.join(self.point_hosts)})")  # fmt: skip

    def revert(self) -> str:
        return "nothing to revert"
