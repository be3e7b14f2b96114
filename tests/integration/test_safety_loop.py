"""arraybench.targets.safety against real loop devices (root only).

Every loop device is attached to a 64 MiB sparse file in tmp_path and detached (after unmounting
anything mounted from it) in fixture teardown, so nothing leaks when a test fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.errors import UnsafeTargetError
from arraybench.hosts.remote_safety import (
    RemoteTarget,
    judge,
    parse_facts,
    target_command,
    unchecked_targets,
)
from arraybench.system.blockdev import number_of, partitions
from arraybench.targets.safety import (
    check_target,
    inspect_target,
    mounted_devices,
    probe_signatures,
    raw_signatures,
)
from tests.loopdev import attached, sparse_file

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
    pytest.mark.skipif(shutil.which("losetup") is None, reason="losetup (util-linux) missing"),
]

SIZE = 64 << 20


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)


def _need(tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} missing")


def _ok(*cmd: str) -> None:
    proc = _run(*cmd)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed: {proc.stderr.strip()}"


def _ok_input(stdin: str, *cmd: str) -> None:
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed: {proc.stderr.strip()}"


def _attach(tmp_path: Path, *extra: str) -> Iterator[str]:
    with attached(sparse_file(tmp_path / "backing.img", SIZE), *extra) as dev:
        yield dev


@pytest.fixture
def loopdev(tmp_path: Path) -> Iterator[str]:
    """A blank 64 MiB loop device."""
    yield from _attach(tmp_path)


@pytest.fixture
def partscan_loopdev(tmp_path: Path) -> Iterator[str]:
    """A blank 64 MiB loop device attached with partition scanning (losetup -P)."""
    yield from _attach(tmp_path, "--partscan")


@pytest.fixture
def ext4_loopdev(loopdev: str) -> str:
    _need("mkfs.ext4")
    _ok("mkfs.ext4", "-q", "-F", loopdev)
    return loopdev


@pytest.fixture
def mount_dir(tmp_path: Path, loopdev: str) -> Iterator[Path]:
    """A directory to mount on; unmounted in teardown (before `loopdev` is detached)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        yield mnt
    finally:
        for _ in range(3):
            if not os.path.ismount(mnt):
                break
            if _run("umount", str(mnt)).returncode != 0:
                _run("umount", "--lazy", str(mnt))


def _mount(source: str, mnt: Path) -> None:
    proc = _run("mount", source, str(mnt))
    if proc.returncode != 0:
        pytest.skip(f"cannot mount here: {proc.stderr.strip()}")


def test_blank_loop_device_is_allowed(loopdev: str) -> None:
    info = check_target(loopdev, writes=True)
    assert info.kind == "block"
    assert info.real_path == loopdev
    assert info.size_bytes == SIZE
    assert info.signatures == []
    assert info.warnings == []


def test_ext4_is_refused_unless_allowed_by_exact_name(ext4_loopdev: str, tmp_path: Path) -> None:
    with pytest.raises(UnsafeTargetError) as err:
        check_target(ext4_loopdev, writes=True)
    line = err.value.one_line()
    assert "\n" not in line
    assert f"refusing to write to {ext4_loopdev}" in line
    assert "ext4" in line
    assert "allow_destroy" in line

    allowed = check_target(ext4_loopdev, writes=True, allow_destroy=[ext4_loopdev])
    assert allowed.kind == "block"
    assert any("ext4" in s for s in allowed.signatures)
    assert any("allow_destroy" in w for w in allowed.warnings)

    # a symlink to the device in allow_destroy resolves to it (as does a symlinked target)
    link = tmp_path / "scratch-disk"
    link.symlink_to(ext4_loopdev)
    assert check_target(ext4_loopdev, writes=True, allow_destroy=[str(link)]).kind == "block"
    assert check_target(str(link), writes=True, allow_destroy=[ext4_loopdev]).path == str(link)


def test_ext4_is_refused_when_another_device_is_allowed(ext4_loopdev: str) -> None:
    number = int(ext4_loopdev.removeprefix("/dev/loop"))
    others = [f"/dev/loop{number + 1}", f"{ext4_loopdev}p1", "/dev/loop", f"loop{number}"]
    with pytest.raises(UnsafeTargetError, match="ext4"):
        check_target(ext4_loopdev, writes=True, allow_destroy=others)


