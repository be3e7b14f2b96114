"""Journal records read back, validated: what `arraybench revert` may act on.

A journal (the injections table of the store, a run's host-tuning journal) is a file anyone
can edit, and a crash can cut it. Nothing read back from one is trusted: every field is
checked for its type, its keys against the ones the writer writes, every name against a safe
pattern, and what revert touches is rebuilt from those names (a cgroup folder under the
cgroup mount, a SCSI state file under /sys/block), never taken whole. SSH settings are never
read from a journal: the host is named, and how to reach it comes from the run's plan.

`check_injection` turns one stored row into a `CheckedInjection`; a record that does not pass
raises `Refused`, whose text says what was refused and why (one line).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from arraybench.records import Damaged

# a kernel block device name: sda, nvme0n1, dm-3, loop7, cciss!c0d0; never "." or a "/"
BLOCK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_!+-]{0,63}")
HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # plan.model.NAME_PATTERN
INTERFACE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:@-]{0,14}")  # IFNAMSIZ - 1
NETNS = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")  # a file under /run/netns
DEVICE_NUMBER = re.compile(r"[0-9]{1,10}:[0-9]{1,10}")  # MAJ:MIN
CGROUP_PATH = re.compile(r"(/[A-Za-z0-9_.@:+=,\\-]{1,255}){0,32}/?")
LOCAL_CGROUP = re.compile(r"arraybench-ev-[0-9]{1,10}-[0-9]{1,10}")
HOST_CGROUP = re.compile(r"arraybench-ev-[0-9]{1,10}-[A-Za-z0-9][A-Za-z0-9_.-]{0,63}-[0-9]{1,10}")
PID_MAX = 1 << 22  # the kernel's upper bound of pid_max
MAX_ARGV = 256
MAX_TIMEOUT_S = 86400.0
REACH_KEYS = {"name", "address", "port", "ssh"}  # written by older versions; only `name` is read
KINDS = ("throttle", "signal", "netem", "scsi_offline", "run", "fio_server")


class Refused(Exception):
    """A journal record that revert will not act on; `str()` says why, in one line."""


@dataclass(frozen=True)
class CgroupUndo:
    """A throttle on this machine: its cgroup folder, a child of the hierarchy's root."""

    version: int
    root: Path
    folder: Path
    device: str  # MAJ:MIN
    origin: str  # the cgroup the load came from, inside the hierarchy


@dataclass(frozen=True)
class HostCgroupUndo:
    """A throttle on a host: the folder's name under the host's cgroup root."""

    folder: str
    origin: str
    number: str  # MAJ:MIN, "" when the apply did not get that far


@dataclass(frozen=True)
class PidsUndo:
    pids: tuple[int, ...]


@dataclass(frozen=True)
class NetemUndo:
    interface: str
    netns: str  # "" for the current namespace


@dataclass(frozen=True)
class ScsiUndo:
    device: str  # a block device name

    @property
    def state_file(self) -> str:
        return f"/sys/block/{self.device}/device/state"


@dataclass(frozen=True)
class CommandUndo:
    argv: tuple[str, ...]
    timeout: float


@dataclass(frozen=True)
class ServerUndo:
    """A fio server on a host: its address, port and pid file come from the plan's host."""


Undo = CgroupUndo | HostCgroupUndo | PidsUndo | NetemUndo | ScsiUndo | CommandUndo | ServerUndo


@dataclass(frozen=True)
class CheckedInjection:
    kind: str
    label: str
    host: str  # "" for this machine
    undo: Undo


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
        raise Refused(f"{what} is {_kind_of(value)}, not an object")
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


def _kind_of(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _pid(value: object) -> int:
    # bool is an int to Python; 0 and -1 are process groups or everything to kill(2)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 < value < PID_MAX:
        raise Refused(f"pid {value!r} is not a process id above 1")
    return value


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Refused(f"{what} {value!r} is not a number")
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT_S):
        raise Refused(f"{what} {value!r} is not between 0 and {MAX_TIMEOUT_S:g} seconds")
    return float(value)


def _cgroup_path(value: object) -> str:
    path = text(value, "origin cgroup", CGROUP_PATH)
    if any(part in (".", "..") for part in path.split("/")):
        raise Refused(f"origin cgroup {path!r} climbs out of the hierarchy")
    return path


