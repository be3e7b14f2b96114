"""mdtest on two network-namespace hosts (real sshd, key login): mpirun's own ssh launcher
starts the tasks there with the plan's keys (an ssh_config written from `hosts[].ssh`), the
grid beside it on fio's client/server; the stored ops/s are mdtest's SUMMARY, "on 2 nodes".

The namespaces share this machine's files (the metadata directory is one file system for
both, as a parallel file system is for a cluster) and its host name: Open MPI would pick its
shared-memory transport between them and crash, so the test asks for TCP (OMPI_MCA_btl, the
environment Open MPI reads, as a site would set it). MPI's ranks talk host to host: each
namespace gets a default route through the controller, which forwards while the test runs."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.analysis.metadata import OP_LABELS
from arraybench.store.db import Store
from tests.conftest import main_cli, needs_fio
from tests.integration.test_mdtest import ALL, MDTEST, _tables, needs_mdtest
from tests.netns import TestHosts, needs_netns, needs_sshd, running_hosts, ssh_hosts_yaml

pytestmark = [needs_fio, needs_mdtest, pytest.mark.slow, *needs_netns, needs_sshd]
FIO_PORT = 8966
FORWARD = Path("/proc/sys/net/ipv4/ip_forward")


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestHosts]:
    with running_hosts(2, tmp_path_factory.mktemp("md-hosts"), port=8961, ssh=True) as test:
        for namespace, via in zip(test.namespaces, test.controller_addresses, strict=True):
            subprocess.run(["ip", "-n", namespace, "route", "add", "default", "via", via],
                           check=True, capture_output=True)  # fmt: skip
        before = FORWARD.read_text()
        FORWARD.write_text("1")
        try:
            yield test
        finally:
            FORWARD.write_text(before)


def test_mdtest_runs_on_two_hosts_over_ssh(
    tmp_path: Path, hosts: TestHosts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMPI_MCA_btl", "self,tcp")
    declared = ssh_hosts_yaml(hosts, fio_port=FIO_PORT, journals=tmp_path / "journals",
                              target=lambda h: str(tmp_path / f"t-{h.name}.dat"))  # fmt: skip
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "name: md-hosts\n"
        f"hosts:\n{declared}"
        f"host_sets: [[{', '.join(h.name for h in hosts.hosts)}]]\n"
        "timing: {ramp: 0s, duration: 1s}\n"
        "start_lead: 1s\n"
        "load: {workers: [1], iodepth: [1]}\n"
        f"metadata: {{engine: mdtest, mdtest: {MDTEST}, threads: [1, 2], files_per_thread: 10,"
        f" ops: {ALL}, directory: {tmp_path / 'md'}}}\n"
        "workloads:\n"
        "  - {name: rr, pattern: random, bs: 4k, read: 100}\n"
    )
    results = tmp_path / "res"
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stderr
    store = Store(results, create=False)
    ((run, _),) = store.list_runs()
    for tasks in (1, 2):
        point = store.point(run.id, f"metadata/t{tasks}")
        assert point is not None
        folder = Path(point.folder)
        argv = (folder / "point.mdtest").read_text().splitlines()
        addresses = ",".join(f"{h.address}:{tasks}" for h in hosts.hosts)
        assert argv[argv.index("--host") + 1] == addresses
        assert argv[argv.index("plm_rsh_agent") + 1].startswith("ssh -F ")
        text = (folder / "mdtest.txt").read_text()
        assert f"launched with {2 * tasks} total task(s) on 2 node(s)" in text
        (table,) = _tables(text)
        (finding,) = [f for f in store.findings(run.id, "metadata") if f.point_id == point.id]
        for row in finding.data["rows"]:
            assert row["hosts"] == 2 and row["files"] == 2 * tasks * 10
            assert row["ops_per_s"] == table[OP_LABELS[row["op"]]][2]
