"""Many hosts on fio client/server: real fio servers in 3 network namespaces (root only).

The namespace tests share one set of 3 test hosts (module fixture) and run in file order; the
last one removes the namespaces and checks nothing is left. Pure tests (command lines, the
clock arithmetic) need neither root nor fio.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from arraybench.analysis.hosts import combine_hosts
from arraybench.engines.fio.runner import fio_binary, fio_version
from arraybench.hosts.address import AddressError
from arraybench.hosts.client import (
    MultiHostOutcome,
    aligned_per_second,
    client_command,
    run_on_hosts,
)
from arraybench.hosts.clock import estimate_offset
from arraybench.hosts.server import (
    HostError,
    HostSpec,
    SshSpec,
    check_host,
    check_hosts,
    start_server_command,
    start_server_over_ssh,
    stop_server_command,
    stop_server_over_ssh,
    tcp_problem,
)
from tests.conftest import needs_fio
from tests.netns import (
    LINK_PREFIX,
    SSHD,
    TestHosts,
    cleanup_stale,
    our_namespaces,
    started_or_skip,
    wait_until,
)

IS_ROOT = os.geteuid() == 0
NETNS_MARKS = (
    pytest.mark.slow,
    pytest.mark.paced,  # clock uncertainty and start spreads in ms, watchdog times
    pytest.mark.root,
    needs_fio,
    pytest.mark.skipif(not IS_ROOT, reason="network namespaces need root"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="iproute2 (ip) missing"),
)
Test = TypeVar("Test", bound=Callable[..., None])


def mark_netns(func: Test) -> Test:
    """The marks of a test that needs root, fio and network namespaces."""
    for marker in NETNS_MARKS:
        func = marker(func)
    return func


POINT = """\
[global]
ioengine=psync
rw=randread
bs=4k
size=16m
filename=target.dat
time_based=1
runtime={runtime}
rate_iops=2000
write_iops_log=point
log_avg_msec=500
log_unix_epoch=1

[reader]
"""


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestHosts]:
    if not IS_ROOT:
        pytest.skip("network namespaces need root")
    cleanup_stale()
    test_hosts = started_or_skip(3, tmp_path_factory.mktemp("hosts"))
    yield test_hosts
    test_hosts.close()


@pytest.fixture(scope="module")
def version() -> str:
    return fio_version(fio_binary())


@pytest.fixture(scope="module")
def offsets(hosts: TestHosts, version: str) -> dict[str, float]:
    checks = check_hosts(hosts.hosts, version)
    return {c.name: c.clock_offset_ms or 0.0 for c in checks}


def _lay_out_targets(hosts: TestHosts) -> None:
    """Each server's target.dat, written before the points: fio lays out a missing file at
    job start, which would delay that host's start by the time it takes."""
    for i in range(hosts.count):
        target = hosts.host_folder(i) / "target.dat"
        if not target.exists():
            target.write_bytes(os.urandom(16 << 20))


def _point(tmp_path: Path, runtime: int) -> Path:
    jobfile = tmp_path / "point.fio"
    jobfile.write_text(POINT.format(runtime=runtime))
    return jobfile


def _fio_processes_in(folder: Path) -> list[int]:
    """fio processes whose working directory is ``folder`` (a leftover client)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "cwd").resolve() == folder.resolve() and "fio" in (
                entry / "comm"
            ).read_text():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _break_host_mid_point(hosts: TestHosts, i: int, how: str) -> threading.Thread:
    """After host i's job has run ~1 s, kill its server or cut its link (in a thread)."""

    def breaker() -> None:
        if wait_until(lambda: hosts.job_running(i), timeout_s=15):
            time.sleep(1.0)
            (hosts.kill_server if how == "kill" else hosts.cut_link)(i)

    thread = threading.Thread(target=breaker, daemon=True)
    thread.start()
    return thread


def _restart(hosts: TestHosts, i: int) -> None:
    hosts.kill_server(i)
    hosts.restore_link(i)
    hosts.start_server(i)


# --------------------------------------------------------------------------- checks