def test_ext4_read_only_workload_is_allowed(ext4_loopdev: str) -> None:
    info = check_target(ext4_loopdev, writes=False)
    assert info.kind == "block"
    assert info.size_bytes == SIZE
    assert any("ext4" in s for s in info.signatures)
    assert info.warnings == []  # not mounted: nothing to warn about


def test_raw_check_sees_ext4_on_the_real_device(ext4_loopdev: str) -> None:
    with open(ext4_loopdev, "rb") as fh:
        head = fh.read(8192)
    assert raw_signatures(head) == ["ext2/3/4 filesystem signature (raw check)"]


def test_probe_falls_back_to_raw_check_without_blkid(
    ext4_loopdev: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no blkid on PATH
    assert probe_signatures(ext4_loopdev) == [
        "ext2/3/4 filesystem signature (raw check)",
        "unknown contents (the signature check could not run: blkid (util-linux) is not installed)",
    ]
    with pytest.raises(UnsafeTargetError, match=r"ext2/3/4 filesystem signature \(raw check\)"):
        check_target(ext4_loopdev, writes=True)


def test_mounted_device_is_refused(ext4_loopdev: str, mount_dir: Path) -> None:
    _mount(ext4_loopdev, mount_dir)
    with pytest.raises(UnsafeTargetError, match=re.escape(f"mounted at {mount_dir}")):
        check_target(ext4_loopdev, writes=True)
    read_only = check_target(ext4_loopdev, writes=False)
    assert len(read_only.warnings) == 1
    assert "mounted" in read_only.warnings[0]


def test_mount_through_another_device_node_is_found_by_number(
    ext4_loopdev: str, mount_dir: Path, tmp_path: Path
) -> None:
    # a second node for the same device, under a name /proc/self/mounts will show instead
    st = os.stat(ext4_loopdev)
    alias = tmp_path / "alias-node"
    try:
        os.mknod(alias, 0o600 | 0o060000, st.st_rdev)  # S_IFBLK
    except OSError as exc:
        pytest.skip(f"cannot mknod a block device node here: {exc}")
    _mount(str(alias), mount_dir)
    assert mounted_devices()[st.st_rdev] == str(mount_dir)
    with pytest.raises(UnsafeTargetError, match="mounted at"):
        check_target(ext4_loopdev, writes=True)


@pytest.mark.parametrize("label", ["gpt", "dos"])
def test_partition_table_is_refused(loopdev: str, label: str) -> None:
    _need("sfdisk")
    _ok_input(f"label: {label}\n,16M\n,\n", "sfdisk", "-q", "--no-reread", loopdev)
    with pytest.raises(UnsafeTargetError, match="partition table") as err:
        check_target(loopdev, writes=True)
    assert label in err.value.message
    assert check_target(loopdev, writes=True, allow_destroy=[loopdev]).kind == "block"


def test_kernel_partitions_are_refused(partscan_loopdev: str) -> None:
    dev = partscan_loopdev
    _partitioned(dev)
    name = os.path.basename(dev)
    assert partitions(name) == [f"{name}p1", f"{name}p2"]
    info = inspect_target(dev)
    assert f"partitions {name}p1, {name}p2 (kernel partition table)" in info.signatures
    with pytest.raises(UnsafeTargetError, match=f"{name}p1"):
        check_target(dev, writes=True)


def test_swap_signature_is_refused(loopdev: str) -> None:
    _need("mkswap")
    _ok("mkswap", loopdev)
    with pytest.raises(UnsafeTargetError, match="swap"):
        check_target(loopdev, writes=True)


def test_lvm_pv_is_refused(loopdev: str) -> None:
    _need("pvcreate")
    # --devices keeps LVM from recording the device in a system devices file
    proc = _run("pvcreate", "-q", "-y", "--devices", loopdev, loopdev)
    if proc.returncode != 0:
        pytest.skip(f"pvcreate failed here: {proc.stderr.strip()}")
    try:
        with pytest.raises(UnsafeTargetError, match="LVM physical volume"):
            check_target(loopdev, writes=True)
    finally:
        _run("pvremove", "-q", "-y", "--devices", loopdev, loopdev)


def _partitioned(dev: str) -> str:
    """Write a GPT with two partitions on a --partscan loop device; return the first's name."""
    _need("sfdisk")
    _need("partx")
    _ok_input("label: gpt\n,16M\n,\n", "sfdisk", "-q", dev)
    _run("partx", "-a", dev)  # in case no udev / BLKRRPART did not add them
    name = os.path.basename(dev)
    if not partitions(name):
        pytest.skip("the kernel did not register the loop partitions")
    return f"{name}p1"


def test_mounted_partition_is_refused(partscan_loopdev: str, tmp_path: Path) -> None:
    _need("mkfs.ext4")
    part = _partitioned(partscan_loopdev)
    number = number_of(part)
    assert number is not None
    rdev = os.makedev(*number)
    node = tmp_path / part  # without udev there may be no /dev node for the partition
    try:
        os.mknod(node, 0o600 | 0o060000, rdev)
    except OSError as exc:
        pytest.skip(f"cannot mknod a block device node here: {exc}")
    _ok("mkfs.ext4", "-q", "-F", str(node))
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    _mount(str(node), mnt)
    try:
        with pytest.raises(UnsafeTargetError, match=re.escape(f"mounted at {mnt} (via {part})")):
            check_target(partscan_loopdev, writes=True)
    finally:
        _run("umount", str(mnt))


# --- the same rule on a remote host: the SSH script run here through `sh -c` -------------


def _remote_facts(*targets: str) -> dict[str, RemoteTarget]:
    proc = _run("sh", "-c", target_command(list(targets)))
    assert proc.returncode == 0, proc.stderr
    return parse_facts(proc.stdout, list(targets))


def test_remote_check_passes_a_blank_device_and_flags_a_file(loopdev: str, tmp_path: Path):
    data = tmp_path / "data.bin"
    data.write_bytes(b"x")
    facts = _remote_facts(loopdev, str(data), str(tmp_path / "nope"))
    assert facts[loopdev].kind == "block" and set(facts[loopdev].facts) == {"block", "resolved"}
    assert facts[str(data)].kind == "file" and set(facts[str(data)].facts) == {"file", "resolved"}
    assert facts[str(data)].facts["resolved"] == str(data)
    problems = judge("h1", facts, writers=None, allow_destroy=[])
    assert problems == [f"h1: target {tmp_path / 'nope'} does not exist on the host"]


def test_remote_check_refuses_a_filesystem_unless_allowed(ext4_loopdev: str):
    facts = _remote_facts(ext4_loopdev)
    assert facts[ext4_loopdev].facts["signature"] == "ext4"
    [refusal] = judge("h1", facts, writers={ext4_loopdev: "precondition"}, allow_destroy=[])
    assert "ext4" in refusal and "refused: precondition" in refusal and ext4_loopdev in refusal
    assert judge("h1", facts, writers=None, allow_destroy=[ext4_loopdev]) == []
    assert judge("h1", facts, writers={}, allow_destroy=[]) == []  # reading is harmless


def test_remote_check_refuses_a_mounted_device_even_when_allowed(
    ext4_loopdev: str, mount_dir: Path
):
    _mount(ext4_loopdev, mount_dir)
    facts = _remote_facts(ext4_loopdev)
    assert facts[ext4_loopdev].facts["mounted"] == str(mount_dir)
    problems = judge("h1", facts, writers=None, allow_destroy=[ext4_loopdev])
    assert any("mounted at" in p and "unmount" in p and "refused" in p for p in problems)


def test_remote_target_without_ssh_needs_consent():
    lines = unchecked_targets("h2", ["/dev/sdz", "/srv/f.dat"], writers=None, allow_destroy=[])
    assert len(lines) == 2 and "/dev/sdz" in lines[0] and "allow_destroy" in lines[0]
    consent = ["/dev/sdz", "/srv/f.dat"]
    assert unchecked_targets("h2", consent, writers=None, allow_destroy=consent) == []
