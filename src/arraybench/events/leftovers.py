"""Undo an injection from its journal entry alone, on this machine or on a host over SSH:
what `arraybench revert` does with the injections a killed controller left in place."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

from arraybench.events import cgroup as cgroups
from arraybench.events import remote as sh
from arraybench.events.errors import InjectorError
from arraybench.events.host_injectors import netem_delete
from arraybench.events.injectors import NetemInjector, run_command
from arraybench.events.journal import Injection
from arraybench.hosts.server import tcp_problem
from arraybench.plan.events import NetemAction


def undo(entry: Injection) -> str:
    """Undo one injection; what was done (one line), InjectorError when it could not be."""
    where = f"host {entry.host}" if entry.host else "this machine"
    how = UNDO.get(entry.kind)
    if how is None:
        raise InjectorError(f"unknown injection kind {entry.kind!r} in the journal", None)
    return f"{entry.label} ({entry.kind}, {where}): {how(entry)}"


def _throttle(entry: Injection) -> str:
    u = entry.undo
    if entry.reach:
        remote = sh.remote_from(entry.reach)
        return sh.throttle_revert(remote, str(u["folder"]), str(u.get("origin") or ""),
                                  str(u.get("number") or ""))  # fmt: skip
    folder = Path(u["folder"])
    if not folder.is_dir():
        return f"{folder} is gone already"
    cg = cgroups.IoCgroup(int(u["version"]), Path(u["root"]))  # type: ignore[arg-type]
    none: dict[str, int | None] = dict.fromkeys(
        ("read_iops", "write_iops", "read_bps", "write_bps")
    )
    try:
        for name, text in cgroups.limit_lines(cg, str(u["device"]), none).items():
            cgroups.write_file(folder / name, text)
        back = cgroups.folder_of(cg, str(u.get("origin") or "/"))
        back = back if back.is_dir() else cg.root
        moved = 0
        for _ in range(3):
            for pid in cgroups.members(folder):
                moved += cgroups.move_process(cg, back, pid)
        cgroups.remove_folder(folder)
    except OSError as exc:
        raise InjectorError(f"throttle {folder}: {exc.strerror or exc}",
                            f"check {folder} by hand") from None  # fmt: skip
    return f"limits removed, {moved} process(es) moved back to {back}, {folder} removed"


def _signal(entry: Injection) -> str:
    pids = [int(p) for p in entry.undo.get("pids", [])]
    if entry.reach:
        done = sh.send_signal(sh.remote_from(entry.reach), "CONT", pids)
    else:
        done = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGCONT)
                done.append(pid)
            except ProcessLookupError:
                continue
            except PermissionError as exc:
                raise InjectorError(f"SIGCONT to {pid}: {exc.strerror}", "run as root") from None
    return f"SIGCONT sent to {len(done)} of {len(pids)} process(es)"


def _netem(entry: Injection) -> str:
    interface, netns = str(entry.undo["interface"]), entry.undo.get("netns") or ""
    if entry.reach:
        return netem_delete(sh.remote_from(entry.reach), interface, netns)
    injector = NetemInjector(NetemAction(interface=interface, netns=netns or None, delay=0.0))
    injector._applied = True  # the journal says it was applied: delete the root qdisc
    return injector.revert()


def _scsi(entry: Injection) -> str:
    state_file = str(entry.undo["state_file"])
    if entry.reach:
        sh.write_state(sh.remote_from(entry.reach), state_file, "running")
    else:
        try:
            cgroups.write_file(Path(state_file), "running")
        except OSError as exc:
            raise InjectorError(f"{state_file}: {exc.strerror or exc}", "run as root") from None
    return f"{state_file}: running"


def _run(entry: Injection) -> str:
    argv = [str(a) for a in entry.undo["revert"]]
    timeout = float(entry.undo.get("timeout") or 60.0)
    if entry.reach:
        done = sh.run_argv(sh.remote_from(entry.reach), argv, timeout)
        if done.returncode != 0:
            raise InjectorError(f"`{' '.join(argv)}` exited with code {done.returncode}", None)
        return f"`{' '.join(argv)}` done"
    result = run_command(argv, timeout)
    if result.outcome != "ok":
        raise InjectorError(result.detail, None)
    return result.detail


def _server(entry: Injection) -> str:
    """A fio server started over SSH by a controller that died: it and its jobs ended."""
    remote = sh.remote_from(entry.reach)
    address, port = str(entry.undo["address"]), int(entry.undo["port"])
    if tcp_problem(address, port, timeout_s=1.0) is not None:
        return "not running"
    ended = sh.stop_server(remote, str(entry.undo["pidfile"]), address, port)
    return f"stopped ({len(ended)} process(es) ended)"


# journal kind -> how its injection is undone
UNDO: dict[str, Callable[[Injection], str]] = {
    "throttle": _throttle, "signal": _signal, "netem": _netem, "scsi_offline": _scsi,
    "run": _run, "fio_server": _server,
}  # fmt: skip