@mark_netns
def test_check_host_on_three_hosts_and_one_without_server(
    hosts: TestHosts, version: str, offsets: dict[str, float]
) -> None:
    began = time.monotonic()
    checks = check_hosts(hosts.hosts, version)
    for check in checks:
        print(
            f"{check.name}: fio {check.fio_version}, clock offset "
            f"{check.clock_offset_ms:+.3f} ms +- {check.clock_uncertainty_ms:.3f} ms"
        )
        assert check.reachable and check.fio_version == version and check.version_matches
        assert check.problems == []
        assert check.clock_offset_ms is not None and check.clock_uncertainty_ms is not None
        # One machine, one clock: the offset is fio's stamp truncation (0..-2 ms) +- noise.
        assert abs(check.clock_offset_ms) < 3.0
        assert check.clock_uncertainty_ms < 2.0
    assert time.monotonic() - began < 10
    # The root-side address of host 0's link: nothing listens there.
    nobody = HostSpec("nobody", hosts.controller_addresses[0], 8765)
    lost = check_host(nobody, version)
    assert not lost.reachable and lost.fio_version is None
    assert len(lost.problems) == 1
    assert "cannot connect to the fio server port" in lost.problems[0]
    assert "Connection refused" in lost.problems[0]


# --------------------------------------------------------------------------- scaling


def _assert_totals(outcome: MultiHostOutcome, names: list[str]) -> None:
    per_host, total = combine_hosts(outcome)
    assert sorted(per_host) == sorted(names)
    assert all(per_host[n].total.ios > 0 for n in names)
    # One job per host, summed in host order: the float sums are identical, not just close.
    assert total.total.iops == sum(per_host[n].total.iops for n in names)
    assert total.total.ios == sum(per_host[n].total.ios for n in names)
    assert total.total.bytes == sum(per_host[n].total.bytes for n in names)
    assert outcome.document is not None and (len(names) == 1) == (
        outcome.document.all_clients is None
    )
    aligned = aligned_per_second(outcome, "iops")
    assert aligned.wall_clock and sorted(aligned.per_host) == sorted(names)
    by_host = {n: dict(series) for n, series in aligned.per_host.items()}
    assert len(aligned.total) >= 2
    for second, value in aligned.total:
        assert value == sum(series.get(second, 0.0) for series in by_host.values())
        assert abs(second - time.time()) < 120  # wall-clock seconds, not job-relative


@mark_netns
def test_scaling_s1_s2_s3(hosts: TestHosts, offsets: dict[str, float], tmp_path: Path) -> None:
    jobfile = _point(tmp_path, runtime=2)
    _lay_out_targets(hosts)
    spreads = {}
    for count in (1, 2, 3):
        chosen = hosts.hosts[:count]
        outcome = run_on_hosts(
            jobfile, chosen, tmp_path / f"S{count}", timeout_s=30, offsets_ms=offsets
        )
        names = [h.name for h in chosen]
        assert not outcome.partial, outcome.failures
        assert outcome.returncode == 0 and outcome.watchdog == []
        assert sorted(outcome.start_ms_by_host) == sorted(names)
        for name in names:  # logs moved from "<log>.<address>" into folder/<host>/
            assert [p.name for p in outcome.logs_by_host[name]] == ["point_iops.1.log"]
            assert (tmp_path / f"S{count}" / name / "point_iops.1.log").exists()
        assert not list((tmp_path / f"S{count}").glob("*.log.*"))
        _assert_totals(outcome, names)
        spreads[f"S{count}"] = outcome.start_spread_ms
    print(f"start spread between hosts (ms, from interval-log stamps): {spreads}")
    assert spreads["S1"] is None
    assert spreads["S2"] is not None and spreads["S3"] is not None
    assert 0 <= spreads["S2"] < 1000 and 0 <= spreads["S3"] < 1000


# --------------------------------------------------------------------------- failures


