"""`netem` at run time: `tc qdisc replace dev IF root netem ...` here (in a netns if named) or
on a host over SSH; the undo deletes the root qdisc, and `arraybench revert` does so only on an
interface the run's plan names."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arraybench.events import remote as sh
from arraybench.events.entries import Refused, mapping, text
from arraybench.events.errors import InjectorError
from arraybench.events.event_kinds import Runtime
from arraybench.events.host_injectors import HostInjector
from arraybench.events.injectors import Injector, PidSource
from arraybench.events.journal import Injection
from arraybench.plan.event_kinds.netem import NetemAction
from arraybench.plan.events import Event

INTERFACE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:@-]{0,14}")  # IFNAMSIZ - 1
NETNS = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")  # a file under /run/netns

# args: NETNS IFACE TC-ARG...: the root qdisc before, then tc
_TC = r"""PATH=$PATH:/usr/sbin:/sbin; ns=$1; shift
if [ -n "$ns" ]; then set -- ip netns exec "$ns" tc "$@"; else set -- tc "$@"; fi
exec "$@"
"""


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for folder in ("/usr/sbin", "/sbin", "/usr/bin", "/bin"):
        candidate = os.path.join(folder, name)
        if os.access(candidate, os.X_OK):
            return candidate
    raise InjectorError(f"{name} is not installed", "install iproute2 (tc and ip)")


def _micro(seconds: float) -> str:
    return f"{round(seconds * 1e6)}us"


class NetemInjector(Injector):
    """`tc qdisc replace dev IF root netem ...`; revert deletes the root qdisc, which gives the
    interface its default qdisc back (a custom root qdisc that was there is not restored)."""

    kind = "netem"
    TIMEOUT_S = 15.0

    def __init__(self, action: NetemAction) -> None:
        self.action = action
        self._applied = False

    @property
    def applied(self) -> bool:
        return self._applied

    def _argv(self, *args: str) -> list[str]:
        prefix = [_tool("ip"), "netns", "exec", self.action.netns] if self.action.netns else []
        return [*prefix, _tool("tc"), *args]

    def netem_args(self) -> list[str]:
        a = self.action
        args = ["qdisc", "replace", "dev", a.interface, "root", "netem"]
        if a.delay is not None:
            args += ["delay", _micro(a.delay)]
            if a.jitter:
                args.append(_micro(a.jitter))
        if a.loss is not None:
            args += ["loss", f"{a.loss:g}%"]
        return args

    def _where(self) -> str:
        return self.action.interface + (
            f" (netns {self.action.netns})" if self.action.netns else ""
        )

    def _tc(self, *args: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                self._argv(*args),
                capture_output=True,
                text=True,
                timeout=self.TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise InjectorError(
                f"tc {' '.join(args)} did not answer in {self.TIMEOUT_S:g}s", outcome="timeout"
            ) from None

    def apply(self) -> str:
        before = self._tc("qdisc", "show", "dev", self.action.interface, "root")
        if before.returncode != 0:
            raise InjectorError(
                f"netem on {self._where()}: {before.stderr.strip() or 'tc failed'}",
                "check the interface name (and netns)",
            )
        args = self.netem_args()
        undo = {"interface": self.action.interface, "netns": self.action.netns}
        self._journal(Injection(self.kind, self.label, undo=undo))
        done = self._tc(*args)
        if done.returncode != 0:
            message = done.stderr.strip() or f"tc exited with code {done.returncode}"
            hint = (
                "this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM / modprobe sch_netem)"
                if "unknown" in message.lower()
                else "run as root"
            )
            self._undone()  # nothing was changed
            raise InjectorError(f"netem on {self._where()}: {message}", hint)
        self._applied = True
        previous = before.stdout.strip().split("\n")[0] if before.stdout.strip() else "none"
        return f"tc {' '.join(args[1:])} on {self._where()} (root qdisc before: {previous})"

    def revert(self) -> str:
        if not self._applied:
            return "nothing to revert"
        done = self._tc("qdisc", "del", "dev", self.action.interface, "root")
        message = done.stderr.strip()
        if not netem_deleted(done.returncode, message):
            raise InjectorError(f"removing netem from {self._where()}: {message}")
        self._applied = False
        self._undone()
        return f"netem removed from {self._where()}"


def netem_deleted(returncode: int, said: str) -> bool:
    """Whether `tc qdisc del ... root` left no netem: it did, or tc said there was none (or
    no such interface any more), here or on a host alike."""
    return returncode == 0 or any(
        text in said for text in ("handle of zero", "No such file", "Cannot find device")
    )


class HostNetem(HostInjector):
    """tc netem as the root qdisc of an interface of the host."""

    kind = "netem"

    def __init__(self, remote: sh.Remote, action: NetemAction, args: list[str]) -> None:
        super().__init__(remote)
        self.action = action
        self.args = args  # NetemInjector.netem_args()
        self._applied = False

    @property
    def applied(self) -> bool:
        return self._applied

    def apply(self) -> str:
        where = f"host {self.remote.name} {self.action.interface}"
        netns = self.action.netns or ""
        self._journal_here({"interface": self.action.interface, "netns": self.action.netns})
        done = tc(self.remote, netns, *self.args)
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
    done = tc(remote, netns, "qdisc", "del", "dev", interface, "root")
    said = done.stderr.strip()
    if not netem_deleted(done.returncode, said):
        raise InjectorError(f"host {remote.name}: removing netem from {interface}: {said}")
    return f"netem removed from host {remote.name} {interface}"


def tc(remote: sh.Remote, netns: str, *args: str) -> subprocess.CompletedProcess[str]:
    return remote.run(_TC, netns, *args)


# ------------------------------------------------------------------ the journal, revert


@dataclass(frozen=True)
class NetemUndo:
    interface: str
    netns: str  # "" for the current namespace


def _check(undo: Mapping[str, object], host: str) -> NetemUndo:
    mapping(undo, "undo", {"interface", "netns"}, {"interface"})
    interface = text(undo["interface"], "interface", INTERFACE)
    if interface in (".", ".."):
        raise Refused(f"interface {interface!r} is not an interface name")
    netns = undo.get("netns") or ""
    netns = text(netns, "netns", NETNS) if netns else ""
    if netns in (".", ".."):
        raise Refused(f"netns {netns!r} is not a namespace name")
    return NetemUndo(interface, netns)


def _undo(u: Any, remote: sh.Remote | None) -> str:
    assert isinstance(u, NetemUndo)
    if remote is not None:
        return netem_delete(remote, u.interface, u.netns)
    injector = NetemInjector(NetemAction(interface=u.interface, netns=u.netns or None, delay=0.0))
    injector._applied = True  # the journal says it was applied: delete the root qdisc
    return injector.revert()


def _named_by(u: Any, events: list[Event]) -> str | None:
    assert isinstance(u, NetemUndo)
    interfaces = {(e.action.interface, e.action.netns or "") for e in events
                  if isinstance(e.action, NetemAction)}  # fmt: skip
    if (u.interface, u.netns) not in interfaces:
        where = f" in netns {u.netns}" if u.netns else ""
        return f"interface {u.interface}{where} has no netem event in the run's plan"
    return None


def _local(action: NetemAction, pids: PidSource, sys_root: str) -> Injector:
    return NetemInjector(action)


def _host(remote: sh.Remote, action: NetemAction) -> Injector:
    return HostNetem(remote, action, NetemInjector(action).netem_args())


RUNTIME = Runtime(_local, _host, _check, _undo, plan_guard=_named_by)
