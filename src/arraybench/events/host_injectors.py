"""Injectors acting on a plan's hosts over SSH (events.remote), and one injector per event
that acts on several hosts at once.

Each host's injection is journaled before it is applied (events.journal), with the host's
SSH settings, so `arraybench revert` reaches it again after the controller died.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from arraybench.events import remote as sh
from arraybench.events.errors import InjectorError
from arraybench.events.injectors import (
    CGROUP_PREFIX,
    CommandInjector,
    Injector,
    _limits,
    _limits_text,
    _pid_list,
    describe_selector,
    netem_deleted,
)
from arraybench.events.journal import Injection, InjectionLog
from arraybench.hosts.server import HostSpec
from arraybench.plan.events import (
    Event,
    NetemAction,
    RunAction,
    ScsiOfflineAction,
    SignalAction,
    ThrottleAction,
)

_counter = itertools.count()


class HostInjector(Injector):
    """An injection on one host."""

    def __init__(self, remote: sh.Remote) -> None:
        self.remote = remote

    def _journal_here(self, undo: dict[str, Any]) -> None:
        self._journal(Injection(self.kind, self.label, self.remote.name, self.remote.reach(),
                                undo))  # fmt: skip


class HostThrottle(HostInjector):
    """The host's fio job processes moved into a new block cgroup limited on `device` (a
    device or a file on the host); reverted as events.injectors.ThrottleInjector is."""

    kind = "throttle"

    def __init__(self, remote: sh.Remote, action: ThrottleAction) -> None:
        super().__init__(remote)
        self.action = action
        self.folder: str | None = None
        self._origin = ""
        self._number = ""

    @property
    def applied(self) -> bool:
        return self.folder is not None

    def apply(self) -> str:
        if self.folder is not None:
            return "already applied"
        # the host's name (a plan name: letters, digits, _ . -) says where, the counter which
        folder = f"{CGROUP_PREFIX}-{os.getpid()}-{self.remote.name}-{next(_counter)}"
        self._journal_here({"pidfile": self.remote.pidfile, "folder": folder,
                            "device": self.action.device})  # fmt: skip
        self.folder = folder  # from here a revert removes whatever the apply made
        limits = ["" if v is None else str(v) for v in _limits(self.action).values()]
        try:
            found = sh.throttle_apply(self.remote, folder, self.action.device, limits)
        except InjectorError:
            with contextlib.suppress(InjectorError):
                self.revert()
            raise
        self._number, self._origin = found.get("device", ""), found.get("origin", "")
        self._learned({"number": self._number, "origin": self._origin})
        return (f"{self.action.device} ({self._number}) limited to "
                f"{_limits_text(_limits(self.action))} for {found.get('moved', '?')} fio job "
                f"process(es) in {found.get('cgroup', '?').split(' ')[-1]}/{folder}")  # fmt: skip

    def refresh(self) -> None:
        if self.folder is not None:
            sh.throttle_refresh(self.remote, self.folder)

    def revert(self) -> str:
        if self.folder is None:
            return "nothing to revert"
        said = sh.throttle_revert(self.remote, self.folder, self._origin, self._number)
        self.folder = None
        self._undone()
        return said


class HostSignal(HostInjector):
    """SIGSTOP the chosen processes on the host (`load`: its fio server's job processes)."""

    kind = "signal"

    def __init__(self, remote: sh.Remote, action: SignalAction) -> None:
        super().__init__(remote)
        self.action = action
        self._stopped: list[int] = []

    @property
    def applied(self) -> bool:
        return bool(self._stopped)

    def _selector(self) -> list[str]:
        a = self.action
        if a.load:
            return ["load", self.remote.pidfile]
        if a.pid is not None:
            return ["pid", str(a.pid)]
        if a.pid_file is not None:
            return ["pid_file", a.pid_file]
        return ["process", a.process or "", "full" if a.full else ""]

    def apply(self) -> str:
        if self._stopped:
            return "already applied"
        pids = sh.signal_targets(self.remote, self._selector())
        if not pids:
            raise InjectorError(f"host {self.remote.name}: no process matches "
                                f"{describe_selector(self.action)}")  # fmt: skip
        self._journal_here({"pids": pids})
        self._stopped = pids  # a revert sends SIGCONT to all, stopped or not
        done = sh.send_signal(self.remote, "STOP", pids)
        if not done:
            self._stopped = []
            self._undone()
            raise InjectorError(f"host {self.remote.name}: no process left to stop ({pids})")
        self._stopped = done
        return f"SIGSTOP sent to {_pid_list(done)}"

    def revert(self) -> str:
        if not self._stopped:
            return "nothing to revert"
        done = sh.send_signal(self.remote, "CONT", self._stopped)
        self._stopped = []
        self._undone()
        return f"SIGCONT sent to {_pid_list(done)}"


class HostNetem(HostInjector):
    """tc netem as the root qdisc of an interface of the host."""

    kind = "netem"

    def __init__(self, remote: sh.Remote, action: NetemAction, args: list[str]) -> None:
        super().__init__(remote)
        self.action = action
        self.args = args  # events.injectors.NetemInjector.netem_args()
        self._applied = False

    @property
    def applied(self) -> bool:
        return self._applied

    def apply(self) -> str:
        where = f"host {self.remote.name} {self.action.interface}"
        netns = self.action.netns or ""
        self._journal_here({"interface": self.action.interface, "netns": self.action.netns})
        done = sh.tc(self.remote, netns, *self.args)
        if done.returncode != 0:
            self._undone()
            said = done.stderr.strip() or f"tc exited with code {done.returncode}"
            raise InjectorError(
                f"netem on {where}: {said.splitlines()[-1]}",
                "check the interface name; root and sch_netem are needed",
            )
        self._applied = True
        return f"tc {' '.join(self.args[1:])} on {where}"

    def revert(self) -> str:
        if not self._applied:
            return "nothing to revert"
        done = netem_delete(self.remote, self.action.interface, self.action.netns or "")
        self._applied = False
        self._undone()
        return done


def netem_delete(remote: sh.Remote, interface: str, netns: str) -> str:
    done = sh.tc(remote, netns, "qdisc", "del", "dev", interface, "root")
    said = done.stderr.strip()
    if not netem_deleted(done.returncode, said):
        raise InjectorError(f"host {remote.name}: removing netem from {interface}: {said}")
    return f"netem removed from host {remote.name} {interface}"


class HostScsiOffline(HostInjector):
    kind = "scsi_offline"

    def __init__(self, remote: sh.Remote, action: ScsiOfflineAction) -> None:
        super().__init__(remote)
        self.action = action
        self._state_file: str | None = None

    @property
    def applied(self) -> bool:
        return self._state_file is not None

    def apply(self) -> str:
        if self._state_file is not None:
            return "already applied"
        state_file, before = sh.scsi_state(self.remote, self.action.device)
        self._journal_here({"state_file": state_file})
        self._state_file = state_file
        sh.write_state(self.remote, state_file, "offline")
        return f"host {self.remote.name} {state_file}: {before} -> offline"

    def revert(self) -> str:
        if self._state_file is None:
            return "nothing to revert"
        sh.write_state(self.remote, self._state_file, "running")
        done = f"host {self.remote.name} {self._state_file}: offline -> running"
        self._state_file = None
        self._undone()
        return done


class HostCommand(CommandInjector):
    """`run` on a host: the argv over SSH, under the host's `timeout`; `revert` the same."""

    def __init__(self, remote: sh.Remote, action: RunAction) -> None:
        super().__init__(action)
        self.remote = remote

    def _run(self, argv: Sequence[str]) -> str:
        shown = f"host {self.remote.name}: `{' '.join(argv)}`"
        done = sh.run_argv(self.remote, list(argv), self.action.timeout)
        self.last_exit_code = done.returncode
        self.last_output = (done.stdout + done.stderr).strip()[-2000:]
        if done.returncode == 124:  # timeout(1)'s word for "killed at the timeout"
            raise InjectorError(
                f"{shown} ran past its timeout of {self.action.timeout:g}s",
                outcome="timeout",
                returncode=124,
                output=self.last_output,
            )
        if done.returncode != 0:
            raise InjectorError(
                f"{shown} exited with code {done.returncode}",
                returncode=done.returncode,
                output=self.last_output,
            )
        return f"{shown} done"

    def apply(self) -> str:
        if self.action.revert is not None:
            undo = {"revert": list(self.action.revert), "timeout": self.action.timeout}
            self._journal(Injection(self.kind, self.label, self.remote.name,
                                    self.remote.reach(), undo))  # fmt: skip
        self._started = True
        return self._run(self.action.argv)


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
    """The injector of an event on one host; None for a prompt (never on a host)."""
    from arraybench.events.injectors import NetemInjector

    remote = sh.Remote(spec)
    action = event.action
    if isinstance(action, ThrottleAction):
        return HostThrottle(remote, action)
    if isinstance(action, SignalAction):
        return HostSignal(remote, action)
    if isinstance(action, NetemAction):
        return HostNetem(remote, action, NetemInjector(action).netem_args())
    if isinstance(action, ScsiOfflineAction):
        return HostScsiOffline(remote, action)
    if isinstance(action, RunAction):
        return HostCommand(remote, action)
    return None


def event_hosts(event: Event, point_hosts: Sequence[str]) -> list[str]:
    """The hosts an event acts on in a point: those named that take part in it (all of the
    point's when none are named); [] for the controller (a prompt, a run without host)."""
    if event.named_hosts:
        return [h for h in event.named_hosts if h in point_hosts]
    if event.kind in ("prompt", "run"):
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
