"""Unit tests of arraybench.targets.safety: parsers, sysfs helpers on a sysfs-shaped tree, files,
and the write policy on hand-built TargetInfo values. No root, no devices needed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arraybench.errors import TargetError, UnsafeTargetError
from arraybench.targets.safety import (
    TargetInfo,
    apply_policy,
    blkid_signatures,
    check_target,
    inspect_target,
    mounted_devices,
    parse_blkid_export,
    parse_mountinfo,
    parse_mounts,
    parse_swaps,
    raw_signatures,
)

# --- blkid -p -o export ---------------------------------------------------------------------

BLKID_EXT4 = """DEVNAME=/dev/loop3
UUID=af9191ba-6165-479b-b99f-d9b0bbb7aeaa
VERSION=1.0
BLOCK_SIZE=1024
TYPE=ext4
USAGE=filesystem
"""
BLKID_LVM = """DEVNAME=/dev/sdb
UUID=onFpdE-n0BU-EC7V-TyXH-jtRG-cW46-cmjdwX
VERSION=LVM2\\ 001
TYPE=LVM2_member
USAGE=raid
"""
BLKID_GPT = """DEVNAME=/dev/nvme1n1
PTUUID=511d86e8-a2a8-8042-8801-4ad23defbe75
PTTYPE=gpt
"""
BLKID_MD = """DEVNAME=/dev/sdc1
UUID=3f8a0e2b-6c1d-8e0f-4b5a-9c2d7e1f0a3b
UUID_SUB=b7e4c2a1-0d9f-3e8b-6a5c-1f2e3d4c5b6a
LABEL=storage01:0
VERSION=1.2
TYPE=linux_raid_member
USAGE=raid
PART_ENTRY_SCHEME=gpt
PART_ENTRY_TYPE=a19d880f-05fc-4d3b-a006-743f0f84911e
PART_ENTRY_NUMBER=1
"""
BLKID_ZFS = """DEVNAME=/dev/sdd1
LABEL=tank
UUID=10746931297513946234
UUID_SUB=3817262542131066131
BLOCK_SIZE=4096
VERSION=5000
TYPE=zfs_member
USAGE=filesystem
"""
BLKID_SWAP = """DEVNAME=/dev/zram0
UUID=8d09e2ef-4b08-49b1-b9e3-bfe7dce4cb35
VERSION=1
TYPE=swap
USAGE=other
"""
BLKID_DOS_AND_VFAT = """DEVNAME=/dev/sde
LABEL_FATBOOT=USB\\ STICK
LABEL=USB\\ STICK
UUID=1A2B-3C4D
VERSION=FAT32
TYPE=vfat
USAGE=filesystem
PTTYPE=dos
"""


def test_parse_blkid_export_unescapes_values() -> None:
    fields = parse_blkid_export(BLKID_LVM)
    assert fields["VERSION"] == "LVM2 001"
    assert fields["TYPE"] == "LVM2_member"
    assert fields["DEVNAME"] == "/dev/sdb"
    assert parse_blkid_export("") == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (BLKID_EXT4, ["ext4 filesystem signature (blkid)"]),
        (BLKID_LVM, ["LVM physical volume signature (blkid)"]),
        (BLKID_GPT, ["gpt partition table (blkid)"]),
        (BLKID_MD, ["md RAID member signature (blkid)"]),
        (BLKID_ZFS, ["ZFS pool member signature (blkid)"]),
        (BLKID_SWAP, ["swap area signature (blkid)"]),
        (
            BLKID_DOS_AND_VFAT,
            ["dos (MBR) partition table (blkid)", "vfat filesystem signature (blkid)"],
        ),
        ("DEVNAME=/dev/loop0\n", []),
    ],
)
def test_blkid_signatures(text: str, expected: list[str]) -> None:
    assert blkid_signatures(parse_blkid_export(text)) == expected


def test_blkid_signatures_unknown_type_keeps_its_name() -> None:
    found = blkid_signatures({"TYPE": "ceph_bluestore", "USAGE": "other"})
    assert found == ["ceph_bluestore signature (blkid)"]


# --- mount tables ---------------------------------------------------------------------------

MOUNTS = r"""/dev/mapper/vg0-root / ext4 rw,relatime,errors=remount-ro 0 0
proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0
/dev/nvme0n1p1 /boot/efi vfat rw,relatime,fmask=0077,dmask=0077 0 0
server:/export /mnt/nfs nfs4 rw,relatime,vers=4.2 0 0
/dev/sdb1 /mnt/my\040disk xfs rw,relatime 0 0
"""

MOUNTINFO = r"""22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/mapper/vg0-root rw,errors=remount-ro
23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
30 22 259:1 / /boot/efi rw,relatime shared:29 - vfat /dev/nvme0n1p1 rw,fmask=0077
41 22 8:17 / /mnt/my\040disk rw,relatime shared:40 - xfs /dev/sdb1 rw,attr2,inode64
42 22 8:17 /sub /srv/bind rw,relatime shared:40 - xfs /dev/sdb1 rw,attr2,inode64
"""

SWAPS = """Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority
/dev/dm-1                               partition\t8388604\t\t0\t\t-2
/swap\\040file                          file\t\t1048572\t\t0\t\t-3
"""


def test_parse_mounts_unescapes_mountpoints() -> None:
    pairs = parse_mounts(MOUNTS)
    assert pairs[0] == ("/dev/mapper/vg0-root", "/")
    assert ("server:/export", "/mnt/nfs") in pairs
    assert ("/dev/sdb1", "/mnt/my disk") in pairs
    assert len(pairs) == 5


def test_parse_mountinfo_reads_device_numbers() -> None:
    pairs = parse_mountinfo(MOUNTINFO)
    assert pairs[0] == (os.makedev(253, 0), "/")
    assert (os.makedev(259, 1), "/boot/efi") in pairs
    assert (os.makedev(8, 17), "/mnt/my disk") in pairs
    assert len(pairs) == 5


def test_parse_swaps_skips_header() -> None:
    assert parse_swaps(SWAPS) == ["/dev/dm-1", "/swap file"]
    assert parse_swaps("Filename\tType\tSize\tUsed\tPriority\n") == []


def test_mounted_devices_from_text_first_mountpoint_wins() -> None:
    # sources that are not block devices on this machine are ignored; mountinfo numbers count
    found = mounted_devices(MOUNTINFO, "server:/export /mnt/nfs nfs4 rw 0 0\n", "Filename\n")
    assert found[os.makedev(253, 0)] == "/"
    assert found[os.makedev(8, 17)] == "/mnt/my disk"  # not the later bind mount /srv/bind
    assert found[os.makedev(259, 1)] == "/boot/efi"


def test_mounted_devices_live_system_knows_proc() -> None:
    found = mounted_devices()
    assert found[os.stat("/proc").st_dev].startswith("/proc")


# --- raw superblock check -------------------------------------------------------------------


def _blank() -> bytearray:
    return bytearray(8192)


def test_raw_blank_has_nothing() -> None:
    assert raw_signatures(bytes(_blank())) == []
    assert raw_signatures(b"") == []


def test_raw_ext_magic() -> None:
    head = _blank()
    head[1080:1082] = b"\x53\xef"
    assert raw_signatures(bytes(head)) == ["ext2/3/4 filesystem signature (raw check)"]


def test_raw_gpt_at_lba1_with_protective_mbr() -> None:
    head = _blank()
    head[446 + 4] = 0xEE  # protective MBR entry
    head[510:512] = b"\x55\xaa"
    head[512:520] = b"EFI PART"
    found = raw_signatures(bytes(head))
    assert "gpt partition table (raw check)" in found
    assert "dos (MBR) partition table (raw check)" in found


def test_raw_mbr_needs_a_partition_entry() -> None:
    head = _blank()
    head[510:512] = b"\x55\xaa"
    assert raw_signatures(bytes(head)) == []  # boot signature alone, all four entries empty
    head[446 + 16 * 2 + 4] = 0x83  # third entry: Linux
    assert raw_signatures(bytes(head)) == ["dos (MBR) partition table (raw check)"]


def test_raw_xfs_lvm_swap_md() -> None:
    xfs = _blank()
    xfs[0:4] = b"XFSB"
    assert raw_signatures(bytes(xfs)) == ["xfs filesystem signature (raw check)"]
    lvm = _blank()
    lvm[512:520] = b"LABELONE"  # pvcreate puts the label in sector 1
    assert raw_signatures(bytes(lvm)) == ["LVM physical volume signature (raw check)"]
    swap = _blank()
    swap[4086:4096] = b"SWAPSPACE2"
    assert raw_signatures(bytes(swap)) == ["swap area signature (raw check)"]
    md = _blank()
    md[4096:4100] = b"\xfc\x4e\x2b\xa9"  # md superblock 1.2, little-endian 0xa92b4efc
    assert raw_signatures(bytes(md)) == ["md RAID member signature (raw check)"]


# --- files ----------------------------------------------------------------------------------


def test_existing_file_is_allowed(tmp_path: Path) -> None:
    target = tmp_path / "data.bin"
    target.write_bytes(b"x" * 4096)
    info = check_target(str(target), writes=True)
    assert info.kind == "file"
    assert info.size_bytes == 4096
    assert info.signatures == []
    assert info.model is None
    assert target.read_bytes() == b"x" * 4096  # the writability probe did not truncate it


def test_symlinked_file_reports_real_path(tmp_path: Path) -> None:
    target = tmp_path / "data.bin"
    target.write_bytes(b"")
    link = tmp_path / "link.bin"
    link.symlink_to(target)
    info = check_target(str(link), writes=True)
    assert info.path == str(link)
    assert info.real_path == os.path.realpath(target)
    assert info.kind == "file"


def test_missing_file_with_existing_parent_is_a_new_file(tmp_path: Path) -> None:
    target = tmp_path / "new.bin"
    info = check_target(str(target), writes=True)
    assert info.kind == "new-file"
    assert info.size_bytes is None
    assert any("will create" in w for w in info.warnings)
    assert not target.exists()  # the create probe cleaned up after itself


def test_missing_parent_directory_is_a_target_error(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="does not exist") as err:
        check_target(str(tmp_path / "no" / "such" / "dir" / "f.bin"), writes=True)
    assert not isinstance(err.value, UnsafeTargetError)
    assert err.value.hint


def test_directory_is_a_target_error(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="directory"):
        inspect_target(str(tmp_path))


def test_empty_path_is_a_target_error() -> None:
    with pytest.raises(TargetError):
        inspect_target("")


def test_character_device_is_a_target_error() -> None:
    with pytest.raises(TargetError, match="not a regular file or block device"):
        inspect_target("/dev/null")


# /sys/kernel/uevent_seqnum is a read-only (0444) sysfs attribute with no write handler: the
# kernel refuses to open it for writing even for root (CAP_DAC_OVERRIDE does not help), while
# os.access() would still say "writable" to root. It exists on every Linux with sysfs mounted.
UNWRITABLE = "/sys/kernel/uevent_seqnum"


@pytest.mark.skipif(not os.path.isfile(UNWRITABLE), reason=f"{UNWRITABLE} missing (no sysfs)")
def test_unwritable_existing_file_is_a_target_error() -> None:
    assert inspect_target(UNWRITABLE).kind == "file"
    with pytest.raises(TargetError, match="cannot write"):
        check_target(UNWRITABLE, writes=True)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no /proc")
def test_uncreatable_new_file_is_a_target_error() -> None:
    # procfs does not allow creating files, not even for root
    with pytest.raises(TargetError, match="cannot create"):
        check_target("/proc/self/arraybench-probe", writes=True)


# --- the policy on hand-built block-device infos ---------------------------------------------


def _block(signatures: list[str], path: str = "/dev/loop3") -> TargetInfo:
    return TargetInfo(path, "/dev/loop3", "block", 64 << 20, None, signatures, [])


def test_policy_refuses_signature_with_one_line_message_and_hint() -> None:
    with pytest.raises(UnsafeTargetError) as err:
        apply_policy(_block(["ext4 filesystem signature (blkid)"]), writes=True)
    line = err.value.one_line()
    assert "\n" not in line
    assert line.startswith("refusing to write to /dev/loop3: ext4 filesystem signature (blkid)")
    assert "allow_destroy" in (err.value.hint or "")
    assert "--allow-destroy /dev/loop3" in (err.value.hint or "")


def test_policy_names_link_and_real_device() -> None:
    with pytest.raises(UnsafeTargetError, match=r"/dev/mapper/x \(/dev/loop3\)"):
        apply_policy(_block(["in use by dm-0 (holders)"], path="/dev/mapper/x"), writes=True)


def test_policy_allow_destroy_must_name_the_device() -> None:
    info = _block(["ext4 filesystem signature (blkid)"])
    with pytest.raises(UnsafeTargetError, match="ext4 filesystem"):
        apply_policy(info, writes=True, allow_destroy=["/dev/loop4", "/dev/loop"])
    allowed = apply_policy(info, writes=True, allow_destroy=["/dev/loop3"])
    assert allowed.signatures == info.signatures
    assert any("allow_destroy" in w and "ext4" in w for w in allowed.warnings)


def test_policy_mounted_is_refused_even_with_allow_destroy() -> None:
    info = _block(["mounted at /mnt/x", "ext4 filesystem signature (blkid)"])
    with pytest.raises(UnsafeTargetError, match="mounted at /mnt/x") as refused:
        apply_policy(info, writes=True, allow_destroy=["/dev/loop3"])
    assert "unmount it first" in refused.value.one_line()


def test_policy_read_only_allows_but_warns_when_mounted() -> None:
    info = apply_policy(
        _block(["mounted at /mnt/x", "ext4 filesystem signature (blkid)"]), writes=False
    )
    assert len(info.warnings) == 1
    assert "mounted at /mnt/x" in info.warnings[0]
    quiet = apply_policy(_block(["ext4 filesystem signature (blkid)"]), writes=False)
    assert quiet.warnings == []


def test_policy_blank_device_is_allowed() -> None:
    info = _block([])
    assert apply_policy(info, writes=True) == info
