"""A many-host run's bundle (docs/bundle.md): a campaign on 2 real fio servers in network
namespaces bundled, verified and imported into another results folder, where `show` and the
report give the same per-host and total figures as the original."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bundles import assert_reads_the_same
from tests.conftest import main_cli, needs_fio
from tests.netns import TestHosts, needs_netns, running_hosts

# not serial: nothing here is a rate or a time; the bundle's copy must read as the original
# whatever the figures (the parallel phase runs other many-host runs too)
pytestmark = [needs_fio, pytest.mark.slow, *needs_netns]


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestHosts]:
    with running_hosts(2, tmp_path_factory.mktemp("hosts"), port=8901) as test_hosts:
        yield test_hosts


def _plan(tmp_path: Path, hosts: TestHosts) -> Path:
    declared = hosts.plan_hosts()
    names = [h.name for h in hosts.hosts]
    path = tmp_path / "plan.yaml"
    path.write_text(
        "name: hostsbundle\n"
        f"hosts:\n{declared}"
        f"host_sets: [[{names[0]}], [{', '.join(names)}]]\n"
        "timing: {ramp: 0s, duration: 2s}\n"
        "load: {workers: [1], iodepth: [1]}\n"
        "workloads:\n"
        "  - {name: rr, pattern: random, bs: 4k, read: 100, ioengine: psync, rate_iops: 2000}\n"
    )
    return path


def test_a_many_host_run_imported_from_its_bundle_reads_the_same(
    tmp_path: Path, hosts: TestHosts
) -> None:
    results, other, bundle = tmp_path / "res", tmp_path / "elsewhere", tmp_path / "b.zip"
    done = main_cli("run", str(_plan(tmp_path, hosts)), "--results", str(results))
    assert done.returncode == 0, done.stderr
    made = main_cli("bundle", "latest", "--results", str(results), "-o", str(bundle))
    assert made.returncode == 0, made.stderr
    with zipfile.ZipFile(bundle) as z:  # each host's job file and fio's output came along
        names = z.namelist()
    for h in hosts.hosts:
        assert any(n.endswith(f"point-{h.name}.fio") for n in names), names
    assert main_cli("bundle", "verify", str(bundle)).returncode == 0
    imported = main_cli("import", str(bundle), "--results", str(other))
    assert imported.returncode == 0 and "2 point(s)" in imported.stdout, imported.stderr
    a, _ = assert_reads_the_same(results, other, tmp_path)
    assert "h2" in a or "2 hosts" in a
