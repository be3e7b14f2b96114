"""Two hosts whose `verify` target is one shared device (here: one file both network-namespace
hosts see under the same path, as two servers see one LUN): each host's integrity writer gets
a region of its own and every host's load stays out of all of them, so the read-backs report
no corruption that nobody caused (root only: real sshd and fio servers in namespaces).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import needs_fio, run_cli
from tests.netns import TestHosts, needs_netns, needs_sshd, running_hosts, ssh_hosts_yaml
from tests.records import stored_findings

pytestmark = [needs_fio, pytest.mark.slow, *needs_netns, needs_sshd]
FIO_PORT = 8850
REGION = 1 << 20


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestHosts]:
    with running_hosts(2, tmp_path_factory.mktemp("shared-verify"), port=8848, ssh=True) as test:
        yield test


def _plan(tmp_path: Path, hosts: TestHosts, shared: Path) -> Path:
    declared = ssh_hosts_yaml(hosts, fio_port=FIO_PORT, journals=tmp_path / "journals",
                              target=lambda _: str(shared))  # fmt: skip
    text = (
        "name: shared-verify\n"
        f"hosts:\n{declared}"
        f"host_sets: [[{', '.join(h.name for h in hosts.hosts)}]]\n"
        "timing: {ramp: 0s, duration: 2s}\n"
        "start_lead: 1s\n"
        "load: {workers: [1], iodepth: [1]}\n"
        "workloads:\n"
        # the load writes too: it must stay out of both hosts' regions
        "  - {name: rw, pattern: random, bs: 4k, read: 50, ioengine: psync, rate_iops: 400,\n"
        "     verify: {region: 1m, block_size: 4k, iops: 400}}\n"
    )
    path = tmp_path / "plan.yaml"
    path.write_text(text)
    return path


def test_two_hosts_on_one_shared_target_verify_disjoint_regions(
    tmp_path: Path, hosts: TestHosts
) -> None:
    shared = tmp_path / "shared.dat"
    shared.write_bytes(os.urandom(8 << 20))
    results = tmp_path / "res"
    done = run_cli("run", str(_plan(tmp_path, hosts, shared)), "--results", str(results),
                   timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    rows = {row["host"]: row for row in stored_findings(results, "integrity")}
    assert sorted(rows) == ["h0", "h1"]
    regions = sorted((r["region_offset"], r["region_offset"] + r["region_length"])
                     for r in rows.values())  # fmt: skip
    assert regions == [((8 << 20) - 2 * REGION, (8 << 20) - REGION), ((8 << 20) - REGION, 8 << 20)]
    for row in rows.values():
        assert row["checked"] > 0 and row["clean"] and not row["problems"], row
        assert row["lost"] == row["corrupt"] == row["unreadable"] == 0, row
    # fio's load (both hosts) ended before the lower region
    for name in rows:
        [job] = results.glob(f"runs/*/points/*/point-{name}.fio")
        assert "size=6m" in job.read_text().split(), job.read_text()
