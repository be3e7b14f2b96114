"""Scenarios on 3 network-namespace hosts: the degraded scenario's steps run on `host: h1`
over a real sshd (inside h1's namespace, every word quoted), the hosts' paths and devices are
recorded over SSH where the host has it (and said not to be where it has not), and the
report has the impact table of the campaign."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from arraybench.cli import main
from arraybench.hosts.server import HostSpec, SshSpec
from arraybench.plan.model import Host
from arraybench.run import campaign, fleet, scenarios
from tests.conftest import needs_fio
from tests.netns import SSHD, cleanup_stale, started_or_skip

pytestmark = [
    needs_fio,
    pytest.mark.slow,
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="iproute2 (ip) missing"),
    pytest.mark.skipif(not Path(SSHD).exists(), reason="openssh-server is not installed"),
]


def _with_test_sshd(monkeypatch: pytest.MonkeyPatch, ssh: SshSpec) -> None:
    """The plan's `ssh:` has no key for a known_hosts file: the test sshd's host key is given
    the way `hosts check` tests give it (SshSpec options), the rest as the plan says."""
    plain = fleet.host_spec

    def spec(host: Host) -> HostSpec:
        made = plain(host)
        if made.ssh is None:
            return made
        return replace(made, ssh=replace(made.ssh, options=ssh.options, pidfile=ssh.pidfile))

    for module in (fleet, scenarios, campaign):
        monkeypatch.setattr(module, "host_spec", spec)


def test_a_scenario_step_runs_on_its_host_over_ssh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cleanup_stale()
    hosts = started_or_skip(3, tmp_path / "hosts", port=8785)
    try:
        ssh = hosts.start_sshd(1, tmp_path / "ssh1")
        _with_test_sshd(monkeypatch, ssh)
        h0, h1, h2 = hosts.hosts
        target = "targets: [{path: %s, size: 16m}]"
        declared = "".join(
            f"  - {{name: {h.name}, address: {h.address}, port: {port}, {extra}"
            f"{target % (tmp_path / ('t-' + h.name + '.dat'))}}}\n"
            for h, port, extra in ((h0, 8785, ""), (h1, 8786, "ssh: {user: root, key: "
                                   f"{ssh.identity_file}}}, "), (h2, 8785, ""))
        )  # fmt: skip
        words = json.dumps(["echo", "a b;c", "$HOME", "`id`"])
        plan = tmp_path / "plan.yaml"
        plan.write_text(
            "name: avail3\n"
            f"hosts:\n{declared}"
            "start_lead: 1s\n"
            "timing: {ramp: 0s, duration: 1s}\n"
            "load: {workers: [1], iodepth: [1]}\n"
            "workloads: [{name: rr, pattern: random, bs: 4k, read: 100, ioengine: psync}]\n"
            "scenarios:\n"
            "  - {name: baseline}\n"
            "  - name: degraded\n    label: '-1 controller'\n    before:\n"
            "      - run: {argv: [ip, -o, -4, addr, show, dev, eth0], host: h1}\n"
            f"      - run: {{argv: {words}, host: h1}}\n"
        )
        results = tmp_path / "res"
        md = tmp_path / "r.md"
        assert main(["run", str(plan), "--results", str(results), "-o", str(md)]) == 0
    finally:
        hosts.close()
    with sqlite3.connect(results / "arraybench.db") as db:
        rows = db.execute("SELECT kind, data_json FROM findings WHERE kind LIKE 'scenario_%' "
                          "ORDER BY id").fetchall()  # fmt: skip
        keys = [r[0] for r in db.execute("SELECT key FROM points ORDER BY seq")]
    assert keys == ["baseline/rr/w1-qd1-h3", "degraded/rr/w1-qd1-h3"]
    steps = [json.loads(d) for k, d in rows if k == "scenario_step"]
    assert [(s["host"], s["outcome"], s["exit_code"]) for s in steps] == [("h1", "ok", 0)] * 2
    assert f"inet {h1.address}/30" in steps[0]["output"]  # ran inside h1's namespace
    assert steps[1]["output"] == "a b;c $HOME `id`"  # every word reached echo as it was
    paths = [json.loads(d) for k, d in rows if k == "scenario_paths"]
    assert [(p["scenario"], p["moment"]) for p in paths] == [
        ("baseline", "start"), ("baseline", "end"), ("degraded", "before"),
        ("degraded", "start"), ("degraded", "end")]  # fmt: skip
    end = paths[-1]["hosts"]
    assert end["h1"]["recorded"] and "t-h1.dat: regular file, 16777216 bytes" in end["h1"][
        "targets"][0]  # fmt: skip
    assert end["h1"]["devices"]  # /proc/partitions over SSH
    assert not end["h0"]["recorded"] and "no ssh settings" in end["h0"]["why_not"]
    text = md.read_text()
    title = r"### Scenarios: Random 4 KiB \[psync\], 3 hosts, maximum per scenario against"
    assert f"{title} baseline" in text
    assert "| degraded | -1 controller |" in text and " Max " in text
