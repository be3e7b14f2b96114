"""Block devices in sysfs: path -> device number, partition -> whole disk, dm -> slaves.

The machine's facts, below every package that asks them (targets' queue settings, events'
throttles and path snapshots): nothing here imports arraybench. monitor/diskstats.py and
targets/safety.py still find a path's device their own way (issue 26: one `path -> device`)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BlockDevice:
    name: str  # kernel name: sdc, loop0, dm-3, nvme0n1
    major: int
    minor: int

    @property
    def number(self) -> str:
        return f"{self.major}:{self.minor}"


def device_number(path: str) -> tuple[int, int, bool]:
    """(major, minor, is_block_device): a block device's own number, else the number of the
    device holding the file. OSError when the path does not exist."""
    st = os.stat(path)
    if stat.S_ISBLK(st.st_mode):
        return os.major(st.st_rdev), os.minor(st.st_rdev), True
    return os.major(st.st_dev), os.minor(st.st_dev), False


def _sys_entry(major: int, minor: int, sys_root: str) -> Path | None:
    link = Path(sys_root) / "dev" / "block" / f"{major}:{minor}"
    if not os.path.lexists(link):
        return None
    return Path(os.path.realpath(link))


def _read_number(folder: Path) -> tuple[int, int] | None:
    try:
        major, minor = (folder / "dev").read_text().strip().split(":")
        return int(major), int(minor)
    except (OSError, ValueError):
        return None


def whole_disk(major: int, minor: int, sys_root: str = "/sys") -> BlockDevice | None:
    """The disk of device MAJ:MIN (a partition's parent, else the device itself); None when
    no block device has that number (tmpfs, overlayfs and btrfs files)."""
    entry = _sys_entry(major, minor, sys_root)
    if entry is None:
        return None
    if (entry / "partition").exists():
        parent = entry.parent
        number = _read_number(parent)
        if number is not None:
            return BlockDevice(parent.name, *number)
    return BlockDevice(entry.name, major, minor)


def block_name(path: str, sys_root: str = "/sys") -> str | None:
    """Kernel name of the block device `path` is (partitions keep their own name), or of the
    device holding the file; None when there is none."""
    try:
        major, minor, _ = device_number(path)
    except OSError:
        return None
    entry = _sys_entry(major, minor, sys_root)
    return entry.name if entry is not None else None


def slaves(name: str, sys_root: str = "/sys") -> list[str]:
    """Devices under a stacked device (dm, md): /sys/block/NAME/slaves."""
    folder = Path(sys_root) / "block" / name / "slaves"
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def parent_disk_name(name: str, sys_root: str = "/sys") -> str:
    """`sdc1` -> `sdc` (via sysfs); a whole disk's own name."""
    entry = Path(sys_root) / "class" / "block" / name
    if (entry / "partition").exists():
        return Path(os.path.realpath(entry)).parent.name
    return name


def leaf_disks(name: str, sys_root: str = "/sys") -> list[str]:
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