def _throttle(undo: Mapping[str, object], host: str) -> Undo:
    if host:
        mapping(undo, "undo", {"pidfile", "folder", "device", "number", "origin"}, {"folder"})
        folder = text(undo["folder"], "cgroup folder", HOST_CGROUP)
        number = undo.get("number") or ""
        number = text(number, "device number", DEVICE_NUMBER) if number else ""
        origin = undo.get("origin") or ""
        return HostCgroupUndo(folder, _cgroup_path(origin) if origin else "", number)
    mapping(undo, "undo", {"version", "root", "folder", "device", "origin"},
            {"version", "root", "folder", "device"})  # fmt: skip
    version = undo["version"]
    if version not in (1, 2) or isinstance(version, bool):
        raise Refused(f"cgroup version {version!r} is neither 1 nor 2")
    root = Path(text(undo["root"], "cgroup root"))
    if not root.is_absolute() or ".." in root.parts:
        raise Refused(f"cgroup root {str(root)!r} is not an absolute path")
    path = Path(text(undo["folder"], "cgroup folder"))
    if path.parent != root or not LOCAL_CGROUP.fullmatch(path.name):
        raise Refused(f"cgroup folder {str(path)!r} is not an arraybench cgroup under {root}")
    device = text(undo["device"], "device number", DEVICE_NUMBER)
    origin = undo.get("origin") or "/"
    return CgroupUndo(int(str(version)), root, path, device, _cgroup_path(origin))


def _signal(undo: Mapping[str, object], host: str) -> Undo:
    mapping(undo, "undo", {"pids"}, {"pids"})
    pids = undo["pids"]
    if not isinstance(pids, list):
        raise Refused(f"pids is {_kind_of(pids)}, not a list")
    return PidsUndo(tuple(_pid(p) for p in pids))


def _netem(undo: Mapping[str, object], host: str) -> Undo:
    mapping(undo, "undo", {"interface", "netns"}, {"interface"})
    interface = text(undo["interface"], "interface", INTERFACE)
    if interface in (".", ".."):
        raise Refused(f"interface {interface!r} is not an interface name")
    netns = undo.get("netns") or ""
    netns = text(netns, "netns", NETNS) if netns else ""
    if netns in (".", ".."):
        raise Refused(f"netns {netns!r} is not a namespace name")
    return NetemUndo(interface, netns)


def _scsi(undo: Mapping[str, object], host: str) -> Undo:
    mapping(undo, "undo", {"state_file"}, {"state_file"})
    path = text(undo["state_file"], "state_file")
    parts = path.split("/")  # /sys/block/NAME/device/state, nothing else
    if len(parts) != 6 or parts[:3] != ["", "sys", "block"] or parts[4:] != ["device", "state"]:
        raise Refused(f"state_file {path!r} is not /sys/block/DEVICE/device/state")
    return ScsiUndo(text(parts[3], "SCSI device", BLOCK_NAME))


def _run(undo: Mapping[str, object], host: str) -> Undo:
    mapping(undo, "undo", {"revert", "timeout"}, {"revert"})
    argv = undo["revert"]
    if not isinstance(argv, list) or not argv or len(argv) > MAX_ARGV:
        raise Refused(f"revert is {_kind_of(argv)}, not a list of 1 to {MAX_ARGV} arguments")
    words = tuple(text(a, "revert argument") for a in argv)
    if not words[0] or any("\0" in w for w in words):
        raise Refused("revert has an empty command or a NUL byte")
    timeout = undo.get("timeout")
    return CommandUndo(words, 60.0 if timeout is None else _number(timeout, "timeout"))


def _server(undo: Mapping[str, object], host: str) -> Undo:
    if not host:
        raise Refused("a fio server entry without its host")
    mapping(undo, "undo", {"pidfile", "address", "port"}, set())
    return ServerUndo()


CHECKS = {"throttle": _throttle, "signal": _signal, "netem": _netem,
          "scsi_offline": _scsi, "run": _run, "fio_server": _server}  # fmt: skip


def check_injection(
    kind: object, label: object, host: object, reach: object, undo: object
) -> CheckedInjection:
    """One injections row as revert may act on it; Refused saying why it may not."""
    kind = text(kind, "kind")
    if kind not in CHECKS:
        raise Refused(f"unknown injection kind {kind!r}")
    label = text(label, "label")
    host = text(host, "host")
    if host:
        text(host, "host", HOST_NAME)
    reach = mapping(reach, "reach", REACH_KEYS, {"name"} if host else set())
    if reach.get("name", "") != host:
        raise Refused(f"reach names host {reach.get('name')!r}, the row {host!r}")
    return CheckedInjection(kind, label, host, CHECKS[kind](json_object(undo, "undo"), host))
