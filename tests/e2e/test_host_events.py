"""Events on many hosts over a real sshd in network-namespace hosts: a throttle on `host: h2`
under load dips h2 alone and recovers; a controller SIGKILLed during a remote throttle leaves
it journaled and `arraybench revert` removes it there; a host whose sshd is down stops the
run in one line with nothing left running.

The hosts share this machine's /sys, cgroup tree and loop devices, but each runs its own
sshd and its fio server (started over SSH by arraybench), so the remote scripts act on the
host's processes through SSH exactly as on another machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from arraybench import cli
from arraybench.errors import ArraybenchError
from arraybench.events import cgroup as cgroups
from arraybench.events.event_kinds.signal import signal_targets
from arraybench.events.event_kinds.throttle import CGROUP_PREFIX
from arraybench.events.remote import Remote
from arraybench.hosts.server import HostSpec, SshSpec, stop_server_over_ssh, tcp_problem
from arraybench.system.procs import start_ticks
from tests.conftest import main_cli, needs_fio, run_cli
from tests.loopdev import attached, sparse_file
from tests.netns import SSHD, TestHosts, cleanup_stale, started_or_skip, wait_until

pytestmark = [
    needs_fio,
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="iproute2 (ip) missing"),
    pytest.mark.skipif(not Path(SSHD).exists(), reason="openssh-server is not installed"),
    # one worker: the servers' default pidfiles (~/arraybench-fio-PORT.pid) are one home's
    pytest.mark.xdist_group("host_events"),
]
BASE_PORT = 8830  # the servers arraybench starts over SSH: one port per host (own pidfile)


def _io_cgroup() -> cgroups.IoCgroup:
    try:
        return cgroups.detect_io_cgroup()
    except ArraybenchError as exc:
        pytest.skip(f"no cgroup I/O controller: {exc.one_line()}")


def _ours(cg: cgroups.IoCgroup, pid: int | None = None) -> list[Path]:
    """Throttle cgroups on the hosts made by controller `pid` (any, by default): other tests
    of this machine may make cgroups of their own meanwhile."""
    mark = f"{CGROUP_PREFIX}-{pid or ''}"
    return [p for p in cg.root.iterdir() if p.name.startswith(mark) and "-h" in p.name]


@dataclass
class Lab:
    hosts: TestHosts
    ssh: dict[str, SshSpec]
    device: str
    folder: Path

    def spec(self, i: int) -> HostSpec:
        """Host i as the plan declares it (the server's pidfile: the default one)."""
        h = self.hosts.hosts[i]
        return HostSpec(h.name, h.address, BASE_PORT + i, replace(self.ssh[h.name], pidfile=None))

    def host_lines(self, count: int) -> str:
        lines = []
        for i in range(count):
            h, ssh = self.hosts.hosts[i], self.ssh[self.hosts.hosts[i].name]
            known = ssh.options[0].split("=", 1)[1]
            lines.append(
                f"  - {{name: {h.name}, address: {h.address}, port: {BASE_PORT + i}, "
                f"ssh: {{user: root, key: {ssh.identity_file}, known_hosts: {known}}}, "
                f"targets: [{{path: {self.device}}}]}}\n"
            )
        return "".join(lines)

    def servers_of(self, i: int) -> list[str]:
        """Command lines of the processes of host i that belong to arraybench's fio server
        (the server and everything it forked carry its command line)."""
        mark = f",{BASE_PORT + i} "
        found = []
        for pid in self.hosts.pids(i):
            with contextlib.suppress(OSError):
                line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                if mark in line:
                    found.append(f"{pid}: {line}")
        return found

    def stop_servers(self) -> None:
        for i in range(self.hosts.count):
            spec = self.spec(i)
            if tcp_problem(spec.address, spec.port, 0.5) is None:
                with contextlib.suppress(ArraybenchError):
                    stop_server_over_ssh(spec, timeout_s=20)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    _io_cgroup()
    cleanup_stale()
    folder = tmp_path_factory.mktemp("hostevents")
    hosts = started_or_skip(3, folder / "hosts", port=BASE_PORT - 10)
    try:
        ssh = {h.name: hosts.start_sshd(i, folder / f"ssh-{h.name}") for i, h in
               enumerate(hosts.hosts)}  # fmt: skip
        with attached(sparse_file(folder / "backing.img", 64 << 20)) as dev:
            lab = Lab(hosts, ssh, dev, folder)
            try:
                yield lab
            finally:
                lab.stop_servers()
    finally:
        hosts.close()


def _plan(lab: Lab, tmp_path: Path, count: int, events: str, duration: str) -> Path:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "name: hostevents\n"
        f"hosts:\n{lab.host_lines(count)}"
        f"timing: {{ramp: 0s, duration: {duration}}}\n"
        "load: {workers: [1], iodepth: [1]}\n"
        "workloads:\n"
        "  - name: rr\n"
        "    pattern: random\n    bs: 4k\n    read: 100\n    ioengine: psync\n"
        "    rate_iops: 1000\n"
        f"    events:\n{events}"
    )
    return plan


