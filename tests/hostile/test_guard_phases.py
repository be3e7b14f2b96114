"""The destroy guard judges everything a run does to a device, not only its workloads (root
only, real loop devices carrying ext4): a plan whose workloads only read, but whose special
phases write, is refused in one line naming the signature and the phase; and a signature check
that cannot run (a busybox blkid, none at all, output cut short) refuses instead of reading as
"no signature", locally and in the script the hosts run.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from arraybench.errors import UnsafeTargetError
from arraybench.hosts.remote_safety import END_MARK, judge, parse_facts, target_command
from arraybench.targets.safety import check_target
from tests.conftest import main_cli, small_plan
from tests.loopdev import attached, sparse_file

pytestmark = [
    pytest.mark.root,
    pytest.mark.xdist_group("guard_phases"),  # module fixtures: built once, on one worker
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
    pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="mkfs.ext4 missing"),
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
]
READ_ONLY = "  - {name: look, pattern: random, bs: 4k, read: 100}\n"


@dataclass(frozen=True)
class Device:
    path: str
    head: str  # sha256 of the first MiB as the fixture left it

    def intact(self) -> bool:
        with open(self.path, "rb") as fh:
            return hashlib.sha256(fh.read(1 << 20)).hexdigest() == self.head


def _device(backing: Path, mkfs: bool) -> Iterator[Device]:
    with attached(backing) as dev:
        if mkfs:
            subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True)
        with open(dev, "rb") as fh:
            yield Device(dev, hashlib.sha256(fh.read(1 << 20)).hexdigest())


@pytest.fixture(scope="module")
def ext4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Device]:
    yield from _device(sparse_file(tmp_path_factory.mktemp("e") / "ext4.img", 48 << 20), True)


@pytest.fixture(scope="module")
def blank(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Device]:
    yield from _device(sparse_file(tmp_path_factory.mktemp("b") / "blank.img", 8 << 20), False)


# Each of these phases writes the device although the only workload reads.
PHASES = {
    "precondition": ("precondition: {passes: 1}\n", "in precondition"),
    "purge": ("purge: true\n", "in purge (blkdiscard)"),
    "interference": (
        "interference: {base_read: 70, bg_read: 100, steps: 1, interval: 1s, base_jobs: 1,"
        " base_rate_iops: 100, bg_rate_iops: 10}\n",
        "in interference",
    ),
    "background-writes": (
        "interference: {base_read: 100, bg_read: 0, steps: 1, interval: 1s, base_jobs: 1,"
        " base_rate_iops: 100, bg_rate_iops: 10}\n",
        "in interference",
    ),
    "rounds": (
        "precondition: {passes: 1}\nrounds: {workloads: [look], track: look, max: 2, window: 2}\n",
        "in precondition",
    ),
}


@pytest.mark.parametrize("phase", sorted(PHASES))
def test_a_writing_phase_refuses_the_device_although_the_workloads_read(
    phase: str, ext4: Device, tmp_path: Path
) -> None:
    extra, said = PHASES[phase]
    plan = small_plan(tmp_path, workers="[1]", extra=extra, workloads=READ_ONLY)
    for command in (["plan", "check", str(plan)], ["run", str(plan)]):
        done = main_cli(*command, "--target", ext4.path, "--results", str(tmp_path / "r"))
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2, done.stderr
        assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        assert said in lines[0] and "ext4" in lines[0] and ext4.path in lines[0], lines[0]
    assert ext4.intact()


def test_verify_on_a_read_only_workload_is_a_writer(ext4: Device, tmp_path: Path) -> None:
    workloads = "  - {name: look, pattern: random, bs: 4k, read: 100, verify: {region: 1m}}\n"
    plan = small_plan(tmp_path, workers="[1]", workloads=workloads)
    done = main_cli("run", str(plan), "--target", ext4.path, "--results", str(tmp_path / "r"))
    assert done.returncode == 2, done.stderr
    assert "in verify (workload look)" in done.stderr and "ext4" in done.stderr
    assert ext4.intact()


def test_reading_only_is_still_allowed(ext4: Device, tmp_path: Path) -> None:
    plan = small_plan(tmp_path, workers="[1]", workloads=READ_ONLY)
    done = main_cli("plan", "check", str(plan), "--target", ext4.path)
    assert done.returncode == 0, done.stderr


def test_a_plan_with_hosts_cannot_precondition_on_the_controller(tmp_path: Path) -> None:
    hosts = "hosts:\n  - {name: h1, address: 192.0.2.7, targets: [{path: /dev/sdz}]}\n"
    extra = "precondition: {passes: 1}\n" + hosts
    plan = small_plan(tmp_path, workers="[1]", workloads=READ_ONLY, extra=extra)
    done = main_cli("run", str(plan), "--results", str(tmp_path / "r"))
    assert done.returncode == 2, done.stderr
    assert "precondition" in done.stderr and "hosts" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# --- a signature check that cannot run refuses ---------------------------------------------


def _fake_tools(tmp_path: Path, blkid: str | None) -> str:
    """A PATH whose blkid is `blkid` (a shell script body), or has none; the other tools the
    check needs are linked from the system."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for tool in ("readlink", "basename", "awk", "cat", "ls", "tr", "sed", "head", "cut", "sh"):
        found = shutil.which(tool)
        if found and not (folder / tool).exists():
            (folder / tool).symlink_to(found)
    if blkid is not None:
        (folder / "blkid").write_text("#!/bin/sh\n" + blkid)
        (folder / "blkid").chmod(0o755)
    return str(folder)


