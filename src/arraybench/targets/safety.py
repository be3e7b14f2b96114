"""Target safety: what a target is, and whether arraybench may write to it.

Regular files are always allowed (they are the default target). A block device is refused for
writing when it is mounted (itself, one of its partitions or a device-mapper/md holder, matched
by device number), holds a partition table, carries a filesystem / swap / LVM / RAID signature,
or is held by another device, unless its resolved path is listed in ``allow_destroy``.
Read-only workloads may use such devices; a mounted one only earns a warning.

The parsers (/proc/self/mounts, /proc/self/mountinfo, /proc/swaps, ``blkid -o export``, raw
superblock bytes) are pure functions; a device's partitions, holders, size and model are
system/blockdev.py's.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, replace

from arraybench.errors import TargetError, UnsafeTargetError
from arraybench.system import blockdev

BLKID_TIMEOUT_S = 30
RAW_PROBE_BYTES = 8192
_MOUNTED = "mounted at "


@dataclass(frozen=True)
class TargetInfo:
    path: str  # as given
    real_path: str  # os.path.realpath(path)
    kind: str  # "file", "new-file", "block"
    size_bytes: int | None  # file size, or device size; None for a file still to be created
    model: str | None  # device model (of the parent disk for a partition); None for files
    signatures: list[str]  # what was found, e.g. ["ext4 filesystem signature (blkid)"]
    warnings: list[str]


# --- pure parsers -------------------------------------------------------------------------


def _unescape(field: str) -> str:
    """Undo the kernel's octal escapes (``\\040`` for a space) in /proc mount tables."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_mounts(text: str) -> list[tuple[str, str]]:
    """(source, mountpoint) pairs of /proc/self/mounts text."""
    pairs = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            pairs.append((_unescape(fields[0]), _unescape(fields[1])))
    return pairs


def parse_mountinfo(text: str) -> list[tuple[int, str]]:
    """(dev_t, mountpoint) pairs of /proc/self/mountinfo text (field 3 is major:minor)."""
    pairs = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 5 or ":" not in fields[2]:
            continue
        major, _, minor = fields[2].partition(":")
        if major.isdigit() and minor.isdigit():
            pairs.append((os.makedev(int(major), int(minor)), _unescape(fields[4])))
    return pairs


def parse_swaps(text: str) -> list[str]:
    """Paths of the active swap areas listed in /proc/swaps text (header line skipped)."""
    return [_unescape(line.split()[0]) for line in text.splitlines()[1:] if line.strip()]


def parse_blkid_export(text: str) -> dict[str, str]:
    """KEY=value lines of ``blkid -p -o export``; blkid escapes spaces etc. with a backslash."""
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip():
            fields[key.strip()] = re.sub(r"\\(.)", r"\1", value.strip())
    return fields


_TYPE_NAMES = {
    "LVM2_member": "LVM physical volume",
    "linux_raid_member": "md RAID member",
    "zfs_member": "ZFS pool member",
    "ddf_raid_member": "DDF RAID member",
    "isw_raid_member": "Intel RAID member",
    "swap": "swap area",
    "crypto_LUKS": "LUKS encrypted volume",
}
_USAGE_NAMES = {"filesystem": "filesystem", "raid": "RAID member", "crypto": "encrypted volume"}


def blkid_signatures(fields: dict[str, str]) -> list[str]:
    """Human strings for the TYPE / PTTYPE found by ``blkid -p``."""
    found = []
    pttype = fields.get("PTTYPE")
    if pttype:
        label = "dos (MBR)" if pttype == "dos" else pttype
        found.append(f"{label} partition table (blkid)")
    fstype = fields.get("TYPE")
    if fstype:
        usage = _USAGE_NAMES.get(fields.get("USAGE", ""), "")
        name = _TYPE_NAMES.get(fstype) or f"{fstype} {usage}".strip()
        found.append(f"{name} signature (blkid)")
    return found


def raw_signatures(head: bytes) -> list[str]:
    """The most common signatures, read from the device's first bytes (when blkid is absent)."""
    found = []
    if head[512:520] == b"EFI PART" or head[4096:4104] == b"EFI PART":
        found.append("gpt partition table (raw check)")
    if head[510:512] == b"\x55\xaa" and any(head[446 + 16 * i + 4] for i in range(4)):
        found.append("dos (MBR) partition table (raw check)")
    if head[1080:1082] == b"\x53\xef":
        found.append("ext2/3/4 filesystem signature (raw check)")
    if head[0:4] == b"XFSB":
        found.append("xfs filesystem signature (raw check)")
    if any(head[s : s + 8] == b"LABELONE" for s in range(0, 2048, 512)):
        found.append("LVM physical volume signature (raw check)")
    if head[4086:4096] in (b"SWAPSPACE2", b"SWAP-SPACE"):
        found.append("swap area signature (raw check)")
    if b"\xfc\x4e\x2b\xa9" in (head[0:4], head[4096:4100]):  # md superblock 1.1 / 1.2
        found.append("md RAID member signature (raw check)")
    return found


