"""Block devices in sysfs: the one `path -> device` of arraybench.

A path's device is the block device it is (its own number, st_rdev) or, for anything else,
the device of the filesystem holding it (st_dev); its name is the last component of
/sys/dev/block/MAJ:MIN's target (the name /proc/diskstats uses: a partition keeps its own).
From a name: its whole disk (a partition's parent), the devices under it (dm, md slaves), the
devices stacked on it (holders), its partitions, size, model and dm name.

Every function takes `sys_root` (the sysfs mount, "/sys"), so the tests can give a
sysfs-shaped tree. The same resolution on a host over SSH is `system/shell.py`'s `sh`
functions. Nothing here imports arraybench: the packages that ask turn a None into their
own error.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

SYS = "/sys"
Root = str | os.PathLike[str]  # where sysfs is mounted (a sysfs-shaped tree in tests)


@dataclass(frozen=True)
class BlockDevice:
    name: str  # kernel name: sdc, loop0, dm-3, nvme0n1
    major: int
    minor: int

    @property
    def number(self) -> str:
        return f"{self.major}:{self.minor}"


def device_number(path: str | os.PathLike[str]) -> tuple[int, int, bool]:
    """(major, minor, is_block_device): a block device's own number, else the number of the
    device holding the file. OSError when the path does not exist."""
    st = os.stat(path)
    if stat.S_ISBLK(st.st_mode):
        return os.major(st.st_rdev), os.minor(st.st_rdev), True
    return os.major(st.st_dev), os.minor(st.st_dev), False


def _entry(major: int, minor: int, sys_root: Root) -> Path | None:
    link = Path(sys_root) / "dev" / "block" / f"{major}:{minor}"
    if not os.path.lexists(link):
        return None
    return Path(os.path.realpath(link))


def name_of(major: int, minor: int, sys_root: Root = SYS) -> str | None:
    """Kernel name of block device MAJ:MIN (``sda``, ``sda1``, ``dm-0``, ``nvme0n1p2``); None
    when no block device has that number (tmpfs, overlayfs and btrfs files: st_dev is an
    anonymous number with no /sys/dev/block entry)."""
    entry = _entry(major, minor, sys_root)
    return None if entry is None else entry.name or None


def _class_block(name: str, sys_root: Root) -> Path:
    return Path(sys_root) / "class" / "block" / name


def attribute(name: str, relative: str, sys_root: Root = SYS) -> str | None:
    """The stripped text of /sys/class/block/NAME/RELATIVE; None when it cannot be read."""
    try:
        with open(_class_block(name, sys_root) / relative, encoding="utf-8",
                  errors="replace") as fh:  # fmt: skip
            return fh.read().strip()
    except OSError:
        return None


def _number_in(folder: Path) -> tuple[int, int] | None:
    try:
        text = (folder / "dev").read_text()
    except OSError:
        return None
    major, _, minor = text.strip().partition(":")
    return (int(major), int(minor)) if major.isdigit() and minor.isdigit() else None


def number_of(name: str, sys_root: Root = SYS) -> tuple[int, int] | None:
    """(major, minor) of a kernel block device name, from sysfs ``dev``; None when unknown."""
    return _number_in(_class_block(name, sys_root))


def nearest_existing(path: str | os.PathLike[str]) -> Path | None:
    """`path` or its nearest parent that exists (a file fio has not laid out yet)."""
    for candidate in (Path(path), *Path(path).parents):
        if candidate.exists():
            return candidate
    return None


def block_name(
    path: str | os.PathLike[str], sys_root: Root = SYS, *, nearest: bool = False
) -> str | None:
    """Kernel name of the block device `path` is (symlinks such as /dev/mapper/x followed; a
    partition keeps its own name), or of the device its filesystem lives on. With `nearest`, a
    path that does not exist yet (a file fio will lay out) is looked up through its nearest
    existing parent. None when nothing is there, for a character device, and when no block
    device backs the filesystem: tmpfs, overlayfs, NFS/FUSE and btrfs (whose st_dev is an
    anonymous per-subvolume number)."""
    found = nearest_existing(path) if nearest else path
    try:
        st = os.stat(found) if found is not None else None
    except OSError:
        st = None
    if st is None:
        return None
    if stat.S_ISCHR(st.st_mode):
        return None
    number = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    return name_of(os.major(number), os.minor(number), sys_root)


def whole_disk(major: int, minor: int, sys_root: Root = SYS) -> BlockDevice | None:
    """The disk of device MAJ:MIN (a partition's parent, else the device itself); None when
    no block device has that number."""
    entry = _entry(major, minor, sys_root)
    if entry is None:
        return None
    if (entry / "partition").exists():
        number = _number_in(entry.parent)
        if number is not None:
            return BlockDevice(entry.parent.name, *number)
    return BlockDevice(entry.name, major, minor)


def disk_of(path: str | os.PathLike[str], sys_root: Root = SYS) -> str | None:
    """The whole disk whose queue serves `path` (a device, or the device under a file): what
    a queue setting or a throttle applies to; None when there is none."""
    name = block_name(path, sys_root)
    return parent_disk_name(name, sys_root) if name else None


def parent_disk_name(name: str, sys_root: Root = SYS) -> str:
    """`sdc1` -> `sdc` (via sysfs); a whole disk's own name."""
    entry = _class_block(name, sys_root)
    if (entry / "partition").exists():
        return Path(os.path.realpath(entry)).parent.name
    return name


def _listing(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def slaves(name: str, sys_root: Root = SYS) -> list[str]:
    """Devices right under a stacked device (dm, md): /sys/block/NAME/slaves."""
    return _listing(Path(sys_root) / "block" / name / "slaves")


def stack(name: str, sys_root: Root = SYS) -> list[str]:
    """Every disk below `name`, breadth first (dm-5 -> dm-3 -> sdc, sdd)."""
    found: list[str] = []
    queue = [parent_disk_name(name, sys_root)]
    while queue:
        for below in slaves(queue.pop(0), sys_root):
            disk = parent_disk_name(below, sys_root)
            if disk not in found:
                found.append(disk)
                queue.append(disk)
    return found


def leaf_disks(name: str, sys_root: Root = SYS) -> list[str]:
    """The disks at the bottom of a device stack (multipath over SCSI, LVM over dm ...)."""
    below = slaves(parent_disk_name(name, sys_root), sys_root)
    if not below:
        return [parent_disk_name(name, sys_root)]
    result: list[str] = []
    for slave in below:
        for leaf in leaf_disks(slave, sys_root):
            if leaf not in result:
                result.append(leaf)
    return result


def holders(name: str, sys_root: Root = SYS) -> list[str]:
    """Devices stacked on ``name`` (dm, md, bcache...), recursively, nearest first."""
    found: list[str] = []
    queue = [name]
    while queue:
        for holder in _listing(_class_block(queue.pop(0), sys_root) / "holders"):
            if holder not in found and holder != name:
                found.append(holder)
                queue.append(holder)
    return found


def partitions(name: str, sys_root: Root = SYS) -> list[str]:
    """Partitions the kernel knows for a disk: its sysfs children with a ``partition`` file."""
    base = _class_block(name, sys_root)
    return [c for c in _listing(base) if (base / c / "partition").is_file()]


def dm_name(name: str, sys_root: Root = SYS) -> str | None:
    """A device-mapper device's map name (dm-3 -> mpatha, vg0-data); None for others."""
    return attribute(name, "dm/name", sys_root) or None


def size_bytes(name: str, sys_root: Root = SYS) -> int | None:
    """Size in bytes from sysfs ``size`` (always in 512-byte units)."""
    text = attribute(name, "size", sys_root) or ""
    return int(text) * 512 if text.isdigit() else None


def model(name: str, sys_root: Root = SYS) -> str | None:
    """``device/model`` of the device, or of its parent disk for a partition."""
    return attribute(parent_disk_name(name, sys_root), "device/model", sys_root) or None
