"""The destroy guard on real loop devices carrying ext4 (root only): whatever a target is named
or however it is swapped, fio never writes to the device without allow_destroy naming it.

After every refusal the device's ext4 signature must still be there (blkid) and its first
MiB unchanged.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from arraybench import cli
from arraybench.analysis.aggregate import PointMetrics
from arraybench.engines.fio.engine import FioEngine
from arraybench.errors import TargetError, UnsafeTargetError
from arraybench.plan.expand import Point
from arraybench.plan.load import parse_plan_text
from arraybench.run.campaign import Campaign
from arraybench.store.db import RunRecord, Store
from arraybench.targets import prepare
from arraybench.targets.guard import TargetGuard
from tests.conftest import small_plan
from tests.loopdev import attached, sparse_file

pytestmark = [
    pytest.mark.root,
    pytest.mark.xdist_group("guard_loop"),  # module fixtures: built once, on one worker
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
    pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="mkfs.ext4 missing"),
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
]


@dataclass(frozen=True)
class Ext4Device:
    path: str
    head: str  # sha256 of the first MiB when the filesystem was made

    def intact(self) -> bool:
        probe = subprocess.run(["blkid", "-p", "-o", "value", "-s", "TYPE", self.path],
                               capture_output=True, text=True, check=False)  # fmt: skip
        with open(self.path, "rb") as fh:
            same = hashlib.sha256(fh.read(1 << 20)).hexdigest() == self.head
        return probe.stdout.strip() == "ext4" and same


@pytest.fixture(scope="module")
def ext4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ext4Device]:
    backing = sparse_file(tmp_path_factory.mktemp("loop") / "backing.img", 32 << 20)
    with attached(backing) as dev:
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True)
        with open(dev, "rb") as fh:
            head = hashlib.sha256(fh.read(1 << 20)).hexdigest()
        yield Ext4Device(dev, head)


def _run(tmp_path: Path, target: str, *extra: str) -> tuple[int, str]:
    plan = small_plan(tmp_path, workers="[1]")
    results = tmp_path / "results"
    code = cli.main(["run", str(plan), "--target", target, "--results", str(results), *extra])
    return code, str(results)


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


@pytest.mark.parametrize("suffix", ["\nfilename={dev}", "\nexec_prerun=touch {pwned}"])
def test_a_newline_cannot_move_fio_to_the_device(
    suffix: str, ext4: Ext4Device, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pwned = tmp_path / "PWNED"
    target = f"{tmp_path}/u" + suffix.format(dev=ext4.path, pwned=pwned)
    code, _ = _run(tmp_path, target)
    assert code == 2
    assert "targets[0].path" in _one_line(capsys)
    assert not pwned.exists()
    assert ext4.intact()


@pytest.mark.parametrize("name", ["lnk", "lnk#x", "lnk${UNSET}", "lnk;x"])
def test_a_symlink_to_the_device_is_refused_whatever_its_name(
    name: str, ext4: Ext4Device, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "lnk").symlink_to(ext4.path)
    if name != "lnk":
        (tmp_path / name).symlink_to(ext4.path)
    code, _ = _run(tmp_path, str(tmp_path / name))
    line = _one_line(capsys)
    assert code == 2
    assert ("ext4" in line and ext4.path in line) or "targets[0].path" in line
    assert ext4.intact()


def test_allow_destroy_is_matched_on_the_resolved_device(ext4: Ext4Device, tmp_path: Path) -> None:
    link, other = tmp_path / "lnk", tmp_path / "by-id-alias"
    link.symlink_to(ext4.path)
    other.symlink_to(ext4.path)
    guard = TargetGuard()
    with pytest.raises(UnsafeTargetError, match="ext4"):
        guard.check(str(link), writes=True, allow_destroy=[str(tmp_path / "elsewhere")])
    for consent in (ext4.path, str(other)):  # the device, or any name resolving to it
        info = guard.check(str(link), writes=True, allow_destroy=[consent])
        assert info.real_path == os.path.realpath(ext4.path)
    assert ext4.intact()


class _SwapOnStart:
    """A progress observer that, as the first point starts (after the safety check), replaces
    the checked target file by a symlink to the ext4 device."""

    def __init__(self, victim: Path, device: str) -> None:
        self.victim, self.device = victim, device

    def point_started(self, point: Point, index: int, total: int) -> None:
        self.victim.unlink()
        self.victim.symlink_to(self.device)

    def campaign_started(self, run: RunRecord, todo: Sequence[Point], skipped: int) -> None: ...
    def target_preparing(self, path: str, size: int) -> None: ...
    def point_tick(self, point: Point, elapsed_s: float) -> None: ...
    def point_finished(self, point: Point, metrics: PointMetrics, unit: str) -> None: ...
    def warning(self, text: str) -> None: ...
    def pausing(self, point: Point, seconds: float) -> None: ...
    def points_skipped(self, points: Sequence[Point]) -> None: ...


def test_a_target_swapped_after_the_check_is_refused_before_fio(
    ext4: Ext4Device, tmp_path: Path
) -> None:
    victim = tmp_path / "target.dat"
    plan = parse_plan_text(small_plan(tmp_path, workers="[1]").read_text(), "plan.yaml")
    results = tmp_path / "results"
    campaign = Campaign(Store(results), results, _SwapOnStart(victim, ext4.path))
    with pytest.raises(UnsafeTargetError, match="changed since it was checked"):
        campaign.start(plan, 1.0)
    assert ext4.intact()
    assert not list(results.glob("runs/*/points/*/fio.json"))  # fio never started


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount tmpfs: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)


def test_direct_io_on_tmpfs_is_refused_in_one_line(
    small_tmpfs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = small_tmpfs / "t.dat"
    code, _ = _run(tmp_path, str(target))
    assert code == 2
    assert "tmpfs" in _one_line(capsys)
    assert list(small_tmpfs.iterdir()) == []  # not even the O_DIRECT probe is left


def test_a_target_larger_than_its_filesystem_leaves_no_file(
    small_tmpfs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = small_tmpfs / "big.dat"
    plan = small_plan(tmp_path, workers="[1]", extra="direct: false\n")
    plan.write_text(plan.read_text().replace(str(tmp_path / "target.dat"), str(target)))
    code = cli.main(["run", str(plan), "--results", str(tmp_path / "results")])
    line = _one_line(capsys)
    assert code == 2 and "does not fit" in line
    assert list(small_tmpfs.iterdir()) == []


def test_a_failed_layout_removes_the_file_it_created(
    small_tmpfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A layout that fails part-way (the free-space check is skipped here, so fio really fills
    the 8 MiB filesystem and fails, as when another writer takes the space meanwhile) leaves
    no partial file behind."""
    target = small_tmpfs / "l.dat"
    monkeypatch.setattr(prepare, "check_room", lambda path, size: None)
    with pytest.raises(TargetError, match="cannot create target file"):
        prepare.layout_file(target, 64 << 20, FioEngine(shutil.which("fio") or "fio"))
    assert not target.exists()


def test_a_link_planted_before_the_layout_is_refused(ext4: Ext4Device, tmp_path: Path) -> None:
    """A new file checked, then a symlink to the device planted at its name: the layout fio
    (which follows links) must not start."""
    target = tmp_path / "new.dat"
    guard = TargetGuard()
    assert guard.check(str(target), writes=True).kind == "new-file"
    target.symlink_to(ext4.path)
    with pytest.raises(UnsafeTargetError, match="changed since it was checked"):
        guard.lay_out(str(target), 4 << 20, FioEngine(shutil.which("fio") or "fio"))
    assert ext4.intact()
