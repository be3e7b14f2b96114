"""Undo an injection from its validated journal entry alone, on this machine or on a host
over SSH: what `arraybench revert` does with the injections a killed controller left in place.

Every path is rebuilt from the entry's checked names (events.entries), each kind's undo in
its module (events/event_kinds/). A host is reached with the `Remote` the caller built from the
run's plan, never with settings read from the journal.
"""

from __future__ import annotations

from arraybench.events import remote as sh
from arraybench.events.entries import CheckedInjection, Refused, ServerUndo
from arraybench.events.event_kinds import runtime_of
from arraybench.hosts.server import remote_pidfile, tcp_problem


def undo(entry: CheckedInjection, remote: sh.Remote | None) -> str:
    """Undo one injection (`remote`: its host, None for this machine); what was done (one
    line); InjectorError when it could not be, Refused when it may not be."""
    if bool(entry.host) != (remote is not None):
        raise Refused(f"host {entry.host or '(this machine)'} cannot be reached")
    where = f"host {entry.host}" if entry.host else "this machine"
    return f"{entry.label} ({entry.kind}, {where}): {_undo(entry, remote)}"


def _undo(entry: CheckedInjection, remote: sh.Remote | None) -> str:
    if isinstance(entry.undo, ServerUndo):
        assert remote is not None
        return _server(remote)
    runtime = runtime_of(entry.kind)
    if runtime is None or runtime.undo is None:
        raise Refused(f"unknown injection kind {entry.kind!r}")
    return runtime.undo(entry.undo, remote)


def _server(remote: sh.Remote) -> str:
    """A fio server started over SSH by a controller that died: it and its jobs ended. Its
    address, port and pid file are the plan's host's, never the journal's."""
    spec = remote.spec
    if tcp_problem(spec.address, spec.port, timeout_s=1.0) is not None:
        return "not running"
    ended = sh.stop_server(remote, remote_pidfile(spec), spec.address, spec.port)
    return f"stopped ({len(ended)} process(es) ended)"
