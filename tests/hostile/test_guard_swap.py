"""The symlink-swap window, closed: a target file replaced by a link to a device carrying ext4
AFTER every check and before fio (or blkdiscard, or the layout, or the integrity writer) opens
it. The swap is made at the last moment arraybench has: as the fio process is being created,
when the pre-point recheck and the pinning are done. fio is given /dev/fd/N of a descriptor
verified at that check, so it writes the file that was checked, never the device (root only:
real loop devices, real fio).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arraybench.engines.fio import runner
from arraybench.integrity import IntegrityError, WriterConfig, run_writer
from arraybench.integrity import writer as integrity_writer
from tests.conftest import main_cli, small_plan
from tests.loopdev import attached, sparse_file

pytestmark = [
    pytest.mark.root,
    pytest.mark.xdist_group("guard_swap"),
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
    pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="mkfs.ext4 missing"),
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
]


def _head(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read(4 << 20)).hexdigest()


@pytest.fixture(scope="module")
def ext4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    backing = sparse_file(tmp_path_factory.mktemp("loop") / "d.img", 40 << 20)
    with attached(backing) as dev:
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True)
        yield dev, _head(dev)


def _swap_when_fio_starts(
    monkeypatch: pytest.MonkeyPatch, victim: Path, device: str
) -> list[list[str]]:
    """Replace `victim` by a link to `device` as the first fio process is created; the argv
    of every fio started is recorded."""
    started: list[list[str]] = []
    original: Callable[..., None] = runner.FioProcess.__init__

    def swapping(self: Any, command: list[str], *args: Any, **kwargs: Any) -> None:
        if not started:
            victim.unlink()
            victim.symlink_to(device)
        started.append(list(command))
        original(self, command, *args, **kwargs)

    monkeypatch.setattr(runner.FioProcess, "__init__", swapping)
    return started


def _laid_out(path: Path, size: int = 32 << 20) -> Path:
    path.write_bytes(os.urandom(size))
    return path


WRITE = "  - {name: w, pattern: sequential, bs: 128k, read: 0}\n"
READ = "  - {name: r, pattern: random, bs: 4k, read: 100}\n"


@pytest.mark.parametrize(
    ("extra", "workloads"),
    [("", WRITE), ("precondition: {passes: 1}\n", READ)],
    ids=["point", "precondition"],
)
def test_a_link_swapped_in_as_fio_starts_does_not_move_fio(
    extra: str, workloads: str, ext4: tuple[str, str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    dev, head = ext4
    plan = small_plan(tmp_path, workers="[1]", extra=extra, workloads=workloads)
    victim = _laid_out(tmp_path / "target.dat")
    started = _swap_when_fio_starts(monkeypatch, victim, dev)
    done = main_cli("run", str(plan), "--results", str(tmp_path / "r"))
    assert started, done.stderr  # fio was started, after the swap
    assert _head(dev) == head  # and it never wrote the device
    assert victim.is_symlink()
    # what fio ran names the checked descriptor; the job file kept for a person names the path
    [pinned] = tmp_path.glob("r/runs/*/**/point.pinned.fio")
    assert "filename=/dev/fd/" in pinned.read_text()
    assert f"filename={victim}" in pinned.with_name("point.fio").read_text()
    if extra:  # the point after the preconditioning looks again, and refuses the target
        assert done.returncode == 2 and "changed since it was checked" in done.stderr
    else:  # the one point wrote the file it was given (unlinked by the swap): nothing lost
        assert done.returncode == 0, done.stderr


def test_a_link_swapped_in_as_the_layout_starts_does_not_move_fio(
    ext4: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new target file: arraybench creates it (O_EXCL, O_NOFOLLOW) and lays it out through
    its descriptor; the link planted at its name as the layout's fio starts changes nothing."""
    dev, head = ext4
    plan = small_plan(tmp_path, workers="[1]", workloads=READ)
    victim = tmp_path / "target.dat"
    original = runner.FioProcess.__init__
    planted: list[bool] = []

    def swapping(self: Any, command: list[str], *args: Any, **kwargs: Any) -> None:
        if not planted and "--name=arraybench-layout" in command:
            assert any(c.startswith("--filename=/dev/fd/") for c in command), command
            victim.unlink()
            victim.symlink_to(dev)
            planted.append(True)
        original(self, command, *args, **kwargs)

    monkeypatch.setattr(runner.FioProcess, "__init__", swapping)
    done = main_cli("run", str(plan), "--results", str(tmp_path / "r"))
    assert planted
    assert _head(dev) == head
    assert done.returncode == 2 and "changed since it was checked" in done.stderr, done.stderr


def test_a_link_swapped_in_before_the_integrity_writer_opens_is_refused(
    ext4: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dev, head = ext4
    victim = _laid_out(tmp_path / "v.dat", 8 << 20)
    original = integrity_writer._open_journal

    def swap_then_open(*args: Any, **kwargs: Any) -> Any:  # between the check and the open
        victim.unlink()
        victim.symlink_to(dev)
        return original(*args, **kwargs)

    monkeypatch.setattr(integrity_writer, "_open_journal", swap_then_open)
    cfg = WriterConfig(path=str(victim), length=1 << 20, offset=0, block_size=4096)
    with pytest.raises(IntegrityError, match="changed since it was checked"):
        run_writer(cfg, tmp_path / "j.journal", duration_s=0.5)
    assert _head(dev) == head