# --- the running system -------------------------------------------------------------------


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def _block_rdev(path: str) -> int | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_rdev if stat.S_ISBLK(st.st_mode) else None


def mounted_devices(
    mountinfo_text: str | None = None,
    mounts_text: str | None = None,
    swaps_text: str | None = None,
) -> dict[int, str]:
    """dev_t -> mountpoint of everything mounted (first mountpoint wins); swaps map to "[swap]".

    Device numbers come from mountinfo and from stat() of the block devices named in
    /proc/self/mounts and /proc/swaps, so /dev/mapper names, symlinks and copies still match.
    Each text defaults to the live /proc file.
    """
    if mountinfo_text is None:
        mountinfo_text = _read("/proc/self/mountinfo") or ""
    if mounts_text is None:
        mounts_text = _read("/proc/self/mounts") or ""
    if swaps_text is None:
        swaps_text = _read("/proc/swaps") or ""
    found: dict[int, str] = {}
    for dev, mountpoint in parse_mountinfo(mountinfo_text):
        found.setdefault(dev, mountpoint)
    sources = parse_mounts(mounts_text) + [(p, "[swap]") for p in parse_swaps(swaps_text)]
    for source, mountpoint in sources:
        rdev = _block_rdev(source) if source.startswith("/") else None
        if rdev is not None:
            found.setdefault(rdev, mountpoint)
    return found


def _display_name(name: str) -> str:
    map_name = blockdev.dm_name(name)
    return f"{name} ({map_name})" if map_name else name


def _blkid_verdict(proc: subprocess.CompletedProcess[str]) -> list[str] | None:
    """What util-linux's ``blkid -p -o export`` said, or None when its answer is not one it
    gives (another blkid, such as busybox's, answering "unrecognized option"; a crash)."""
    if proc.returncode == 0:
        fields = parse_blkid_export(proc.stdout)
        if "TYPE" not in fields and "PTTYPE" not in fields:
            return None  # exit 0 says something was found: output we cannot read
        return blkid_signatures(fields)
    if proc.returncode == 2 and not proc.stderr.strip() and not proc.stdout.strip():
        return []  # blkid: nothing found
    if proc.returncode == 8:
        return ["several conflicting signatures (blkid: ambiguous probe result)"]
    return None


def unchecked(reason: str) -> str:
    """The finding of a signature check that could not run: refused like a signature (fail
    closed), since "could not look" must never read as "nothing there"."""
    return f"unknown contents (the signature check could not run: {reason})"


