"""A rate on a mixed workload on two real fio servers in network namespaces (issue 35): each
host runs its workers' total at the workload's mix (`rate_iops=350,150` for 500 IOPS a worker
at 70 % reads), and the point's total is the sum over the hosts at that mix, where
`rate_iops=500` ran twice the rate at 50 % reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.analysis.validity import flags_by_point
from arraybench.store.db import Store
from tests.conftest import main_cli, needs_fio
from tests.netns import TestHosts, needs_netns, running_hosts

pytestmark = [needs_fio, pytest.mark.slow, pytest.mark.paced, *needs_netns]  # judges rates

RATE = 500  # IOPS a worker, both directions: low enough to hold on a busy machine
WORKERS = 2


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestHosts]:
    with running_hosts(2, tmp_path_factory.mktemp("hosts"), port=8893) as test_hosts:
        yield test_hosts


def _plan(tmp_path: Path, hosts: TestHosts) -> Path:
    declared = hosts.plan_hosts()
    path = tmp_path / "plan.yaml"
    path.write_text(
        f"name: mixedhosts\nhosts:\n{declared}"
        f"host_sets: [[{', '.join(h.name for h in hosts.hosts)}]]\n"
        # the hosts' scratch files, written: no SSH to examine them (files, not devices)
        f"allow_destroy: [{', '.join(f't-{h.name}.dat' for h in hosts.hosts)}]\n"
        "timing: {ramp: 1s, duration: 3s}\n"
        f"load: {{workers: [{WORKERS}], iodepth: [1]}}\n"
        "workloads:\n"
        "  - {name: rw70, pattern: random, bs: 4k, read: 70, ioengine: psync,"
        f" rate_iops: {RATE}}}\n"
    )
    return path


def test_each_host_runs_its_total_at_the_mix(tmp_path: Path, hosts: TestHosts) -> None:
    results = tmp_path / "res"
    done = main_cli("run", str(_plan(tmp_path, hosts)), "--results", str(results))
    assert done.returncode == 0, done.stderr
    store = Store(results, create=False)
    ((run, _),) = store.list_runs()
    [point] = store.points(run.id)
    assert point.hosts == 2 and not point.partial
    total = point.metric("total", "iops") or 0.0
    reads = point.metric("read", "iops") or 0.0
    assert total == pytest.approx(2 * WORKERS * RATE, rel=0.05)  # 2,000, not 4,000
    assert 100 * reads / total == pytest.approx(70, abs=5)  # not 50 %
    jobs = list(Path(point.folder).rglob("*.fio"))
    assert jobs and all("rate_iops=350,150\n" in j.read_text() for j in jobs), jobs
    kinds = {f.kind for f in flags_by_point(store.findings(run.id)).get(point.id, [])}
    assert not kinds & {"rate-not-reached", "rate-not-kept"}, kinds