@mark_netns
def test_killed_host_gives_partial_outcome_with_the_others_kept(
    hosts: TestHosts, offsets: dict[str, float], tmp_path: Path
) -> None:
    jobfile = _point(tmp_path, runtime=4)
    folder = tmp_path / "run"
    breaker = _break_host_mid_point(hosts, 1, "kill")
    began = time.monotonic()
    try:
        outcome = run_on_hosts(
            jobfile, hosts.hosts, folder, timeout_s=20, offsets_ms=offsets, grace_s=2
        )
    finally:
        breaker.join(timeout=20)
        _restart(hosts, 1)
    assert time.monotonic() - began < 20
    assert outcome.partial and outcome.failed_hosts == ["h1"]
    assert "disconnected" in outcome.failures["h1"]
    assert outcome.watchdog == []  # fio saw the reset itself
    assert sorted(outcome.jobs_by_host) == ["h0", "h2"]
    per_host, total = combine_hosts(outcome)
    assert total.total.ios == per_host["h0"].total.ios + per_host["h2"].total.ios > 0
    assert outcome.logs_by_host["h1"] == [] and outcome.logs_by_host["h0"]
    assert _fio_processes_in(folder) == []


@mark_netns
def test_host_whose_link_is_cut_does_not_hang_the_point(
    hosts: TestHosts, offsets: dict[str, float], tmp_path: Path
) -> None:
    jobfile = _point(tmp_path, runtime=3)
    folder = tmp_path / "run"
    breaker = _break_host_mid_point(hosts, 2, "cut")
    began = time.monotonic()
    try:
        outcome = run_on_hosts(
            jobfile, hosts.hosts, folder, timeout_s=8, offsets_ms=offsets, grace_s=2
        )
    finally:
        breaker.join(timeout=20)
        _restart(hosts, 2)
    elapsed = time.monotonic() - began
    print(f"link cut: outcome after {elapsed:.1f} s; watchdog: {outcome.watchdog}")
    assert elapsed < 8 + 2 * 2 + 5
    assert outcome.partial and outcome.failed_hosts == ["h2"]
    assert len(outcome.watchdog) == 2 and "closed: h2" in outcome.watchdog[1]
    assert sorted(outcome.jobs_by_host) == ["h0", "h1"]
    assert all(outcome.logs_by_host[n] for n in ("h0", "h1"))
    assert _fio_processes_in(folder) == []


# --------------------------------------------------------------------------- SSH


@mark_netns
@pytest.mark.skipif(
    not Path(SSHD).exists(), reason="openssh-server is not installed (no sshd to test with)"
)
def test_fio_server_started_and_stopped_over_ssh(
    hosts: TestHosts, version: str, tmp_path: Path
) -> None:
    _ssh_lifecycle(hosts, version, tmp_path)


def _ssh_lifecycle(hosts: TestHosts, version: str, tmp_path: Path) -> None:
    ssh = hosts.start_sshd(2, tmp_path)
    try:
        spec = HostSpec("viassh", hosts.hosts[2].address, port=8766, ssh=ssh)
        start_server_over_ssh(spec, timeout_s=20)
        pid = int((tmp_path / "fio-server.pid").read_text())
        assert pid in hosts.pids(2)  # the daemon runs inside the host's namespace
        check = check_host(spec, version, [str(tmp_path / "sshd_config"), "/nonexistent/x"])
        assert check.reachable and check.version_matches and check.clock_offset_ms is not None
        assert check.problems == ["viassh: target /nonexistent/x does not exist on the host"]
        with pytest.raises(HostError, match="already listens"):
            start_server_over_ssh(spec, timeout_s=20)
        stop_server_over_ssh(spec, timeout_s=20)
        assert tcp_problem(spec.address, spec.port, 1.0) is not None
        assert not (tmp_path / "fio-server.pid").exists()
    finally:
        hosts.stop_sshd(2)


# --------------------------------------------------------------------------- cleanup


@mark_netns
def test_cleanup_stale_removes_what_a_dead_run_left() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    namespace, link = f"abh-{dead.pid}-0", f"{LINK_PREFIX}{dead.pid}-0"
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    try:
        subprocess.run(["ip", "link", "add", link, "type", "veth", "peer", "name", "eth0",
                        "netns", namespace], check=True)  # fmt: skip
        removed = cleanup_stale()
        assert namespace in removed
        assert namespace not in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                               text=True).stdout  # fmt: skip
        assert subprocess.run(["ip", "link", "show", link], capture_output=True).returncode
    finally:
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True)


