"""Undo an injection from its validated journal entry alone, on this machine or on a host
over SSH: what `arraybench revert` does with the injections a killed controller left in place.

Every path is rebuilt from the entry's checked names (events.entries): a throttle's cgroup
only under a cgroup hierarchy this machine mounts, a SCSI state file only under /sys/block.
A host is reached with the `Remote` the caller built from the run's plan, never with
settings read from the journal.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arraybench.events import cgroup as cgroups
from arraybench.events import remote as sh
from arraybench.events.entries import (
    CgroupUndo,
    CheckedInjection,
    CommandUndo,
    HostCgroupUndo,
    NetemUndo,
    PidsUndo,
    Refused,
    ScsiUndo,
    ServerUndo,
)
from arraybench.events.errors import InjectorError
from arraybench.events.host_injectors import netem_delete
from arraybench.events.injectors import NetemInjector, run_command
from arraybench.hosts.server import remote_pidfile, tcp_problem
from arraybench.plan.events import NetemAction
from arraybench.system.signals import send_each


def undo(entry: CheckedInjection, remote: sh.Remote | None) -> str:
    """Undo one injection (`remote`: its host, None for this machine); what was done (one
    line); InjectorError when it could not be, Refused when it may not be."""
    if bool(entry.host) != (remote is not None):
        raise Refused(f"host {entry.host or '(this machine)'} cannot be reached")
    where = f"host {entry.host}" if entry.host else "this machine"
    how = UNDO[type(entry.undo)]
    return f"{entry.label} ({entry.kind}, {where}): {how(entry.undo, remote)}"


def _hierarchy(u: CgroupUndo) -> cgroups.IoCgroup:
    """The journal's hierarchy, if this machine mounts it (else the folder is no cgroup)."""
    for cg in cgroups.io_cgroups():
        if cg.root == u.root and cg.version == u.version:
            return cg
    raise Refused(f"{u.root} is not a cgroup v{u.version} mount of this machine")


def _throttle(u: Any, remote: sh.Remote | None) -> str:
    if isinstance(u, HostCgroupUndo):
        assert remote is not None
        return sh.throttle_revert(remote, u.folder, u.origin, u.number)
    assert isinstance(u, CgroupUndo)
    cg = _hierarchy(u)  # first: a folder elsewhere is never looked at
    folder = u.folder
    if not folder.is_dir():
        return f"{folder} is gone already"
    back = cgroups.folder_of(cg, u.origin)
    back = back if back.is_dir() else cg.root
    done = cgroups.release(cg, folder, u.device, lambda pid: u.origin)
    if done.problems:
        raise InjectorError(f"throttle {folder}: " + "; ".join(done.problems),
                            f"check {folder} by hand")  # fmt: skip
    return f"limits removed, {done.moved} process(es) moved back to {back}, {folder} removed"


def _signal(u: Any, remote: sh.Remote | None) -> str:
    assert isinstance(u, PidsUndo)
    pids = list(u.pids)
    if remote is not None:
        done = sh.send_signal(remote, "CONT", pids)
    else:
        try:
            done, _ = send_each(pids, signal.SIGCONT)
        except PermissionError as exc:
            raise InjectorError(
                f"SIGCONT to {exc.filename}: {exc.strerror}", "run as root"
            ) from None
    return f"SIGCONT sent to {len(done)} of {len(pids)} process(es)"


def _netem(u: Any, remote: sh.Remote | None) -> str:
    assert isinstance(u, NetemUndo)
    if remote is not None:
        return netem_delete(remote, u.interface, u.netns)
    injector = NetemInjector(NetemAction(interface=u.interface, netns=u.netns or None, delay=0.0))
    injector._applied = True  # the journal says it was applied: delete the root qdisc
    return injector.revert()


def _scsi(u: Any, remote: sh.Remote | None) -> str:
    assert isinstance(u, ScsiUndo)
    if remote is not None:
        sh.write_state(remote, u.state_file, "running")
        return f"{u.state_file}: running"
    state = Path(u.state_file)
    if not state.is_file():  # a file under sysfs is never created
        raise Refused(f"{u.device} is no SCSI disk here ({state} is missing)")
    try:
        cgroups.write_file(state, "running")
    except OSError as exc:
        raise InjectorError(f"{state}: {exc.strerror or exc}", "run as root") from None
    return f"{state}: running"


def _run(u: Any, remote: sh.Remote | None) -> str:
    assert isinstance(u, CommandUndo)
    argv = list(u.argv)
    if remote is not None:
        done = sh.run_argv(remote, argv, u.timeout)
        if done.returncode != 0:
            raise InjectorError(f"`{' '.join(argv)}` exited with code {done.returncode}", None)
        return f"`{' '.join(argv)}` done"
    result = run_command(argv, u.timeout)
    if result.outcome != "ok":
        raise InjectorError(result.detail, None)
    return result.detail


def _server(u: Any, remote: sh.Remote | None) -> str:
    """A fio server started over SSH by a controller that died: it and its jobs ended. Its
    address, port and pid file are the plan's host's, never the journal's."""
    assert isinstance(u, ServerUndo) and remote is not None
    spec = remote.spec
    if tcp_problem(spec.address, spec.port, timeout_s=1.0) is not None:
        return "not running"
    ended = sh.stop_server(remote, remote_pidfile(spec), spec.address, spec.port)
    return f"stopped ({len(ended)} process(es) ended)"


# the validated undo record -> how its injection is undone
UNDO: dict[type, Callable[[Any, sh.Remote | None], str]] = {
    CgroupUndo: _throttle, HostCgroupUndo: _throttle, PidsUndo: _signal, NetemUndo: _netem,
    ScsiUndo: _scsi, CommandUndo: _run, ServerUndo: _server,
}  # fmt: skip