def probe_signatures(dev_path: str) -> list[str]:
    """Signatures on a device, from ``blkid -p``. When blkid is missing, fails or answers in a
    way util-linux's does not, the result says the check could not run (refused unless
    allow_destroy consents), with what a raw check of the first bytes still recognises.

    Raises OSError when the device cannot be read at all.
    """
    blkid = shutil.which("blkid")
    reason = "blkid (util-linux) is not installed"
    if blkid:
        try:
            proc = subprocess.run(
                [blkid, "-p", "-o", "export", dev_path],
                capture_output=True,
                text=True,
                timeout=BLKID_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            reason = f"blkid did not run: {exc}"
        else:
            found = _blkid_verdict(proc)
            if found is not None:
                return found
            said = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()
            reason = f"blkid exited with {proc.returncode}: {said[0][:120]}"
    with open(dev_path, "rb", buffering=0) as fh:
        return [*raw_signatures(fh.read(RAW_PROBE_BYTES)), unchecked(reason)]


def _mount_findings(rdev: int, related: list[str]) -> list[str]:
    """Where the device itself, and each related device (partitions, holders), is mounted."""
    mounts = mounted_devices()
    found = [f"{_MOUNTED}{mounts[rdev]}"] if rdev in mounts else []
    for dev in related:
        number = blockdev.number_of(dev)
        dev_t = os.makedev(*number) if number is not None else None
        if dev_t is not None and dev_t in mounts:
            found.append(f"{_MOUNTED}{mounts[dev_t]} (via {_display_name(dev)})")
    return found


def _block_info(path: str, real: str, rdev: int) -> TargetInfo:
    name = blockdev.name_of(os.major(rdev), os.minor(rdev)) or os.path.basename(real)
    parts = blockdev.partitions(name)
    stacked: list[str] = []
    for dev in [name, *parts]:
        stacked += [h for h in blockdev.holders(dev) if h not in stacked]
    signatures = _mount_findings(rdev, parts + stacked)
    try:
        signatures += probe_signatures(real)
    except OSError as exc:
        signatures.append(f"unknown contents (could not read it: {exc.strerror or exc})")
    if parts:
        signatures.append(f"partitions {', '.join(parts)} (kernel partition table)")
    if stacked:
        in_use = ", ".join(_display_name(h) for h in stacked)
        signatures.append(f"in use by {in_use} (holders)")
    size = blockdev.size_bytes(name)
    if size is None:
        try:
            with open(real, "rb", buffering=0) as fh:
                size = fh.seek(0, os.SEEK_END)
        except OSError:
            size = None
    return TargetInfo(path, real, "block", size, blockdev.model(name), signatures, [])


def inspect_target(path: str) -> TargetInfo:
    """Describe a target without touching it. TargetError if it cannot be a target at all."""
    if not path:
        raise TargetError("empty target path", "give a file path or a block device")
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        parent = os.path.dirname(real)
        if not os.path.isdir(parent):
            raise TargetError(
                f"target {path}: directory {parent} does not exist",
                "create the directory first or fix the target path",
            ) from None
        note = f"{real} does not exist yet: fio will create it as a regular file"
        return TargetInfo(path, real, "new-file", None, None, [], [note])
    except OSError as exc:
        raise TargetError(f"target {path}: cannot stat it ({exc.strerror})", None) from exc
    if stat.S_ISREG(st.st_mode):
        return TargetInfo(path, real, "file", st.st_size, None, [], [])
    if stat.S_ISBLK(st.st_mode):
        return _block_info(path, real, st.st_rdev)
    what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file or block device"
    raise TargetError(
        f"target {path} is {what}",
        "give a regular file (it may not exist yet) or a block device",
    )


# --- the decision -------------------------------------------------------------------------


def _check_access(info: TargetInfo, *, writes: bool) -> None:
    """TargetError when the target cannot be opened as fio will need it.

    os.access() is not enough for root (it says yes to /proc and /sys files), so files are
    really opened for writing (without truncating) and a new file is created and removed again.
    Files need write access even for read workloads: fio lays out missing or short files.
    """
    try:
        if info.kind == "new-file":
            fd = os.open(info.real_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.close(fd)
            os.unlink(info.real_path)
        elif info.kind == "file":
            os.close(os.open(info.real_path, os.O_WRONLY))
        else:
            name = os.path.basename(info.real_path)
            if writes and blockdev.attribute(name, "ro") == "1":
                raise PermissionError(errno.EROFS, "the device is read-only")
            if not os.access(info.real_path, os.W_OK if writes else os.R_OK):
                raise PermissionError(errno.EACCES, "permission denied")
    except OSError as exc:
        verb = "create" if info.kind == "new-file" else "write" if writes else "read"
        raise TargetError(
            f"target {info.path}: cannot {verb} it ({exc.strerror or exc})",
            "pick a writable location or fix the permissions",
        ) from exc


def _device_label(info: TargetInfo) -> str:
    same = info.path == info.real_path
    return info.real_path if same else f"{info.path} ({info.real_path})"


def apply_policy(
    info: TargetInfo, *, writes: bool, allow_destroy: Iterable[str] = (), phase: str = ""
) -> TargetInfo:
    """The safety rule on an inspected target: UnsafeTargetError, or the info with warnings.
    `phase` names what writes it (``targets.actions``), for the refusal."""
    if info.kind != "block" or not info.signatures:
        return info
    label = _device_label(info) + (f" in {phase}" if phase else "")
    found = ", ".join(info.signatures)
    warnings = list(info.warnings)
    if not writes:
        mounts = [s for s in info.signatures if s.startswith(_MOUNTED)]
        if mounts:
            warnings.append(
                f"{label} is {', '.join(mounts)}: reading it is safe, but filesystem activity "
                "may disturb the results"
            )
        return replace(info, warnings=warnings)
    mounts = [s for s in info.signatures if s.startswith(_MOUNTED)]
    if mounts:
        # consent to destroy data is not consent to corrupt a live filesystem (maybe the OS's)
        raise UnsafeTargetError(
            f"refusing to write to {label}: {', '.join(mounts)}",
            "unmount it first; allow_destroy does not cover a mounted device",
        )
    allowed = {os.path.realpath(p) for p in allow_destroy}
    if info.real_path not in allowed:
        dev = info.real_path
        raise UnsafeTargetError(
            f"refusing to write to {label}: {found}",
            f"if it really is a scratch device, wipe it (wipefs -a {dev}) or list it under "
            f"allow_destroy in the plan (or --allow-destroy {dev})",
        )
    warnings.append(f"allow_destroy: {label} will be overwritten although it has: {found}")
    return replace(info, warnings=warnings)


def check_target(
    path: str, *, writes: bool, allow_destroy: Iterable[str] = (), phase: str = ""
) -> TargetInfo:
    """Inspect a target and enforce the safety rule; raises UnsafeTargetError / TargetError.
    `writes`: whether ANY phase of the run writes it (``targets.actions.target_uses``), and
    `phase` the first one that does."""
    info = inspect_target(path)
    _check_access(info, writes=writes)
    return apply_policy(info, writes=writes, allow_destroy=allow_destroy, phase=phase)