@mark_netns
def test_everything_removed_at_the_end(hosts: TestHosts) -> None:
    hosts.close()
    assert our_namespaces() == []
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    assert f"{LINK_PREFIX}{os.getpid()}-" not in links
    assert hosts.namespaces == []


# --------------------------------------------------------------------------- pure


def test_ssh_command_lines_bind_the_server_to_the_host_address() -> None:
    ssh = SshSpec(user="bench", identity_file=Path("/k/id"), options=("ConnectTimeout=3",))
    spec = HostSpec("a1", "192.0.2.10", port=8765, ssh=ssh)
    start = start_server_command(spec)
    assert start[:3] == ["ssh", "-o", "BatchMode=yes"]
    assert start[-2] == "bench@192.0.2.10" and "-i" in start and "/k/id" in start
    assert shlex.split(start[-1]) == [
        "fio",
        "--server=ip:192.0.2.10,8765",
        "--daemonize=arraybench-fio-8765.pid",
    ]
    stop = stop_server_command(spec)
    assert stop[-1] == 'kill "$(cat arraybench-fio-8765.pid)" && rm -f arraybench-fio-8765.pid'
    six = start_server_command(HostSpec("a2", "2001:db8::5", ssh=SshSpec(host="mgmt-a2")))
    assert six[-2] == "mgmt-a2" and "--server=ip6:2001:db8::5,8765" in six[-1]


@pytest.mark.parametrize("address", ["0.0.0.0", "::", ""])
def test_wildcard_addresses_are_refused(address: str) -> None:
    # every other spelling: tests/hostile/test_address.py
    with pytest.raises(AddressError, match="every interface" if address else "empty"):
        HostSpec("h", address)


def test_client_command_puts_output_options_before_the_hosts() -> None:
    hosts = [HostSpec("a", "10.0.0.2", 8765), HostSpec("b", "10.0.0.6", 8766)]
    files = {"a": Path("/r/point-a.fio"), "b": Path("/r/point-b.fio")}
    command = client_command("fio", files, hosts)
    assert command == [
        "fio", "--output-format=json+", "--output=fio.json",
        "--client=10.0.0.2,8765", "/r/point-a.fio", "--client=10.0.0.6,8766", "/r/point-b.fio",
    ]  # fmt: skip


def test_hosts_sharing_an_address_are_refused(tmp_path: Path) -> None:
    hosts = [HostSpec("a", "127.0.0.1", 8765), HostSpec("b", "127.0.0.1", 8766)]
    with pytest.raises(HostError, match="share the address"):
        run_on_hosts(tmp_path / "p.fio", hosts, tmp_path, timeout_s=1)


def test_clock_offset_bounds_from_synthetic_pings() -> None:
    # Server clock 5.3 ms ahead; 100 us round trips; pings at varied sub-ms phases.
    theta, stamps, lats, recv, echo = 5.3, [], [], [], []
    for i in range(40):
        sent = 1_000_000.0 + i * 0.373  # controller ms when the ping left the server
        recv_ms, echo_ms, back = sent + 0.05, sent + 0.051, sent + 0.1
        server_done = back + theta  # completion on the server clock
        stamps.append(int(server_done - 0.4))  # fio truncates, 0.4 ms lost in its epoch
        lats.append((back - sent) * 1e6)
        recv.append(int(recv_ms * 1e6))
        echo.append(int(echo_ms * 1e6))
    estimate = estimate_offset(stamps, lats, recv, echo)
    assert estimate.consistent and estimate.samples == 40
    low = estimate.offset_ms - estimate.uncertainty_ms
    high = estimate.offset_ms + estimate.uncertainty_ms
    assert low <= theta <= high
    assert estimate.uncertainty_ms < 1.2  # about half of fio's 2-ms stamp window
