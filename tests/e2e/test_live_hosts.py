"""A point on 2 network-namespace hosts (real sshd, key login) served live: fio's client relays
no per-second reports, so `/live.json` shows the hosts' target disks as the kernel counts them
(run/hosts_live.py, `source: kernel`), near the store's per-second total (fio's own logs), and
no ssh loop is left running afterwards, here or on a host."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.store.db import Store
from tests.conftest import needs_fio
from tests.loopdev import attached, sparse_file
from tests.netns import (
    TestHosts,
    needs_netns,
    needs_sshd,
    running_hosts,
    ssh_hosts_yaml,
    wait_until,
)

# paced: each test judges how soon ssh and the hosts' loops end after the run (within a
# 1 s sleep); in the parallel phase two fresh-clone runs failed it (ssh outlived the run;
# a fio server started over ssh did not answer in 30 s), beside paced tests it passes
pytestmark = [needs_fio, pytest.mark.slow, pytest.mark.paced, *needs_netns, needs_sshd]
FIO_PORT = 8866  # + host number: the fio servers the campaign starts over SSH
MARKER = b"arraybench-live"  # $0 of the remote loop: in the local ssh's argv and the host's sh
RATE = 2000  # IOPS per host: 4,000 in total, steady, so both counts agree closely; enough
# requests a second that their kernel time (10 ms or more) gives a live await


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestHosts]:
    with running_hosts(2, tmp_path_factory.mktemp("live-hosts"), port=8861, ssh=True) as test:
        yield test


def _plan(tmp_path: Path, hosts: TestHosts, devices: dict[str, str]) -> Path:
    declared = ssh_hosts_yaml(hosts, fio_port=FIO_PORT, journals=tmp_path / "journals",
                              target=lambda h: devices[h.name])  # fmt: skip
    path = tmp_path / "plan.yaml"
    path.write_text(
        "name: live-hosts\n"
        f"hosts:\n{declared}"
        f"host_sets: [[{', '.join(h.name for h in hosts.hosts)}]]\n"
        "timing: {ramp: 0s, duration: 7s}\n"
        "start_lead: 1s\n"
        "load: {workers: [1], iodepth: [1]}\n"
        "workloads:\n"
        f"  - {{name: rr, pattern: random, bs: 4k, read: 100, rate_iops: {RATE}}}\n"
    )
    return path


def _processes(marker: bytes, devices: tuple[str, ...]) -> list[int]:
    """Every process on this machine (any namespace) whose command line holds `marker` and
    one of this test's `devices` (the loop's argument): another worker's many-host run has
    loops of its own (every many-host point has them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                line = (entry / "cmdline").read_bytes()
                if marker in line and any(d.encode() + b"\0" in line for d in devices):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _watch(
    proc: subprocess.Popen[str], url: str, lat: dict[int, float]
) -> tuple[dict[int, float], set[str]]:
    """The live total per second while the run goes on, and the sources it was said to be;
    `lat` gets the total's read latency (µs) by its second, where one is shown."""
    live: dict[int, float] = {}
    sources: set[str] = set()
    while proc.poll() is None:
        try:
            with urllib.request.urlopen(url + "live.json", timeout=5) as answer:
                snap = json.loads(answer.read())
        except (OSError, ValueError):
            break  # the run ended between two polls
        if snap["point"] is not None and snap["series"]:
            sources.add(snap["point"]["source"])
            total = snap["total_now"]
            if total is not None and total["read"]["lat_mean_us"] is not None:
                lat[int(total["t"])] = total["read"]["lat_mean_us"]
            live.update({int(row[0]): float(row[1]) for row in snap["series"]})
            try:  # /metrics says it too, on the point's info series
                with urllib.request.urlopen(url + "metrics", timeout=5) as answer:
                    info = [x for x in answer.read().decode().splitlines()
                            if x.startswith("arraybench_point_info{")]  # fmt: skip
            except OSError:
                break
            sources |= {f"metrics:{m}" for x in info for m in re.findall(r'source="(\w+)"', x)}
        time.sleep(0.4)
    return live, sources


def test_a_many_host_point_shows_the_kernel_seconds_live(tmp_path: Path, hosts: TestHosts):
    names = [h.name for h in hosts.hosts]
    with (
        attached(sparse_file(tmp_path / "d0.img", 16 << 20)) as d0,
        attached(sparse_file(tmp_path / "d1.img", 16 << 20)) as d1,
    ):
        results = tmp_path / "res"
        plan = _plan(tmp_path, hosts, dict(zip(names, [d0, d1], strict=True)))
        proc = subprocess.Popen(
            [sys.executable, "-m", "arraybench", "run", str(plan), "--results", str(results),
             "--serve", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env=dict(os.environ, COLUMNS="160"))  # fmt: skip
        assert proc.stdout is not None
        first = proc.stdout.readline()
        found = re.search(r"live page (http://127\.0\.0\.1:\d+/)", first)
        assert found, first
        lat: dict[int, float] = {}
        live, sources = _watch(proc, found.group(1), lat)
        out = proc.stdout.read()
        assert proc.wait(timeout=120) == 0, out
    # the local ssh processes are ended and waited for by the sidecar's stop; the host's loop
    # ends on its next write to the closed connection (within its 1 s sleep)
    ours = (d0, d1)
    assert not [p for p in _processes(MARKER, ours) if _name(p) == "ssh"], "ssh outlived the run"
    assert wait_until(lambda: not _processes(MARKER, ours), 5), _processes(MARKER, ours)
    store = Store(results, create=False)
    run = store.list_runs()[0][0]
    [point] = store.points(run.id)
    stored = {s.t: (s.read_iops or 0) + (s.write_iops or 0) for s in store.samples(point.id)}
    assert sources == {"kernel", "metrics:kernel"}
    # Inside the point (its first and last seconds are partial on both sides): each live
    # second within 20 % of fio's stored total one second either side. Not closer, because the
    # kernel's second is a pass of the host's loop (its own clock, filed by when it arrived
    # here) while fio's is its log's window, and the kernel counts requests completed by the
    # disk, fio I/Os completed to it; at a steady 4,000 IOPS of 4k direct random reads (no
    # merging, no cache) the two counts are the same I/Os and differ only in their edges.
    inside = {t: v for t, v in live.items() if min(stored) < t < max(stored)}
    assert len(inside) >= 3, (live, stored)
    wrong = {t: (v, [stored.get(s) for s in (t - 1, t, t + 1)]) for t, v in inside.items()
             if not any(0.8 * stored[s] <= v <= 1.2 * stored[s]
                        for s in (t - 1, t, t + 1) if s in stored)}  # fmt: skip
    assert not wrong, f"kernel's live seconds vs fio's stored: {wrong}"
    assert abs(statistics.median(inside.values()) - 2 * RATE) <= 0.1 * 2 * RATE
    # the block layer's mean per request (await), where a second's requests took 10 ms or
    # more in all (2,000 reads a second of 12 µs or more: 24 ms): the kernel's part of
    # fio's submission-to-completion latency of the same reads: above 0, and not above fio's
    # own mean of that second or one beside it (the two seconds' edges differ, as above)
    fio_lat = {s.t: s.read_lat_us for s in store.samples(point.id) if s.read_lat_us}
    lat_inside = {t: v for t, v in lat.items() if min(stored) < t < max(stored)}  # as above
    high = {t: (v, [fio_lat.get(s) for s in (t - 1, t, t + 1)]) for t, v in lat_inside.items()
            if not 0 < v <= 1.2 * max(fio_lat.get(s, 0.0) for s in (t - 1, t, t + 1))
            and any(s in fio_lat for s in (t - 1, t, t + 1))}  # fmt: skip
    assert lat_inside and not high, f"kernel's await above fio's latency: {high}"  # 12-16 µs


def test_a_controller_killed_mid_point_leaves_no_ssh_loop(tmp_path: Path, hosts: TestHosts):
    """SIGKILL: no `stop` runs; ssh's next write to the controller's closed pipe ends it, and
    the host's loop ends on its next write to the closed session."""
    names = [h.name for h in hosts.hosts]
    with (
        attached(sparse_file(tmp_path / "d0.img", 16 << 20)) as d0,
        attached(sparse_file(tmp_path / "d1.img", 16 << 20)) as d1,
    ):
        plan = _plan(tmp_path, hosts, dict(zip(names, [d0, d1], strict=True)))
        argv = [sys.executable, "-m", "arraybench", "run", str(plan), "--results", str(tmp_path)]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert wait_until(lambda: len(_processes(MARKER, (d0, d1))) >= 4, 60)  # 2 ssh, 2 loops
        finally:
            proc.kill()
            proc.wait()
        assert wait_until(lambda: not _processes(MARKER, (d0, d1)), 10), _processes(
            MARKER, (d0, d1)
        )
