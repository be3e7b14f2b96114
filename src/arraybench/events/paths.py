"""What the host sees of each target, to record beside events: visible or not, the
device-mapper multipath paths (active / failed), the SCSI state of the disks underneath.

`snapshot_paths(targets)` resolves each target: a file -> the block device holding it; a
block device -> itself; a stacked device (dm, md) -> down through /sys/block/X/slaves to the
disks at the bottom. Multipath maps are read with `dmsetup status` and `dmsetup table` (the
kernel's own view; the `multipathd` checker state is not consulted).

More: docs/internals.md, `events/paths.py`."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path

from arraybench.system.blockdev import block_name, dm_name, leaf_disks, name_of, stack
from arraybench.units import format_size

DMSETUP_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class MultipathPath:
    device: str  # major:minor as dm prints it
    name: str | None  # kernel name (sdc) when known
    group: int  # 1-based priority group
    group_state: str  # A active, E enabled, D disabled
    active: bool  # False: the kernel marked the path failed (F)
    fail_count: int


@dataclass(frozen=True)
class MultipathInfo:
    map_name: str
    paths: list[MultipathPath]
    groups: int
    next_group: int
    features: list[str] = field(default_factory=list)  # from the table: queue_if_no_path ...
    selectors: list[str] = field(default_factory=list)  # path selector of each group

    @property
    def total(self) -> int:
        return len(self.paths)

    @property
    def active(self) -> int:
        return sum(p.active for p in self.paths)

    @property
    def failed(self) -> int:
        return self.total - self.active

    def describe(self) -> str:
        failed = [p.name or p.device for p in self.paths if not p.active]
        text = f"multipath {self.map_name}: {self.active}/{self.total} paths active"
        if failed:
            text += f", {self.failed} failed ({', '.join(failed)})"
        return text


@dataclass(frozen=True)
class PathState:
    target: str
    device: str | None  # kernel name of the block device (the target's own, or its host's)
    is_file: bool
    visible: bool  # exists and its size could be read
    size_bytes: int | None
    error: str | None  # why it is not visible
    stack: list[str]  # devices below `device` (dm slaves ...), leaves last
    multipath: list[MultipathInfo]  # every multipath map in the stack
    scsi_states: dict[str, str]  # disk at the bottom -> /sys/block/X/device/state
    notes: list[str] = field(default_factory=list)  # e.g. dmsetup unavailable

    def describe(self) -> str:
        """`/dev/mapper/m: dm-3, visible, 10 GiB; multipath m: 2/4 paths active, 2 failed
        (sdc, sdd); sdc offline, sdd offline, sde running, sdf running`"""
        where = f"file on {self.device or 'no block device'}" if self.is_file else self.device
        if self.visible:
            size = format_size(self.size_bytes) if self.size_bytes is not None else "size ?"
            head = f"{self.target}: {where}, visible, {size}"
        else:
            head = f"{self.target}: {where or '?'}, NOT visible ({self.error})"
        parts = [head, *(m.describe() for m in self.multipath)]
        if self.scsi_states:
            parts.append(", ".join(f"{d} {s}" for d, s in sorted(self.scsi_states.items())))
        return "; ".join(parts)


# --------------------------------------------------------------------------- dm parsing


class _Tokens:
    def __init__(self, text: str) -> None:
        self.words = text.split()
        self.i = 0

    def take(self) -> str:
        if self.i >= len(self.words):
            raise ValueError("the line ends too early")
        word = self.words[self.i]
        self.i += 1
        return word

    def number(self) -> int:
        word = self.take()
        if not word.isdigit():
            raise ValueError(f"expected a count, found {word!r}")
        return int(word)

    def counted(self) -> list[str]:
        return [self.take() for _ in range(self.number())]


def _after_target(line: str) -> str:
    """The part of a dmsetup line after `<start> <length> multipath`."""
    words = line.split()
    for k, word in enumerate(words):
        if word == "multipath":
            return " ".join(words[k + 1 :])
    raise ValueError("no multipath target in the line")


def parse_multipath_status(line: str) -> tuple[int, int, list[MultipathPath]]:
    """(groups, next group, paths) from one `dmsetup status` line of a multipath target.

    Lines may start with the map name (`name: 0 2097152 multipath ...`, as `dmsetup status`
    without a name prints). ValueError when the line does not follow the format.
    """
    t = _Tokens(_after_target(line))
    t.counted()  # feature args (queueing state, pg_init count)
    t.counted()  # hardware handler args
    groups = t.number()
    next_group = t.number()
    paths: list[MultipathPath] = []
    for group in range(1, groups + 1):
        state = t.take()
        if state not in ("A", "E", "D"):
            raise ValueError(f"group {group}: state {state!r} is none of A, E, D")
        t.counted()  # path selector status
        npaths = t.number()
        per_path = t.number()
        for _ in range(npaths):
            device = t.take()
            flag = t.take()
            if flag not in ("A", "F"):
                raise ValueError(f"path {device}: state {flag!r} is neither A nor F")
            fails = t.number()
            for _ in range(per_path):
                t.take()
            paths.append(MultipathPath(device, None, group, state, flag == "A", fails))
    return groups, next_group, paths


def parse_multipath_table(line: str) -> tuple[list[str], list[str], list[str]]:
    """(features, path selectors per group, path devices) from one `dmsetup table` line."""
    t = _Tokens(_after_target(line))
    features = t.counted()
    t.counted()  # hardware handler and its args
    groups = t.number()
    t.number()  # initial group
    selectors, devices = [], []
    for _ in range(groups):
        selectors.append(t.take())
        t.counted()  # selector args
        npaths = t.number()
        per_path = t.number()
        for _ in range(npaths):
            devices.append(t.take())
            for _ in range(per_path):
                t.take()
    return features, selectors, devices


def multipath_info(
    map_name: str, status: str, table: str = "", sys_root: str = "/sys"
) -> MultipathInfo | None:
    """The multipath target of a map from dmsetup's output; None when it has none."""
    status_line = next((ln for ln in status.splitlines() if " multipath " in f" {ln} "), None)
    if status_line is None:
        return None
    groups, next_group, paths = parse_multipath_status(status_line)
    paths = [replace(p, name=_name_of(p.device, sys_root)) for p in paths]
    features: list[str] = []
    selectors: list[str] = []
    table_line = next((ln for ln in table.splitlines() if " multipath " in f" {ln} "), None)
    if table_line is not None:
        features, selectors, _ = parse_multipath_table(table_line)
    return MultipathInfo(map_name, paths, groups, next_group, features, selectors)