BUSYBOX = (
    "echo \"blkid: unrecognized option '-p'\" >&2\necho 'Usage: blkid [BLOCKDEV]...' >&2\nexit 1\n"
)
BROKEN = {
    "busybox": BUSYBOX,
    "crashes": "kill -SEGV $$\n",
    "says found, prints nothing": "exit 0\n",
    "nothing found, but complains": "echo 'blkid: error: /dev/x: Input/output error' >&2\nexit 2\n",
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_broken_blkid_fails_closed_locally(
    kind: str, blank: Device, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _fake_tools(tmp_path, BROKEN[kind]))
    with pytest.raises(UnsafeTargetError, match="signature check could not run: blkid exited"):
        check_target(blank.path, writes=True, phase="workload w")
    # explicit consent still lets a scratch device be used where blkid is not util-linux's
    assert check_target(blank.path, writes=True, allow_destroy=[blank.path]).kind == "block"


def test_no_blkid_at_all_fails_closed_locally(
    blank: Device, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _fake_tools(tmp_path, None))
    with pytest.raises(UnsafeTargetError, match="blkid \\(util-linux\\) is not installed"):
        check_target(blank.path, writes=True)


def _remote(path: str, *targets: str) -> str:
    done = subprocess.run(["sh", "-c", target_command(list(targets))], capture_output=True,
                          text=True, env={"PATH": path}, check=False, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("kind", [*sorted(BROKEN), "missing"])
def test_a_broken_blkid_on_a_host_fails_closed(kind: str, blank: Device, tmp_path: Path) -> None:
    path = _fake_tools(tmp_path, BROKEN.get(kind))
    facts = parse_facts(_remote(path, blank.path), [blank.path])
    assert "uncheckable" in facts[blank.path].facts, facts
    [line] = judge("h1", facts, writers={blank.path: "workload w"}, allow_destroy=[])
    assert "could not be checked" in line and "refused: workload w" in line
    assert judge("h1", facts, writers={}, allow_destroy=[]) == []  # reading needs no check
    assert judge("h1", facts, writers=None, allow_destroy=[f"/{blank.path}"]) == []


def test_the_real_blkid_on_a_host_passes_a_blank_device(blank: Device) -> None:
    facts = parse_facts(_remote(os.environ["PATH"], blank.path), [blank.path])
    assert judge("h1", facts, writers=None, allow_destroy=[]) == []


def test_a_host_target_that_is_neither_file_nor_device_is_refused_when_written(
    tmp_path: Path,
) -> None:
    facts = parse_facts(_remote(os.environ["PATH"], str(tmp_path), "/dev/null"))
    lines = judge("h1", facts, writers=None, allow_destroy=[str(tmp_path), "/dev/null"])
    assert len(lines) == 2 and all("neither" in x and "refused" in x for x in lines), lines
    assert all("refused" not in x for x in judge("h1", facts, writers={}, allow_destroy=[]))


def test_cut_or_foreign_check_output_fails_closed(blank: Device) -> None:
    whole = _remote(os.environ["PATH"], blank.path)
    assert END_MARK in whole
    cut = whole.replace(END_MARK, "")
    injected = whole.replace(END_MARK, f"nosuchword {blank.path}\n{END_MARK}")
    for output in (cut, injected, ""):
        facts = parse_facts(output, [blank.path])
        [line] = judge("h1", facts, writers=None, allow_destroy=[])
        assert "could not be checked" in line and "refused" in line
