"""A host without `ssh:` (its fio server started by hand): nothing on it can be examined, so
every target it writes needs allow_destroy, in whatever spelling the plan gives the path and
whether it is a device, a link to one or a file (root only: a network-namespace host running a
real fio server, a loop device carrying ext4 on the same machine).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import main_cli, needs_fio
from tests.loopdev import attached, sparse_file
from tests.netns import SSHD, TestHosts, needs_netns, running_hosts

pytestmark = [
    needs_fio,
    *needs_netns,  # root: the loop devices need it too
    pytest.mark.xdist_group("guard_hosts"),
    pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="mkfs.ext4 missing"),
]


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestHosts]:
    with running_hosts(1, tmp_path_factory.mktemp("hosts"), port=8841) as hosts:
        yield hosts


@pytest.fixture(scope="module")
def ext4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    backing = sparse_file(tmp_path_factory.mktemp("loop") / "d.img", 32 << 20)
    with attached(backing) as dev:
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True)
        yield dev, _head(dev)


def _head(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read(1 << 20)).hexdigest()


def _plan(tmp_path: Path, hosts: TestHosts, target: str, extra: str = "") -> Path:
    h = hosts.hosts[0]
    text = (
        "name: unexamined\n"
        f"hosts:\n  - {{name: {h.name}, address: {h.address}, port: {h.port},"
        f" targets: [{{path: '{target}', size: 8m}}]}}\n"
        "timing: {ramp: 0s, duration: 1s}\n"
        "start_lead: 1s\n"  # one host: no start to line up (3 s by default)
        "load: {workers: [1], iodepth: [1]}\n"
        f"{extra}"
        "workloads:\n"
        "  - {name: w, pattern: random, bs: 4k, read: 0, ioengine: psync, rate_iops: 200}\n"
    )
    path = tmp_path / "plan.yaml"
    path.write_text(text)
    return path


def _spellings(dev: str, tmp_path: Path) -> list[str]:
    name = os.path.basename(dev)
    link = tmp_path / "innocent.dat"
    link.symlink_to(dev)
    return [f"/{dev}", f"/./dev/{name}", f"/tmp/../dev/{name}", f"/dev//{name}", str(link)]


def test_no_spelling_of_a_device_is_written_without_consent(
    host: TestHosts, ext4: tuple[str, str], tmp_path: Path
) -> None:
    dev, head = ext4
    for target in _spellings(dev, tmp_path):
        results = tmp_path / "r"
        done = main_cli("run", str(_plan(tmp_path, host, target)), "--results", str(results))
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2, (target, done.stderr)
        assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        assert "cannot be examined without SSH" in lines[0] and "workload w" in lines[0]
        assert os.path.normpath(target).replace("//", "/") in lines[0]
        assert _head(dev) == head, target
    assert not list(tmp_path.glob("r/runs/*/points/*/fio.json"))


def test_consent_in_another_spelling_of_the_same_path_counts(
    host: TestHosts, tmp_path: Path
) -> None:
    """A file target needs consent too (it may be a link to a device on the host); the
    consent is compared after normalising both spellings, and the run then goes ahead."""
    target = tmp_path / "scratch" / "t.dat"
    target.parent.mkdir()
    spelled = f"/{tmp_path}/./scratch/t.dat"
    plan = _plan(tmp_path, host, spelled)
    done = main_cli("plan", "check", str(plan))
    assert done.returncode == 0, done.stderr  # plan check does not reach the hosts
    done = main_cli("run", str(plan), "--results", str(tmp_path / "r"))
    assert done.returncode == 2 and "allow_destroy" in done.stderr, done.stderr
    consent = f"allow_destroy: ['{tmp_path}/scratch/../scratch/t.dat']\n"
    plan = _plan(tmp_path, host, spelled, consent)
    done = main_cli("run", str(plan), "--results", str(tmp_path / "r2"))
    assert done.returncode == 0, done.stderr
    assert target.stat().st_size >= 8 << 20


def test_a_read_only_plan_needs_no_consent(
    host: TestHosts, ext4: tuple[str, str], tmp_path: Path
) -> None:
    dev, head = ext4
    plan = _plan(tmp_path, host, f"/{dev}")
    plan.write_text(plan.read_text().replace("read: 0", "read: 100"))
    done = main_cli("run", str(plan), "--results", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    assert _head(dev) == head


@pytest.fixture(scope="module")
def ssh_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestHosts]:
    if not Path(SSHD).exists():
        pytest.skip("openssh-server is not installed")
    with running_hosts(1, tmp_path_factory.mktemp("ssh-host"), port=8843, ssh=True) as hosts:
        yield hosts


def _ssh_plan(tmp_path: Path, hosts: TestHosts, target: str) -> Path:
    h, keys = hosts.hosts[0], hosts.workdir / "ssh-h0"
    text = (
        "name: examined\n"
        f"hosts:\n  - {{name: {h.name}, address: {h.address}, port: 8845,\n"
        f"     ssh: {{user: root, key: {keys / 'idkey'}, known_hosts: {keys / 'known_hosts'}}},\n"
        f"     targets: [{{path: '{target}', size: 8m}}]}}\n"
        "timing: {ramp: 0s, duration: 1s}\n"
        "start_lead: 1s\n"  # one host: no start to line up (3 s by default)
        "load: {workers: [1], iodepth: [1]}\n"
        "workloads:\n"
        "  - {name: w, pattern: random, bs: 4k, read: 0, ioengine: psync, rate_iops: 200}\n"
    )
    path = tmp_path / "plan.yaml"
    path.write_text(text)
    return path


def test_an_examined_hosts_job_file_names_the_resolved_path(
    ssh_host: TestHosts, ext4: tuple[str, str], tmp_path: Path
) -> None:
    """The host's fio is given the path the check resolved, not the link the plan names (a
    link swapped after the check then leads nowhere new); a link to the ext4 device is
    refused as the device itself is."""
    real = tmp_path / "data" / "real.dat"
    real.parent.mkdir()
    real.write_bytes(os.urandom(8 << 20))
    link = tmp_path / "link.dat"
    link.symlink_to(real)
    results = tmp_path / "r"
    done = main_cli("run", str(_ssh_plan(tmp_path, ssh_host, str(link))), "--results", str(results))
    assert done.returncode == 0, done.stderr
    [job] = results.glob("runs/*/points/*/point-h0.fio")
    assert f"filename={real}" in job.read_text().split()
    dev, head = ext4
    device_link = tmp_path / "dev-link.dat"
    device_link.symlink_to(dev)
    plan = _ssh_plan(tmp_path, ssh_host, str(device_link))
    done = main_cli("run", str(plan), "--results", str(tmp_path / "r2"))
    assert done.returncode == 2 and "ext4" in done.stderr and "workload w" in done.stderr
    assert _head(dev) == head
