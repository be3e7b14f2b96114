"""Journal records read back, validated: what `arraybench revert` may act on.

A journal (the injections table of the store, a run's host-tuning journal) is a file anyone
can edit, and a crash can cut it. Nothing read back from one is trusted: every field is
checked for its type, its keys against the ones the writer writes, every name against a safe
pattern, and what revert touches is rebuilt from those names (a cgroup folder under the
cgroup mount, a SCSI state file under /sys/block), never taken whole. SSH settings are never
read from a journal: the host is named, and how to reach it comes from the run's plan.

`check_injection` turns one stored row into a `CheckedInjection` (each kind checks its own
undo record: events/event_kinds/); a record that does not pass raises `Refused`, whose text says
what was refused and why (one line).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from arraybench.events.event_kinds import runtime_of
from arraybench.records import Damaged

# a kernel block device name: sda, nvme0n1, dm-3, loop7, cciss!c0d0; never "." or a "/"
BLOCK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_!+-]{0,63}")
HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # plan.model.NAME_PATTERN
REACH_KEYS = {"name", "address", "port", "ssh"}  # written by older versions; only `name` is read
SERVER = "fio_server"  # a fio server started on a host: journaled too, no event kind


class Refused(Exception):
    """A journal record that revert will not act on; `str()` says why, in one line."""


@dataclass(frozen=True)
class ServerUndo:
    """A fio server on a host: its address, port and pid file come from the plan's host."""


@dataclass(frozen=True)
class CheckedInjection:
    kind: str
    label: str
    host: str  # "" for this machine
    undo: object  # its kind's checked undo record (ServerUndo for a fio server)


def text(value: object, what: str, pattern: re.Pattern[str] | None = None) -> str:
    """A string field, matched whole against `pattern` when given."""
    if not isinstance(value, str):
        raise Refused(f"{what} is {type(value).__name__}, not text")
    if pattern is not None and not pattern.fullmatch(value):
        raise Refused(f"{what} {value!r} is not a safe name")
    return value


def json_object(value: object, what: str) -> dict[str, object]:
    """A JSON object (any keys); Refused for anything else, a column that was not JSON too."""
    if isinstance(value, Damaged):
        raise Refused(f"{what}: {value}")
    if not isinstance(value, dict):
        raise Refused(f"{what} is {type_word(value)}, not an object")
    return value


def mapping(value: object, what: str, allowed: set[str], required: set[str]) -> dict[str, object]:
    """A JSON object with only `allowed` keys and every `required` one."""
    value = json_object(value, what)
    extra = sorted(str(k) for k in value if k not in allowed)
    if extra:
        raise Refused(f"{what} has unknown key(s) {', '.join(map(repr, extra))}")
    missing = sorted(required - value.keys())
    if missing:
        raise Refused(f"{what} lacks {', '.join(missing)}")
    return value


def type_word(value: object) -> str:
    """A JSON value's type as a refusal says it."""
    return "null" if value is None else type(value).__name__


def _server(undo: Mapping[str, object], host: str) -> ServerUndo:
    if not host:
        raise Refused("a fio server entry without its host")
    mapping(undo, "undo", {"pidfile", "address", "port"}, set())
    return ServerUndo()


def _checker(kind: str) -> Callable[[Mapping[str, object], str], object] | None:
    if kind == SERVER:
        return _server
    runtime = runtime_of(kind)
    return runtime.check if runtime is not None else None


def check_injection(
    kind: object, label: object, host: object, reach: object, undo: object
) -> CheckedInjection:
    """One injections row as revert may act on it; Refused saying why it may not."""
    kind = text(kind, "kind")
    check = _checker(kind)
    if check is None:
        raise Refused(f"unknown injection kind {kind!r}")
    label = text(label, "label")
    host = text(host, "host")
    if host:
        text(host, "host", HOST_NAME)
    reach = mapping(reach, "reach", REACH_KEYS, {"name"} if host else set())
    if reach.get("name", "") != host:
        raise Refused(f"reach names host {reach.get('name')!r}, the row {host!r}")
    return CheckedInjection(kind, label, host, check(json_object(undo, "undo"), host))
