"""Scenarios on 3 network-namespace hosts: the "-1 controller" scenario's steps run on
`host: h1` over a real sshd (inside h1's namespace, every word quoted); one of them throttles
h1's device (a loop device; the block I/O cgroup of h1's fio) and the after-step lifts it, so
the report's impact table per workload shows the scenario's maximum below the baseline's.
The hosts' paths and devices are recorded over SSH where the host has it (and said not to be
where it has not)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from arraybench.cli import main
from arraybench.errors import ArraybenchError
from arraybench.events import cgroup as cgroups
from arraybench.hosts.server import HostSpec, SshSpec
from arraybench.plan.model import Host
from arraybench.run import campaign, fleet, scenarios
from tests.conftest import needs_fio
from tests.loopdev import attached, sparse_file
from tests.netns import SSHD, cleanup_stale, started_or_skip

pytestmark = [
    needs_fio,
    pytest.mark.slow,
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="iproute2 (ip) missing"),
    pytest.mark.skipif(not Path(SSHD).exists(), reason="openssh-server is not installed"),
]


# A scenario step on h1: `on DEVICE IOPS` limits the reads of every fio process of this host
# (the one in the step's network namespace: h1's fio server, whose jobs inherit it) on
# DEVICE; `off DEVICE` moves them back and removes the cgroup. The slow device of a degraded
# array, as the host sees it.
THROTTLE = """
import os, sys
from pathlib import Path
from arraybench.events import cgroup as cg
mode, device = sys.argv[1:3]
io = cg.detect_io_cgroup()
folder = io.root / ("abtest-slow-" + Path(device).name)
net = os.stat("/proc/self/ns/net").st_ino
if mode == "on":
    if io.version == 2:
        cg.enable_io_v2(io)
    folder.mkdir(exist_ok=True)
    rdev = os.stat(device).st_rdev
    number = f"{os.major(rdev)}:{os.minor(rdev)}"
    for name, line in cg.limit_lines(io, number, {"read_iops": int(sys.argv[3])}).items():
        cg.write_file(folder / name, line)
    moved = 0
    for entry in Path("/proc").iterdir():
        try:
            if (entry.name.isdigit() and (entry / "comm").read_text().strip() == "fio"
                    and os.stat(entry / "ns" / "net").st_ino == net):
                moved += cg.move_process(io, folder, int(entry.name))
        except OSError:
            continue
    print(f"{moved} fio process(es) of this host limited to {sys.argv[3]} read IOPS on {device}")
    sys.exit(0 if moved else 1)
for pid in cg.members(folder):
    cg.move_process(io, io.root, pid)
cg.remove_folder(folder)
print(f"limit on {device} lifted")
"""


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


def _io_cgroup() -> None:
    try:
        cgroups.detect_io_cgroup()
    except ArraybenchError as exc:
        pytest.skip(f"no cgroup I/O controller: {exc.one_line()}")


def test_a_scenario_step_runs_on_its_host_over_ssh_and_slows_its_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _io_cgroup()
    cleanup_stale()
    hosts = started_or_skip(3, tmp_path / "hosts", port=8785)
    try:
        ssh = hosts.start_sshd(1, tmp_path / "ssh1")
        _with_test_sshd(monkeypatch, ssh)
        h0, h1, h2 = hosts.hosts
        script = tmp_path / "throttle.py"
        script.write_text(THROTTLE)
        with attached(sparse_file(tmp_path / "h1.img", 64 << 20)) as device:
            file = "targets: [{path: %s, size: 16m}]"
            declared = "".join(
                f"  - {{name: {h.name}, address: {h.address}, port: {port}, {extra}}}\n"
                for h, port, extra in (
                    (h0, 8785, file % (tmp_path / "t-h0.dat")),
                    (h1, 8786, f"ssh: {{user: root, key: {ssh.identity_file}}}, "
                               f"targets: [{{path: {device}}}]"),
                    (h2, 8785, file % (tmp_path / "t-h2.dat")),
                )
            )  # fmt: skip
            words = json.dumps(["echo", "a b;c", "$HOME", "`id`"])
            slow = json.dumps([sys.executable, str(script), "on", device, "50"])
            fast = json.dumps([sys.executable, str(script), "off", device])
            plan = tmp_path / "plan.yaml"
            plan.write_text(
                "name: avail3\n"
                f"hosts:\n{declared}"
                "start_lead: 1s\n"
                "timing: {ramp: 0s, duration: 1s}\n"
                "load: {workers: [1, 2], iodepth: [1]}\n"  # the ladder
                "workloads:\n"
                "  - {name: rr, pattern: random, bs: 4k, read: 100, ioengine: psync,"
                " rate_iops: 400}\n"
                "  - {name: sr, pattern: sequential, bs: 64k, read: 100, ioengine: psync,"
                " rate_iops: 200}\n"
                "scenarios:\n"
                "  - {name: baseline, label: all controllers}\n"
                "  - name: degraded\n    label: '-1 controller'\n    before:\n"
                "      - run: {argv: [ip, -o, -4, addr, show, dev, eth0], host: h1}\n"
                f"      - run: {{argv: {words}, host: h1}}\n"
                f"      - run: {{argv: {slow}, host: h1}}\n"
                f"    after:\n      - run: {{argv: {fast}, host: h1}}\n"
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
    assert keys == [f"{s}/{w}/w{n}-qd1-h3" for s in ("baseline", "degraded")
                    for w in ("rr", "sr") for n in (1, 2)]  # fmt: skip
    steps = [json.loads(d) for k, d in rows if k == "scenario_step"]
    assert [(s["phase"], s["host"], s["outcome"], s["exit_code"]) for s in steps] == [
        *[("before", "h1", "ok", 0)] * 3, ("after", "h1", "ok", 0)]  # fmt: skip
    assert f"inet {h1.address}/30" in steps[0]["output"]  # ran inside h1's namespace
    assert steps[1]["output"] == "a b;c $HOME `id`"  # every word reached echo as it was
    assert re.match(r"[1-9]\d* fio process\(es\) of this host limited", steps[2]["output"])
    assert steps[3]["output"] == f"limit on {device} lifted"
    paths = [json.loads(d) for k, d in rows if k == "scenario_paths"]
    assert [(p["scenario"], p["moment"]) for p in paths] == [
        ("baseline", "start"), ("baseline", "end"), ("degraded", "before"),
        ("degraded", "start"), ("degraded", "end"), ("degraded", "after")]  # fmt: skip
    end = paths[-2]["hosts"]
    assert end["h1"]["recorded"]  # a block device's size: /proc/partitions, not stat's 0
    assert end["h1"]["targets"] == [f"{device}: block special file, {64 << 20} bytes "
                                    f"({Path(device).name})"]  # fmt: skip
    assert end["h1"]["devices"]  # /proc/partitions over SSH
    assert not end["h0"]["recorded"] and "no ssh settings" in end["h0"]["why_not"]
    # the impact table per workload: h1 (a third of the load) read at 50 IOPS in "-1 controller"
    text = md.read_text()
    for workload in (r"Random 4 KiB \[psync\]", r"Sequential 64 KiB \[psync\]"):
        title = f"### Scenarios: {workload}, 3 hosts, maximum per scenario against baseline"
        assert title in text, text  # (Markdown escapes the brackets)
    impacts = re.findall(r"\| degraded \| -1 controller \| [\d.,]+ k?(?:IOPS|MB/s|MiB/s) Max "
                         r"(-[\d.]+) %", text)  # fmt: skip
    assert len(impacts) == 2, text
    assert all(float(i) < -15 for i in impacts), impacts
