"""host_tuning on a remote host over a real sshd (a network namespace: it shares this machine's
/sys, so the loop device's settings show the remote writes), restored by `revert_all` from the
journal alone, as after a SIGKILL of the controller."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.errors import PlanError
from arraybench.events.tuning import HostTuningSession, change_lines, plan_changes, revert_all
from arraybench.hosts.server import HostSpec, tcp_problem
from arraybench.plan.load import parse_plan_text
from tests.conftest import needs_fio
from tests.loopdev import attached, sparse_file
from tests.netns import SSHD, started_or_skip, wait_until

pytestmark = [
    needs_fio,
    pytest.mark.skipif(not Path(SSHD).exists(), reason="openssh-server is not installed"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="iproute2 (ip) missing"),
]
KEYS = ("scheduler", "nr_requests", "read_ahead_kb", "nomerges")


def _values(dev: str) -> dict[str, str]:
    queue = Path("/sys/block") / Path(dev).name / "queue"
    found = {k: (queue / k).read_text().strip() for k in KEYS}
    found["scheduler"] = found["scheduler"].split("[")[1].split("]")[0]
    return found


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[HostSpec]:
    hosts = started_or_skip(1, tmp_path / "hosts")
    try:
        ssh = hosts.start_sshd(0, tmp_path / "ssh")
        try:
            assert wait_until(lambda: tcp_problem(hosts.hosts[0].address, 22, 0.5) is None, 10)
            yield HostSpec("h0", hosts.hosts[0].address, ssh=ssh)
        finally:
            hosts.stop_sshd(0)
    finally:
        hosts.close()


def test_applied_over_ssh_and_reverted_from_the_journal(remote: HostSpec, tmp_path: Path) -> None:
    with attached(sparse_file(tmp_path / "backing.img", 64 << 20)) as dev:
        queue = Path("/sys/block") / Path(dev).name / "queue"
        (queue / "scheduler").write_text("mq-deadline")
        (queue / "read_ahead_kb").write_text("128")
        before = _values(dev)
        plan = parse_plan_text(
            f"name: remote\nhosts:\n  - {{name: h0, address: {remote.address}, "
            f"ssh: {{user: root}}, targets: [{{path: {dev}}}]}}\n"
            "host_tuning: {scheduler: none, nr_requests: 64, read_ahead_kb: 0,\n"
            "              hosts: {h0: {nomerges: 2}}}\n"
            "workloads: [{name: r, pattern: random, bs: 4k, read: 100}]\n",
            "plan.yaml",
        )
        lines = change_lines(plan_changes(plan, lambda _: remote))
        assert f"host_tuning: h0:{Path(dev).name} nomerges 0 -> 2" in lines
        results = tmp_path / "res"
        folder = results / "runs" / "r1"
        folder.mkdir(parents=True)
        session = HostTuningSession.apply(plan, folder, results, lambda _: remote)
        tuned = {"scheduler": "none", "nr_requests": "64", "read_ahead_kb": "0", "nomerges": "2"}
        assert _values(dev) == tuned
        assert {c["device"] for c in session.applied()} == {f"h0:{Path(dev).name}"}
        # the controller dies here (no restore): the journal alone reaches the host again
        hosts_of = {"r1": {"h0": remote}}.__getitem__  # the run's plan, as the store has it
        done = revert_all(results, hosts_of)
        assert f"h0:{Path(dev).name} read_ahead_kb restored to 128 (r1)" in done.done
        assert _values(dev) == before and not done.problems
        assert revert_all(results, hosts_of).done == []

        unknown = plan.host_tuning.model_copy(update={"hosts": {"nosuch": {}}})  # type: ignore[union-attr]
        with pytest.raises(PlanError, match="nosuch is not a host of the plan"):
            plan_changes(plan.model_copy(update={"host_tuning": unknown}), lambda _: remote)
