"""`signal` at run time: SIGSTOP to the chosen processes (the load's: the leaves of fio's
tree, here or under a host's fio server), SIGCONT at revert and in `arraybench revert`."""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arraybench.events import remote as sh
from arraybench.events.entries import Refused, mapping, type_word
from arraybench.events.errors import InjectorError
from arraybench.events.event_kinds import Runtime
from arraybench.events.host_injectors import HostInjector
from arraybench.events.injectors import Injector, PidSource
from arraybench.events.journal import Injection
from arraybench.events.procs import find_processes, read_pid_file
from arraybench.plan.event_kinds.signal import SignalAction
from arraybench.system.procs import leaves, processes_of
from arraybench.system.signals import send_each

PID_MAX = 1 << 22  # the kernel's upper bound of pid_max

# args: MODE VALUE [FULL]: load PIDFILE | pid N | pid_file PATH | process REGEX [full]
_SIGNAL_FIND = (
    sh.TREE_SH
    + r"""case $1 in
  load) server "$2"; tree "$spid" leaves;;
  pid) echo "$2";;
  pid_file) read -r p rest < "$2" || exit 3; echo "$p";;
  process) if [ "$3" = full ]; then pgrep -f -- "$2"; else pgrep -- "$2"; fi \
    | grep -vx -e "$$" -e "$PPID";;
esac
exit 0
"""
)

# args: SIGNAL PID...: one line per pid signalled
_KILL = r"""sig=$1; shift
for p in "$@"; do kill "-$sig" "$p" 2>/dev/null && echo "$p"; done
exit 0
"""


class SignalInjector(Injector):
    """SIGSTOP the chosen processes; SIGCONT them at revert."""

    kind = "signal"

    @property
    def applied(self) -> bool:
        return bool(self._stopped)

    def __init__(self, action: SignalAction, load: PidSource | None = None) -> None:
        self.action = action
        self._stopped: list[int] = []
        self._load = load

    def targets(self) -> list[int]:
        a = self.action
        if a.load:  # fio's job processes: the leaves of its tree
            return leaves(processes_of(self._load() if self._load else []))
        if a.pid is not None:
            return [a.pid]
        if a.pid_file is not None:
            return [read_pid_file(a.pid_file)]
        assert a.process is not None
        return find_processes(a.process, full=a.full)

    def apply(self) -> str:
        if self._stopped:
            return "already applied"
        pids = self.targets()
        if not pids:
            raise InjectorError(f"no process matches {describe_selector(self.action)}")
        self._journal(Injection(self.kind, self.label, undo={"pids": pids}))
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                continue
            except PermissionError as exc:
                raise InjectorError(f"SIGSTOP to {pid}: {exc.strerror}", "run as root") from None
            self._stopped.append(pid)
        if not self._stopped:
            raise InjectorError(f"no process left to stop (pids {pids} are gone)")
        return f"SIGSTOP sent to {_pid_list(self._stopped)}"

    def revert(self) -> str:
        if not self._stopped:
            return "nothing to revert"
        resumed, gone = send_each(self._stopped, signal.SIGCONT)
        self._stopped = []
        self._undone()
        return f"SIGCONT sent to {_pid_list(resumed)}" + (
            f" ({_pid_list(gone)} gone)" if gone else ""
        )


def describe_selector(action: SignalAction) -> str:
    if action.load:
        return "the load (fio's job processes)"
    if action.pid is not None:
        return f"pid {action.pid}"
    if action.pid_file is not None:
        return f"the pid in {action.pid_file}"
    return f"/{action.process}/"


def _pid_list(pids: list[int]) -> str:
    shown = ", ".join(str(p) for p in pids[:10])
    more = f" and {len(pids) - 10} more" if len(pids) > 10 else ""
    return f"{len(pids)} process(es): {shown}{more}" if pids else "no process"


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
        pids = signal_targets(self.remote, self._selector())
        if not pids:
            raise InjectorError(f"host {self.remote.name}: no process matches "
                                f"{describe_selector(self.action)}")  # fmt: skip
        self._journal_here({"pids": pids})
        self._stopped = pids  # a revert sends SIGCONT to all, stopped or not
        done = send_signal(self.remote, "STOP", pids)
        if not done:
            self._stopped = []
            self._undone()
            raise InjectorError(f"host {self.remote.name}: no process left to stop ({pids})")
        self._stopped = done
        return f"SIGSTOP sent to {_pid_list(done)}"

    def revert(self) -> str:
        if not self._stopped:
            return "nothing to revert"
        done = send_signal(self.remote, "CONT", self._stopped)
        self._stopped = []
        self._undone()
        return f"SIGCONT sent to {_pid_list(done)}"


def signal_targets(remote: sh.Remote, selector: list[str]) -> list[int]:
    lines = remote.must("finding the processes to signal", _SIGNAL_FIND, *selector)
    return sorted({int(x) for x in lines if x.strip().isdigit()})


def send_signal(remote: sh.Remote, name: str, pids: list[int]) -> list[int]:
    lines = remote.must(f"SIG{name}", _KILL, name, *map(str, pids))
    return [int(x) for x in lines if x.strip().isdigit()]


# ------------------------------------------------------------------ the journal, revert


@dataclass(frozen=True)
class PidsUndo:
    pids: tuple[int, ...]


def _pid(value: object) -> int:
    # bool is an int to Python; 0 and -1 are process groups or everything to kill(2)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 < value < PID_MAX:
        raise Refused(f"pid {value!r} is not a process id above 1")
    return value


def _check(undo: Mapping[str, object], host: str) -> PidsUndo:
    mapping(undo, "undo", {"pids"}, {"pids"})
    pids = undo["pids"]
    if not isinstance(pids, list):
        raise Refused(f"pids is {type_word(pids)}, not a list")
    return PidsUndo(tuple(_pid(p) for p in pids))


def _undo(u: Any, remote: sh.Remote | None) -> str:
    assert isinstance(u, PidsUndo)
    pids = list(u.pids)
    if remote is not None:
        done = send_signal(remote, "CONT", pids)
    else:
        try:
            done, _ = send_each(pids, signal.SIGCONT)
        except PermissionError as exc:
            raise InjectorError(
                f"SIGCONT to {exc.filename}: {exc.strerror}", "run as root"
            ) from None
    return f"SIGCONT sent to {len(done)} of {len(pids)} process(es)"


def _local(action: SignalAction, pids: PidSource, sys_root: str) -> Injector:
    return SignalInjector(action, pids)


RUNTIME = Runtime(_local, HostSignal, _check, _undo)
