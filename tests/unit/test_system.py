"""system/: blockdev.py, the one `path -> device`, on sysfs-shaped trees and on this machine;
shell.py's `sh` copy of it run here and compared with the Python one; procs.py's facts."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from arraybench.system.blockdev import (
    BlockDevice,
    block_name,
    device_number,
    disk_of,
    dm_name,
    holders,
    model,
    name_of,
    number_of,
    parent_disk_name,
    partitions,
    size_bytes,
    whole_disk,
)
from arraybench.system.shell import DEVICE_SH, sh_command
from arraybench.system.signals import send_each

# --- path -> name on a fake /sys/dev/block -----------------------------------------------------


def _fake_sys(root: Path, majmin: str, *parts: str) -> None:
    target = root / "devices" / "pci0000:00" / "block"
    target = target.joinpath(*parts)
    target.mkdir(parents=True)
    links = root / "dev" / "block"
    links.mkdir(parents=True, exist_ok=True)
    (links / majmin).symlink_to(os.path.relpath(target, links))


def test_block_name_on_a_fake_sys_tree(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    target = data / "target.dat"
    target.write_bytes(b"x")
    st = os.stat(target)
    sys_root = tmp_path / "sys"
    _fake_sys(sys_root, f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}", "sdz", "sdz3")
    assert block_name(target, sys_root) == "sdz3"  # a partition keeps its name
    # a file fio has not laid out yet: its nearest existing parent, when asked for
    assert block_name(data / "later" / "new.dat", sys_root, nearest=True) == "sdz3"
    assert block_name(data / "later" / "new.dat", sys_root) is None
    _fake_sys(sys_root, "253:4", "dm-4")
    assert name_of(253, 4, sys_root) == "dm-4"
    assert name_of(8, 99, sys_root) is None


def test_block_name_without_a_block_device(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_bytes(b"x")
    empty_sys = tmp_path / "sys"
    empty_sys.mkdir()
    assert block_name(target, empty_sys) is None  # overlay, tmpfs, btrfs...
    assert disk_of(target, empty_sys) is None
    if Path("/dev/null").exists():
        assert block_name("/dev/null") is None  # character device


# --- a name's disk, partitions, holders on a fake /sys/class/block ------------------------------


@pytest.fixture
def sysfs(tmp_path: Path) -> Path:
    """A /sys look-alike: sda with partitions sda1 (under md0 -> dm-0) and sda2."""
    root = tmp_path / "class" / "block"

    def dev(rel: str, devnum: str, sectors: int) -> Path:
        d = root / rel
        (d / "holders").mkdir(parents=True)
        (d / "dev").write_text(devnum + "\n")
        (d / "size").write_text(f"{sectors}\n")
        return d

    sda = dev("sda", "8:0", 2000)
    (sda / "device").mkdir()
    (sda / "device" / "model").write_text("Samsung SSD 870   \n")
    for n in (1, 2):
        part = dev(f"sda/sda{n}", f"8:{n}", 1000)
        (part / "partition").write_text(f"{n}\n")
        (root / f"sda{n}").symlink_to(part)  # like /sys/class/block/sda1
    (root / "sda1" / "holders" / "md0").mkdir()
    dev("md0", "9:0", 1000)
    (root / "md0" / "holders" / "dm-0").mkdir()
    dev("dm-0", "253:0", 900)
    (root / "dm-0" / "dm").mkdir()
    (root / "dm-0" / "dm" / "name").write_text("vg0-data\n")
    return tmp_path


def test_partitions_from_sysfs(sysfs: Path) -> None:
    assert partitions("sda", sysfs) == ["sda1", "sda2"]
    assert partitions("md0", sysfs) == []
    assert partitions("nonexistent", sysfs) == []
    assert parent_disk_name("sda2", sysfs) == "sda"
    assert parent_disk_name("md0", sysfs) == "md0"


def test_holders_are_recursive(sysfs: Path) -> None:
    assert holders("sda1", sysfs) == ["md0", "dm-0"]
    assert holders("sda2", sysfs) == []
    assert holders("dm-0", sysfs) == []
    assert dm_name("dm-0", sysfs) == "vg0-data"
    assert dm_name("md0", sysfs) is None


def test_device_number_size_model(sysfs: Path) -> None:
    assert number_of("sda1", sysfs) == (8, 1)
    assert number_of("nonexistent", sysfs) is None
    assert size_bytes("sda", sysfs) == 2000 * 512
    assert model("sda", sysfs) == "Samsung SSD 870"
    assert model("sda2", sysfs) == "Samsung SSD 870"  # from the parent disk
    assert model("dm-0", sysfs) is None


# --- the sh copy, run on this machine -----------------------------------------------------------


def _sh_disk(path: str) -> tuple[int, str, str]:
    """(diskof's status, n, s) as a host's shell finds them for `path`."""
    script = DEVICE_SH + 'diskof "$1" 2>/dev/null; r=$?; echo "$r $n $s"'
    done = subprocess.run(["sh", "-c", sh_command(script, [path])], capture_output=True,
                          text=True, timeout=30, check=True)  # fmt: skip
    status, number, folder = [*done.stdout.split(), "", ""][:3]
    return int(status), number, folder


def _python_disk(path: str) -> BlockDevice | None:
    major, minor, _ = device_number(path)
    return whole_disk(major, minor)


def test_the_sh_copy_finds_the_disks_python_finds(tmp_path: Path) -> None:
    """A file here, the folder it is in, every block device of this machine (partitions give
    their disk), a missing path (status 1), a file on a filesystem without a block device."""
    target = tmp_path / "file"
    target.write_bytes(b"x")
    paths = [str(target), str(tmp_path)]
    paths += [f"/dev/{n}" for n in sorted(os.listdir("/sys/class/block"))[:8]
              if Path(f"/dev/{n}").is_block_device()]  # fmt: skip
    for path in paths:
        disk = _python_disk(path)
        status, number, folder = _sh_disk(path)
        if disk is None:
            assert status == 2, path
            continue
        assert (status, number, Path(folder).name) == (0, disk.number, disk.name), path
        assert disk_of(path) == disk.name
    assert _sh_disk(str(tmp_path / "missing"))[0] == 1
    assert _sh_disk("/proc/self/status")[0] == 2  # procfs: no block device
    assert _python_disk("/proc/self/status") is None


def test_sh_command_passes_every_argument_as_it_is() -> None:
    """What the host's login shell gets: each argument one positional parameter, never code."""
    odd = ["a b", "$(touch /tmp/arraybench-pwned)", "'; echo x", "-n", "ünï", ""]
    line = sh_command('printf "%s|" "$0" "$@"', odd, "name")
    done = subprocess.run(["sh", "-c", line], capture_output=True, text=True, check=True)
    assert done.stdout == "|".join(["name", *odd]) + "|"
    assert not Path("/tmp/arraybench-pwned").exists()


# --- processes: the facts events/ and the fio runner ask ----------------------------------------


def test_process_facts_of_this_process() -> None:
    from arraybench.system.procs import (
        command_bytes,
        cwd_of,
        executable_name,
        matching,
        parent_of,
        start_ticks,
    )

    assert parent_of(os.getpid()) == os.getppid()
    assert isinstance(start_ticks(os.getpid()), int)
    gone = 2**22 + 1  # above pid_max
    assert parent_of(gone) is None and start_ticks(gone) is None and cwd_of(gone) is None
    with subprocess.Popen(["sleep", "30"]) as child:
        try:
            # between fork and exec the child is still this Python: wait for its exec
            deadline = time.monotonic() + 10
            while command_bytes(child.pid) != b"sleep\x0030" and time.monotonic() < deadline:
                time.sleep(0.01)
            assert child.pid in matching(lambda name: name == "sleep")
            assert command_bytes(child.pid) == b"sleep\x0030"
            assert cwd_of(child.pid) == Path.cwd().resolve()
            assert executable_name(child.pid) == Path(shutil.which("sleep") or "").resolve().name
            assert child.pid in matching(lambda line: line == "sleep 30", full=True)
            assert child.pid not in matching(lambda name: True, exclude=[child.pid])
            assert os.getpid() not in matching(lambda name: True)  # never this process
            assert send_each([child.pid, 2**22 + 1], signal.SIGCONT) == ([child.pid], [2**22 + 1])
        finally:
            child.kill()


# --- one of each: the tree keeps them in system/ -------------------------------------------------

SRC = Path(__file__).resolve().parents[2] / "src" / "arraybench"


def _code_strings(path: Path) -> list[str]:
    """The string constants of a module that are no docstring, and each list of strings
    joined by spaces (["sh", "-c", ...] reads "sh -c ...")."""
    import ast

    tree = ast.parse(path.read_text())
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    found = [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]
    for node in ast.walk(tree):
        if isinstance(node, ast.List | ast.Tuple):
            words = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            found.append(" ".join(w for w in words if isinstance(w, str)))
    return found  # fmt: skip


def test_path_to_device_and_the_remote_command_line_are_written_once() -> None:
    """Outside system/, no module finds a device number's name in /sys/dev/block itself, and
    none builds an `sh -c` command line (system/shell.py `sh_command` does, for every host
    script)."""
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        if path.parent.name == "system":
            continue
        texts = _code_strings(path) + re.findall(r'"dev" / "block"', path.read_text())
        for text in texts:
            if "dev/block" in text or '"dev" / "block"' in text or text.startswith("sh -c"):
                wrong.append(f"{path.relative_to(SRC)}: {text[:60]!r}")
    assert not wrong, wrong
