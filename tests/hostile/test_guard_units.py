"""TargetGuard without devices: what counts as 'the same target' between check and fio."""

from __future__ import annotations

from pathlib import Path

import pytest

from arraybench.errors import UnsafeTargetError
from arraybench.targets.guard import TargetGuard, filesystem_type

MOUNTINFO = """\
22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
30 22 0:25 / /tmp/my\\040scratch rw,nosuid shared:5 - tmpfs tmpfs rw,size=65536k
31 22 0:26 / /tmp/my rw - xfs /dev/vdb rw
"""


def test_filesystem_type_takes_the_longest_mount_holding_the_path() -> None:
    assert filesystem_type("/tmp/my scratch/t.dat", MOUNTINFO) == "tmpfs"
    assert filesystem_type("/tmp/my/t.dat", MOUNTINFO) == "xfs"
    assert filesystem_type("/tmp/mystuff/t.dat", MOUNTINFO) == "ext4"  # not a prefix match


def test_a_file_rewritten_in_place_passes_a_link_or_a_node_does_not(tmp_path: Path) -> None:
    target, other = tmp_path / "t.dat", tmp_path / "other.dat"
    target.write_bytes(b"x")
    other.write_bytes(b"y")
    guard = TargetGuard()
    guard.check(str(target), writes=True)
    target.unlink()
    target.write_bytes(b"z")  # fio re-creating a short file: a new inode, same kind of thing
    guard.recheck([str(target)])
    target.unlink()
    target.symlink_to(other)  # now it leads elsewhere
    with pytest.raises(UnsafeTargetError, match="changed since it was checked"):
        guard.recheck([str(target)])


def test_paths_the_guard_never_checked_are_left_to_their_host(tmp_path: Path) -> None:
    TargetGuard().recheck(["/dev/remote-host-disk"])  # a host's path: judged over SSH