def _arraybench(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "arraybench", *args], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """arraybench in this process (the commands after the one under test: no start-up cost)."""
    capsys.readouterr()
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_revert_removes_a_remote_throttle_left_by_a_killed_controller(
    lab: Lab, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cg = _io_cgroup()
    events = (f"      - {{at: 1s, duration: 60s, host: h0, "
              f"throttle: {{device: {lab.device}, read_iops: 50}}}}\n")  # fmt: skip
    plan = _plan(lab, tmp_path, 1, events, "40s")
    results = tmp_path / "res"
    proc = _arraybench("run", str(plan), "--results", str(results))
    try:
        assert wait_until(lambda: bool(_ours(cg, proc.pid)), 40, 0.1), (
            proc.kill() or proc.communicate()[1]  # type: ignore[func-returns-value]
        )
        [folder] = _ours(cg, proc.pid)
        assert wait_until(lambda: bool(cgroups.members(folder)), 10)
        time.sleep(0.5)  # the apply's journal update lands
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    stuck = cgroups.members(folder)
    assert stuck, "the throttle was in place when the controller died"
    with sqlite3.connect(results / "arraybench.db") as db:
        rows = db.execute("SELECT kind, host, state, undo_json FROM injections").fetchall()
    # journaled before they were made: the fio server started over SSH, then the throttle
    assert [(k, h, s) for k, h, s, _ in rows] == [
        ("fio_server", "h0", "applying"),
        ("throttle", "h0", "applying"),
    ]
    assert json.loads(rows[1][3])["folder"] == folder.name
    # the next run refuses, in one line, until the throttle is undone
    code, _, err = _main(capsys, "run", str(plan), "--results", str(results))
    assert code == 2 and "arraybench revert" in err
    assert len(err.strip().splitlines()) <= 2, err
    code, out, err = _main(capsys, "revert", "--results", str(results))
    assert code == 0, err
    assert "throttle" in out and "host h0" in out
    assert not folder.exists()  # the cgroup (and its limit) is gone on the host
    origin = cgroups.folder_of(cg, "/")
    for pid in stuck:  # the fio processes are back where they were (or ended meanwhile)
        where = cgroups.cgroup_of(pid, cg)
        assert where is None or cgroups.folder_of(cg, where) == origin
    # nothing orphaned: the fio client the controller left is ended, the server stopped
    assert "fio --server on h0" in out
    spec = lab.spec(0)
    assert wait_until(lambda: tcp_problem(spec.address, spec.port, 0.5) is not None, 10)
    assert wait_until(lambda: not lab.servers_of(0), 10), lab.servers_of(0)
    with sqlite3.connect(results / "arraybench.db") as db:
        assert db.execute("SELECT state FROM injections").fetchall() == [("reverted",)] * 2
    assert "nothing to revert" in _main(capsys, "revert", "--results", str(results))[1]


def _events_finding(results: Path) -> dict:
    with sqlite3.connect(results / "arraybench.db") as db:
        [(data,)] = db.execute("SELECT data_json FROM findings WHERE kind = 'events'")
    return json.loads(data)


@pytest.mark.paced  # a recovery within the plan's 5 % band in the seconds left: timing
def test_a_throttle_on_one_host_dips_that_host_alone_and_it_recovers(
    lab: Lab, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = (f"      - {{at: 3s, duration: 2s, host: h2, label: h2 slow, "
              f"throttle: {{device: {lab.device}, read_iops: 50}}}}\n")  # fmt: skip
    # 13 s: after the revert h2's fio catches up on the I/Os it owes (3x its rate for a
    # second, seen here), which is not back yet (issue 35); the 3 s a recovery holds follow
    plan = _plan(lab, tmp_path, 3, events, "13s")
    plan.write_text(plan.read_text().replace("timing:", "host_sets: [[h0, h1, h2]]\ntiming:"))
    results = tmp_path / "res"
    done = main_cli("run", str(plan), "--results", str(results))  # in this process: no start-up
    assert done.returncode == 0, done.stderr
    data = _events_finding(results)
    assert [(r["action"], r["outcome"]) for r in data["records"]] == [
        ("apply", "ok"),
        ("revert", "ok"),
    ]
    assert data["records"][0]["detail"].startswith("h2: ")  # applied on h2 only
    per_host = {h: impacts[0] for h, impacts in data["host_impact"].items()}
    assert set(per_host) == {"h0", "h1", "h2"}
    # h2 fell from ~1000 to ~50 IOPS; the others kept their steady seconds
    assert per_host["h2"]["dip_pct"] > 70, per_host["h2"]
    assert per_host["h2"]["recovery_after_revert_s"] is not None, per_host["h2"]
    for other in ("h0", "h1"):
        assert per_host[other]["dip_pct"] < 30, (other, per_host[other])
    # on the total (3 x 1000 IOPS) the dip is about h2's share
    [total] = data["impact"]
    assert 15 < total["dip_pct"] < 50, total
    # the report shows the impact per host beside the total
    assert "impact of each event on each host" in done.stdout
    assert "h2 slow" in done.stdout
    shown = _main(capsys, "show", "latest", "--results", str(results))[1]
    assert "h2 slow: dip" in shown and "per host: h0 dip" in shown, shown
    as_json = json.loads(_main(capsys, "show", "latest", "--results", str(results), "--format",
                               "json")[1])  # fmt: skip
    [point] = as_json["points"]
    assert point["events"]["host_impact"]["h2"][0]["dip_pct"] == per_host["h2"]["dip_pct"]


def test_a_host_whose_sshd_is_down_stops_the_run_in_one_line(lab: Lab, tmp_path: Path) -> None:
    events = (f"      - {{at: 1s, duration: 1s, host: h0, "
              f"throttle: {{device: {lab.device}, read_iops: 50}}}}\n")  # fmt: skip
    plan = _plan(lab, tmp_path, 2, events, "2s")
    lab.hosts.stop_sshd(1)
    try:
        done = run_cli("run", str(plan), "--results", str(tmp_path / "res"), timeout=120)
    finally:
        lab.ssh["h1"] = lab.hosts.start_sshd(1, lab.folder / "ssh-h1")
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and "h1" in errors[0] and "ssh" in errors[0], done.stderr
    assert "Traceback" not in done.stderr
    # nothing half-started: h0's server (started before h1 failed) is stopped again, no fio
    # runs in either host, no throttle cgroup, the namespaces are as they were
    for i in (0, 1):
        spec = lab.spec(i)
        assert tcp_problem(spec.address, spec.port, 0.5) is not None, spec.name
        assert lab.servers_of(i) == []
    assert len(lab.hosts.namespaces) == 3


def _one_job(remote: Remote, client: subprocess.Popen[bytes]) -> bool:
    """The load selector finds one process, started after the client: its job (a backend of
    an earlier client of this server, still ending, was a second leaf once, under load)."""
    pids = signal_targets(remote, ["load", remote.pidfile])
    job = start_ticks(pids[0]) if len(pids) == 1 else None
    began = start_ticks(client.pid)
    return job is not None and began is not None and job >= began


def test_signal_netem_and_run_on_a_host_over_ssh(lab: Lab, tmp_path: Path) -> None:
    """The other remote injectors against a host's real fio server under load."""
    from arraybench.events.errors import InjectorError
    from arraybench.events.event_kinds.netem import HostNetem, NetemInjector
    from arraybench.events.event_kinds.run import HostCommand
    from arraybench.events.event_kinds.signal import HostSignal
    from arraybench.hosts.server import start_server_over_ssh
    from arraybench.plan.event_kinds.netem import NetemAction
    from arraybench.plan.event_kinds.run import RunAction
    from arraybench.plan.event_kinds.signal import SignalAction

    spec = lab.spec(1)
    start_server_over_ssh(spec, timeout_s=20)
    job = tmp_path / "load.fio"
    job.write_text(f"[load]\nfilename={lab.device}\nrw=randread\nbs=4k\ndirect=1\n"
                   "time_based=1\nruntime=30\nrate_iops=500\nioengine=psync\n")  # fmt: skip
    client = subprocess.Popen(["fio", f"--client={spec.address},{spec.port}", str(job)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    remote = Remote(spec)
    try:
        assert wait_until(lambda: len(lab.servers_of(1)) >= 3, 20), lab.servers_of(1)
        assert wait_until(lambda: _one_job(remote, client), 20), signal_targets(
            remote, ["load", remote.pidfile]
        )
        freeze = HostSignal(remote, SignalAction(load=True))
        assert freeze.apply().startswith("SIGSTOP sent to 1 process(es)")
        [stopped] = freeze._stopped

        def state() -> str:
            return Path(f"/proc/{stopped}/stat").read_text().rsplit(")", 1)[1].split()[0]

        # a job inside an I/O (state D) stops when that I/O ends, so the stop is awaited
        assert wait_until(lambda: state() == "T", 5), state()
        assert "SIGCONT" in freeze.revert()
        assert wait_until(lambda: state() != "T", 5), state()
        action = NetemAction(interface="eth0", delay=0.002)
        netem = HostNetem(remote, action, NetemInjector(action).netem_args())
        try:
            netem.apply()
        except InjectorError as exc:  # a kernel without sch_netem: said in one line
            assert "qdisc kind is unknown" in exc.message and not netem.applied
        else:
            qdiscs = ["ip", "netns", "exec", lab.hosts.namespaces[1], "tc", "qdisc", "show"]
            shown = subprocess.run(qdiscs, capture_output=True, text=True).stdout
            assert "netem" in shown and "delay 2ms" in shown, shown
            assert "removed" in netem.revert()
            assert "netem" not in subprocess.run(qdiscs, capture_output=True, text=True).stdout
        # run: argv word for word on the host (a value with spaces and quotes stays one word)
        marker = tmp_path / "it's here"
        done = HostCommand(remote, RunAction(argv=["touch", str(marker)], timeout=10)).apply()
        assert marker.exists() and "done" in done
        slow = HostCommand(remote, RunAction(argv=["sleep", "5"], timeout=1))
        with pytest.raises(InjectorError) as late:
            slow.apply()
        assert late.value.outcome == "timeout"
    finally:
        client.kill()
        client.wait()
        with contextlib.suppress(ArraybenchError):
            stop_server_over_ssh(replace(spec), timeout_s=20)