def _name_of(device: str, sys_root: str) -> str | None:
    """sdc for 8:32 (via /sys/dev/block); a name dm printed as such stays."""
    if ":" not in device:
        return device
    major, _, minor = device.partition(":")
    if not (major.isdigit() and minor.isdigit()):
        return None
    return name_of(int(major), int(minor), sys_root)


# --------------------------------------------------------------------------- snapshot


def _dmsetup(*args: str) -> str | None:
    binary = shutil.which("dmsetup") or (
        "/usr/sbin/dmsetup" if os.access("/usr/sbin/dmsetup", os.X_OK) else None
    )
    if binary is None:
        return None
    try:
        done = subprocess.run(
            [binary, *args],
            capture_output=True,
            text=True,
            timeout=DMSETUP_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _read_size(path: str, is_block: bool) -> int:
    if not is_block:
        if not os.access(path, os.R_OK):
            raise PermissionError(13, "not readable")
        return os.stat(path).st_size
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)


def snapshot_path(target: str, sys_root: str = "/sys") -> PathState:
    """One target's state now (see the module doc)."""
    notes: list[str] = []
    try:
        st = os.stat(target)
    except OSError as exc:
        return PathState(target, None, False, False, None, exc.strerror or str(exc), [], [], {})
    is_block = stat.S_ISBLK(st.st_mode)
    device = block_name(target, sys_root)
    visible, size, error = True, None, None
    try:
        size = _read_size(target, is_block)
    except OSError as exc:
        visible, error = False, exc.strerror or str(exc)
    below = stack(device, sys_root) if device else []
    maps: list[MultipathInfo] = []
    for dev in [d for d in [device, *below] if d and d.startswith("dm-")]:
        map_name = dm_name(dev, sys_root)
        if map_name is None:
            continue
        status = _dmsetup("status", map_name)
        if status is None:
            notes.append(f"dmsetup status {map_name} failed or dmsetup is missing")
            continue
        if " multipath " not in f" {status} ":
            continue
        try:
            info = multipath_info(map_name, status, _dmsetup("table", map_name) or "", sys_root)
        except ValueError as exc:
            notes.append(f"dmsetup output of {map_name} not understood: {exc}")
            continue
        if info is not None:
            maps.append(info)
    states: dict[str, str] = {}
    for disk in leaf_disks(device, sys_root) if device else []:
        try:
            state = (Path(sys_root) / "block" / disk / "device" / "state").read_text().strip()
        except OSError:
            continue  # not a SCSI disk (loop, nvme, virtio)
        states[disk] = state
    return PathState(target, device, not is_block, visible, size, error, below, maps, states, notes)


def snapshot_paths(targets: list[str], sys_root: str = "/sys") -> dict[str, PathState]:
    """Every target's state now, by target path."""
    return {target: snapshot_path(target, sys_root) for target in targets}
