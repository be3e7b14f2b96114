"""Events under real load: cgroup throttling of a fio job on a loop device, failing and
timed-out commands, reverts on SIGINT / SIGTERM, netem on a veth pair, path snapshots.

Root only where the kernel is touched (loop devices, cgroups, network namespaces); each such
test says why it skips. The scheduler tests at the end use stand-in injectors and run anywhere.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from arraybench.analysis.events import EventImpact, event_impact, windows_from_records
from arraybench.engines.fio.jobfile import LOG_PREFIX
from arraybench.engines.fio.samples import point_samples
from arraybench.events import cgroup as cgroups
from arraybench.events.errors import InjectorError
from arraybench.events.event_kinds.netem import NetemInjector
from arraybench.events.event_kinds.scsi_offline import ScsiOfflineInjector
from arraybench.events.event_kinds.throttle import CGROUP_PREFIX, ThrottleInjector
from arraybench.events.injectors import Injector
from arraybench.events.paths import (
    multipath_info,
    parse_multipath_status,
    parse_multipath_table,
    snapshot_paths,
)
from arraybench.events.records import EventRecord
from arraybench.events.timeline import EventTimeline
from arraybench.plan.event_kinds.netem import NetemAction
from arraybench.plan.event_kinds.scsi_offline import ScsiOfflineAction
from arraybench.plan.event_kinds.throttle import ThrottleAction
from arraybench.plan.events import Event
from arraybench.store.db import Sample
from arraybench.system.procs import PROC, numeric_dirs, process_tree_pids
from tests.loopdev import attached, sparse_file
from tests.procs import process_state

IS_ROOT = os.geteuid() == 0
root_only = pytest.mark.skipif(not IS_ROOT, reason="loop devices, cgroups and netns need root")
needs_losetup = pytest.mark.skipif(
    shutil.which("losetup") is None, reason="losetup (util-linux) missing"
)
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")

LOOP_SIZE = 256 << 20
# 6 s after the revert: fio's catch-up burst (the I/Os the throttle held back, 4-5 x the rate
# for a second) and the 3 s a recovery holds fit before the end
FIO_RUNTIME_S = 14
THROTTLE_AT_S = 4.0
THROTTLE_FOR_S = 4.0
THROTTLE_IOPS = 200
# a rate-limited load: a steady baseline even when other work shares this machine's CPUs
# (unlimited, the loop device swings between 30k and 130k IOPS from second to second here)
LOAD_IOPS = 20_000


def _group_pids(pgid: int) -> list[int]:
    """Every process of process group `pgid` (fio's job processes leave it: setsid)."""
    found = []
    for pid in numeric_dirs(PROC):
        with contextlib.suppress(OSError):  # gone meanwhile
            if os.getpgid(pid) == pgid:
                found.append(pid)
    return sorted(found)


def _events(*items: dict) -> list[Event]:
    return [Event.model_validate(item) for item in items]


def _io_cgroup() -> cgroups.IoCgroup:
    try:
        return cgroups.detect_io_cgroup()
    except InjectorError as exc:
        pytest.skip(f"no cgroup I/O controller: {exc.one_line()}")


def _our_cgroups(cg: cgroups.IoCgroup) -> list[Path]:
    return sorted(cg.root.glob(f"{CGROUP_PREFIX}-{os.getpid()}-*"))


@pytest.fixture(scope="module")
def loopdev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A loop device over a 256 MiB sparse file."""
    backing = sparse_file(tmp_path_factory.mktemp("events") / "backing.img", LOOP_SIZE)
    with attached(backing) as dev:
        yield dev


# --------------------------------------------------------------------------- fio under events


JOBFILE = """\
[global]
ioengine=libaio
direct=1
bs=4k
rw=randread
iodepth=16
rate_iops={rate}
time_based=1
runtime={runtime}
norandommap=1
randrepeat=0
log_avg_msec=1000
log_unix_epoch=1
per_job_logs=1
write_iops_log={prefix}
write_bw_log={prefix}
write_lat_log={prefix}

[load]
filename={device}
"""


@dataclass
class LoadedRun:
    device: str
    cg: cgroups.IoCgroup
    returncode: int
    t0: float
    records: list[EventRecord]
    samples: list[Sample]
    impacts: list[EventImpact]
    origin: str | None  # fio's cgroup before the throttle
    group: list[int] = field(default_factory=list)  # fio's process group at apply time
    during: dict[int, str | None] = field(default_factory=dict)  # pid -> cgroup while applied
    after: dict[int, str | None] = field(default_factory=dict)  # pid -> cgroup after revert
    folder_after_revert: bool | None = None  # the throttle's cgroup still existed


@pytest.fixture(scope="module")
def loaded_run(loopdev: str, tmp_path_factory: pytest.TempPathFactory) -> LoadedRun:
    """fio 4k randread at 20k IOPS on the loop device for 12 s, with a throttle at 4 s for 4 s
    at 200 IOPS, a `false` at 1 s and a `sleep 30` with a 1 s timeout at 2 s."""
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    cg = _io_cgroup()
    folder = tmp_path_factory.mktemp("fio-events")
    (folder / "point.fio").write_text(
        JOBFILE.format(runtime=FIO_RUNTIME_S, prefix=LOG_PREFIX, device=loopdev, rate=LOAD_IOPS)
    )
    events = _events(
        {
            "at": f"{THROTTLE_AT_S}s",
            "duration": f"{THROTTLE_FOR_S}s",
            "label": "slow path",
            "throttle": {"device": loopdev, "read_iops": THROTTLE_IOPS},
        },
        {"at": "1s", "run": ["false"]},
        {"at": "2s", "run": {"argv": ["sleep", "30"], "timeout": "1s"}},
    )
    proc = subprocess.Popen(
        ["fio", "point.fio", "--output-format=json", "--output=fio.json", "--eta=never"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    t0 = time.time()
    run = LoadedRun(loopdev, cg, -1, t0, [], [], [], cgroups.cgroup_of(proc.pid, cg))

    def load_pids() -> list[int]:
        return process_tree_pids(proc.pid)

    def observe(record: EventRecord) -> None:
        if record.kind != "throttle":
            return
        states = {pid: cgroups.cgroup_of(pid, cg) for pid in load_pids()}
        if record.action == "apply":
            run.during = states
            run.group = _group_pids(proc.pid)
        elif record.action == "revert":
            run.after = states
            run.folder_after_revert = bool(_our_cgroups(cg))

    timeline = EventTimeline(events, pids=load_pids, on_record=observe)
    try:
        with timeline.running(t0):
            proc.wait(timeout=FIO_RUNTIME_S + 60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.stderr is not None
    stderr = proc.stderr.read().decode(errors="replace")
    run.returncode = proc.returncode
    assert proc.returncode == 0, f"fio failed: {stderr}"
    run.records = timeline.records()
    run.samples = point_samples(folder)
    windows = [w for w in windows_from_records(run.records) if w.kind == "throttle"]
    run.impacts = event_impact(run.samples, windows, baseline_window_s=10, recover_pct=5)
    return run


@root_only
@needs_fio
@pytest.mark.serial  # rate, dip, recovery of a full-speed load: beside paced tests one failed
def test_throttle_dips_and_recovers(loaded_run: LoadedRun) -> None:
    [impact] = loaded_run.impacts
    base = impact.baseline
    summary = (
        f"baseline {base:.0f} IOPS over {impact.baseline_seconds}s, low {impact.low:.0f} "
        f"IOPS, dip {impact.dip_pct:.1f}%, recovery {impact.recovery_after_revert_s} s after "
        f"revert, {impact.recovery_after_start_s} s after start, max latency "
        f"{impact.max_latency_us:.0f} us"
    )
    series = " ".join(
        f"{s.t - loaded_run.t0:+.1f}s:{(s.read_iops or 0) / 1000:.1f}k" for s in loaded_run.samples
    )
    summary += f"; series {series}"
    print(summary)
    assert base is not None and base == pytest.approx(LOAD_IOPS, rel=0.05), summary
    assert impact.dip_pct is not None and impact.dip_pct > 80, summary
    assert impact.low is not None and impact.low < 1.5 * THROTTLE_IOPS, summary
    # a rate-limited fio catches up on the I/Os it owes after the revert: far above the
    # rate (89k IOPS for a second at a rate of 20k, seen here); that burst is not back yet
    # (issue 35): the recovery comes after it, and the burst is the event's overshoot
    burst = impact.overshoot_seconds
    assert burst is not None and burst >= 1, summary
    assert impact.overshoot_pct is not None and impact.overshoot_pct > 50, summary
    assert impact.recovery_after_revert_s is not None, summary
    assert impact.recovery_after_revert_s <= 2.0 + burst, summary
    assert impact.recovery_after_start_s is not None
    # 1-second samples stamped on rounded seconds: +-1 s around the 4 s the throttle lasted,
    # then the burst's seconds
    low, high = THROTTLE_FOR_S - 1.5, THROTTLE_FOR_S + 2 + burst
    assert low <= impact.recovery_after_start_s <= high, summary
    # throttled I/O waits in the queue: latency during the event is far above the baseline's
    assert impact.max_latency_us is not None and impact.max_latency_us > 10_000, summary


@root_only
@needs_fio
@pytest.mark.serial  # rate, dip, recovery of a full-speed load: beside paced tests one failed
def test_throttle_reverted_cleanly(loaded_run: LoadedRun) -> None:
    records = [r for r in loaded_run.records if r.kind == "throttle"]
    assert [(r.action, r.outcome) for r in records] == [("apply", "ok"), ("revert", "ok")]
    apply, revert = records
    assert revert.started_unix - apply.ended_unix == pytest.approx(THROTTLE_FOR_S, abs=0.3)
    assert apply.started_unix - loaded_run.t0 == pytest.approx(THROTTLE_AT_S, abs=0.3)
    assert revert.planned_at_s == pytest.approx(THROTTLE_AT_S + THROTTLE_FOR_S)
    # while applied, every fio process sat in the event's cgroup; after it, back where it was
    # fio 3.x calls setsid() in each job process: the jobs are not in fio's process group,
    # only in its process tree, which is what the throttle moved
    assert len(loaded_run.during) >= 2, "fio and its job process"
    assert set(loaded_run.group) <= set(loaded_run.during)
    assert all(
        path and path.startswith(f"/{CGROUP_PREFIX}-") for path in loaded_run.during.values()
    )
    assert loaded_run.after, "no fio process seen at revert time"
    assert set(loaded_run.after.values()) == {loaded_run.origin}
    assert loaded_run.folder_after_revert is False
    assert _our_cgroups(loaded_run.cg) == []
    # and the limit does not linger on the device: the cgroup holding the limits is gone


@root_only
@needs_fio
@pytest.mark.serial  # rate, dip, recovery of a full-speed load: beside paced tests one failed
def test_failed_and_timed_out_commands_are_recorded_while_the_load_goes_on(
    loaded_run: LoadedRun,
) -> None:
    runs = {r.label: r for r in loaded_run.records if r.kind == "run"}
    failed, slow = runs["run false"], runs["run sleep"]
    assert (failed.action, failed.outcome, failed.exit_code) == ("run", "failed", 1)
    assert "exited with code 1" in failed.detail
    assert slow.outcome == "timeout"
    assert slow.ended_unix - slow.started_unix == pytest.approx(1.0, abs=0.5)
    assert "timeout" in slow.detail
    # nothing else recorded for them (no revert command), and fio ran on to its end
    assert len([r for r in loaded_run.records if r.kind == "run"]) == 2
    assert loaded_run.returncode == 0
    seconds = {s.t: (s.read_iops or 0.0) for s in loaded_run.samples}
    t0 = loaded_run.t0
    while_commands = [v for t, v in seconds.items() if t0 + 1 < t <= t0 + 3.5]
    assert while_commands and min(while_commands) > 20 * THROTTLE_IOPS
    assert max(seconds) >= t0 + FIO_RUNTIME_S - 1.5


# --------------------------------------------------------------------------- interrupted runs

SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    from arraybench.events.timeline import EventTimeline
    from arraybench.plan.events import Event

    events = [Event.model_validate(e) for e in json.loads(sys.argv[1])]
    load = [int(p) for p in sys.argv[2].split(",") if p]
    timeline = EventTimeline(events, pids=lambda: load)
    try:
        with timeline.running():
            print("running", flush=True)
            while True:
                time.sleep(0.05)
    finally:  # what the test says when it fails
        for r in timeline.records():
            print(r.action, r.outcome, r.detail, flush=True)
    """
)


@contextlib.contextmanager
def _interrupted_at_end(script: subprocess.Popen[str], sig: signal.Signals) -> Iterator[None]:
    """Run the block, then send `sig` to the script; it must die of that very signal."""
    try:
        yield
        script.send_signal(sig)
        script.wait(timeout=10)
    finally:
        if script.poll() is None:
            script.kill()
    assert script.returncode == -sig, script.stderr.read() if script.stderr else ""


def _start_script(events: list[dict], load: list[int]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, json.dumps(events), ",".join(map(str, load))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(check: object, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if callable(check) and check():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "60"])
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGCONT)
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_continues_a_stopped_process(
    sig: signal.Signals, sleeper: subprocess.Popen[bytes]
) -> None:
    script = _start_script([{"at": 0, "signal": {"pid": sleeper.pid}}], [])
    with _interrupted_at_end(script, sig):
        assert _wait_for(lambda: process_state(sleeper.pid) == "T"), "never stopped"
    assert process_state(sleeper.pid) in ("S", "R"), "the process was left stopped"


@root_only
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_removes_the_throttle_cgroup(
    sig: signal.Signals, loopdev: str, sleeper: subprocess.Popen[bytes]
) -> None:
    cg = _io_cgroup()
    origin = cgroups.cgroup_of(sleeper.pid, cg)
    event = {"at": 0, "throttle": {"device": loopdev, "read_iops": 100, "write_bps": "1m"}}
    script = _start_script([event], [sleeper.pid])
    with _interrupted_at_end(script, sig):
        assert _wait_for(lambda: cgroups.cgroup_of(sleeper.pid, cg) != origin), "never moved"
        moved_to = cgroups.cgroup_of(sleeper.pid, cg)
        assert moved_to is not None and f"{CGROUP_PREFIX}-{script.pid}-" in moved_to
        assert (cg.root / moved_to.lstrip("/")).is_dir()
    said = script.stdout.read() if script.stdout else ""  # the timeline's records
    assert cgroups.cgroup_of(sleeper.pid, cg) == origin, said
    assert not (cg.root / moved_to.lstrip("/")).exists(), said


@root_only
def test_throttle_without_load_processes_fails_cleanly(loopdev: str) -> None:
    cg = _io_cgroup()
    injector = ThrottleInjector(ThrottleAction(device=loopdev, read_iops=10), lambda: [])
    with pytest.raises(InjectorError, match="no load process"):
        injector.apply()
    assert not injector.applied
    assert injector.revert() == "nothing to revert"
    assert _our_cgroups(cg) == []


@root_only
def test_throttle_revert_is_idempotent(loopdev: str, sleeper: subprocess.Popen[bytes]) -> None:
    cg = _io_cgroup()
    injector = ThrottleInjector(
        ThrottleAction(device=loopdev, write_iops=50), lambda: [sleeper.pid]
    )
    detail = injector.apply()
    assert os.path.basename(loopdev) in detail
    folder = injector.folder
    assert folder is not None and folder.is_dir()
    if cg.version == 1:
        text = (folder / "blkio.throttle.write_iops_device").read_text()
        assert text.split() == [
            Path(f"/sys/class/block/{Path(loopdev).name}/dev").read_text().strip(),
            "50",
        ]
    assert "moved back" in injector.revert()
    assert not folder.exists()
    assert injector.revert() == "nothing to revert"


@root_only
def test_throttle_removes_empty_cgroups_left_by_killed_runs(
    loopdev: str, sleeper: subprocess.Popen[bytes]
) -> None:
    """A run killed by SIGKILL cannot revert: its cgroup stays. The next throttle removes
    it when its creator is gone and it is empty, and leaves a live run's alone."""
    cg = _io_cgroup()
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = cg.root / f"{CGROUP_PREFIX}-{dead.pid}-1"
    live = cg.root / f"{CGROUP_PREFIX}-{os.getpid()}-999"
    stale.mkdir()
    live.mkdir()
    try:
        injector = ThrottleInjector(
            ThrottleAction(device=loopdev, write_iops=50), lambda: [sleeper.pid]
        )
        detail = injector.apply()
        assert "removed 1 cgroup(s) left by killed runs" in detail
        assert not stale.exists() and live.is_dir()
        injector.revert()
    finally:
        for folder in (stale, live):
            if folder.exists():
                folder.rmdir()


# --------------------------------------------------------------------------- netem

NETEM_DELAY_S = 0.1


@dataclass
class VethPair:
    netns: str
    inside: str  # interface in the namespace
    address: str  # the namespace side's address


@pytest.fixture
def veth() -> Iterator[VethPair]:
    if not IS_ROOT:
        pytest.skip("network namespaces need root")
    if shutil.which("ip") is None:
        pytest.skip("ip (iproute2) missing")
    tag = f"{os.getpid() % 100000}"
    ns, outside, inside = f"abev-{tag}", f"abev{tag}o", f"abev{tag}i"

    def ip(*args: str) -> None:
        done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            pytest.skip(f"ip {' '.join(args)}: {done.stderr.strip()}")

    try:
        ip("netns", "add", ns)
        ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        ip("link", "set", inside, "netns", ns)
        ip("addr", "add", "10.203.77.1/30", "dev", outside)
        ip("link", "set", outside, "up")
        ip("-n", ns, "addr", "add", "10.203.77.2/30", "dev", inside)
        ip("-n", ns, "link", "set", inside, "up")
        ip("-n", ns, "link", "set", "lo", "up")
        yield VethPair(ns, inside, "10.203.77.2")
    finally:
        subprocess.run(["ip", "link", "del", outside], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


def _netem_supported(pair: VethPair) -> str | None:
    """None when the kernel takes a netem qdisc, else tc's message."""
    probe = NetemInjector(NetemAction(interface=pair.inside, delay=0.001, netns=pair.netns))
    try:
        probe.apply()
    except InjectorError as exc:
        return exc.one_line()
    probe.revert()
    return None


ECHO = textwrap.dedent(
    """
    import socket, sys
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((sys.argv[1], 7777))
    print("ready", flush=True)
    while True:
        data, peer = s.recvfrom(64)
        s.sendto(data, peer)
    """
)


def _rtt_s(address: str, count: int = 5) -> float:
    """The median UDP echo round trip (this machine has no ping)."""
    times = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(2.0)
        for k in range(count):
            start = time.perf_counter()
            s.sendto(str(k).encode(), (address, 7777))
            while s.recvfrom(64)[0] != str(k).encode():
                pass
            times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


@root_only
def test_netem_delay_shows_in_round_trips(veth: VethPair) -> None:
    problem = _netem_supported(veth)
    if problem is not None:
        pytest.skip(f"the kernel refuses a netem qdisc: {problem}")
    echo = subprocess.Popen(
        ["ip", "netns", "exec", veth.netns, sys.executable, "-c", ECHO, veth.address],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert echo.stdout is not None and echo.stdout.readline().strip() == "ready"
        before = _rtt_s(veth.address)
        event = {
            "at": 0,
            "netem": {"interface": veth.inside, "netns": veth.netns, "delay": "100ms"},
        }
        timeline = EventTimeline(_events(event), pids=list)
        with timeline.running():
            assert _wait_for(lambda: bool(timeline.records()))
            during = _rtt_s(veth.address)
        after = _rtt_s(veth.address)
    finally:
        echo.kill()
        echo.wait()
    assert during - before >= NETEM_DELAY_S * 0.9, (before, during)
    assert after < before + NETEM_DELAY_S / 2, (before, after)
    qdisc = subprocess.run(
        ["ip", "netns", "exec", veth.netns, "tc", "qdisc", "show", "dev", veth.inside],
        capture_output=True, text=True, timeout=30, check=False,
    ).stdout  # fmt: skip
    assert "netem" not in qdisc
    assert [(r.action, r.outcome) for r in timeline.records()] == [
        ("apply", "ok"),
        ("revert", "ok"),
    ]


def test_netem_command_line() -> None:
    action = NetemAction(interface="eth1", delay=0.005, jitter=0.001, loss=0.5, netns="lab")
    injector = NetemInjector(action)
    assert injector.netem_args() == [
        *("qdisc", "replace", "dev", "eth1", "root", "netem"),
        *("delay", "5000us", "1000us", "loss", "0.5%"),
    ]
    argv = injector._argv(*injector.netem_args())
    assert argv[1:4] == ["netns", "exec", "lab"] and argv[4].endswith("tc")
    assert injector.revert() == "nothing to revert"


@root_only
def test_netem_refused_by_the_kernel_is_recorded(veth: VethPair) -> None:
    if _netem_supported(veth) is None:
        pytest.skip("this kernel has netem: the refusal cannot be seen here")
    event = {"at": 0, "netem": {"interface": veth.inside, "netns": veth.netns, "loss": 10}}
    timeline = EventTimeline(_events(event), pids=list)
    with timeline.running():
        assert _wait_for(lambda: bool(timeline.records()))
    [record] = timeline.records()
    assert (record.action, record.outcome) == ("apply", "failed")
    assert "netem" in record.detail and "CONFIG_NET_SCH_NETEM" in record.detail


# --------------------------------------------------------------------------- paths


@root_only
def test_snapshot_of_a_loop_device_and_a_file(loopdev: str, tmp_path: Path) -> None:
    data = tmp_path / "data.bin"
    data.write_bytes(b"\0" * 4096)
    missing = str(tmp_path / "missing.bin")
    states = snapshot_paths([loopdev, str(data), missing])
    loop = states[loopdev]
    assert loop.visible and loop.size_bytes == LOOP_SIZE and not loop.is_file
    assert loop.device == Path(loopdev).name
    assert loop.multipath == [] and loop.scsi_states == {}
    assert loop.describe() == f"{loopdev}: {Path(loopdev).name}, visible, 256 MiB"
    plain = states[str(data)]
    assert plain.is_file and plain.visible and plain.size_bytes == 4096
    assert plain.describe().startswith(f"{data}: file on ")
    gone = states[missing]
    assert not gone.visible and gone.error and "NOT visible" in gone.describe()


# Multipath lines built from the format dm-mpath.c writes (this kernel has no device-mapper,
# so no real map could be created): 2 groups of 1 path with service-time (2 per-path info
# args), and 1 group of 4 paths with round-robin (0 info args), 2 of them failed.
STATUS_TWO_GROUPS = "0 20971520 multipath 2 0 0 0 2 1 A 0 1 2 8:32 A 0 0 1 E 0 1 2 8:48 A 0 0 1"
STATUS_FOUR_PATHS = (
    "mpathb: 0 2097152 multipath 2 1 0 0 1 1 A 0 4 0 8:16 A 0 8:32 F 3 65:0 A 0 65:16 F 1"
)
TABLE_FOUR_PATHS = (
    "0 2097152 multipath 1 queue_if_no_path 1 alua 1 1 round-robin 0 4 1 "
    "8:16 1000 8:32 1000 65:0 1000 65:16 1000"
)


def test_multipath_status_and_table_parsing() -> None:
    groups, next_group, paths = parse_multipath_status(STATUS_TWO_GROUPS)
    assert (groups, next_group) == (2, 1)
    assert [(p.device, p.group, p.group_state, p.active) for p in paths] == [
        ("8:32", 1, "A", True),
        ("8:48", 2, "E", True),
    ]
    info = multipath_info("mpathb", STATUS_FOUR_PATHS, TABLE_FOUR_PATHS, sys_root="/nonexistent")
    assert info is not None
    assert (info.total, info.active, info.failed) == (4, 2, 2)
    assert [p.fail_count for p in info.paths] == [0, 3, 0, 1]
    assert info.features == ["queue_if_no_path"] and info.selectors == ["round-robin"]
    assert info.describe() == "multipath mpathb: 2/4 paths active, 2 failed (8:32, 65:16)"
    assert parse_multipath_table(TABLE_FOUR_PATHS)[2] == ["8:16", "8:32", "65:0", "65:16"]
    assert multipath_info("x", "0 100 linear 8:0 0") is None
    with pytest.raises(ValueError, match="neither A nor F"):
        parse_multipath_status("0 1 multipath 0 0 1 1 A 0 1 0 8:16 X 0")
    with pytest.raises(ValueError, match="ends too early"):
        parse_multipath_status("0 1 multipath 0 0 1 1 A 0 2 0 8:16 A 0")


def test_scsi_offline_on_a_sysfs_tree(tmp_path: Path) -> None:
    """No SCSI disk here (no scsi_debug): the injector works on a copy of sysfs's layout."""
    state = tmp_path / "block" / "sdx" / "device" / "state"
    state.parent.mkdir(parents=True)
    state.write_text("running\n")
    injector = ScsiOfflineInjector(ScsiOfflineAction(device="/dev/sdx"), sys_root=str(tmp_path))
    assert injector.apply() == "sdx: running -> offline"
    assert state.read_text() == "offline"
    assert injector.revert() == "sdx: offline -> running"
    assert state.read_text() == "running"
    assert injector.revert() == "nothing to revert"
    missing = ScsiOfflineInjector(ScsiOfflineAction(device="sdz"), sys_root=str(tmp_path))
    with pytest.raises(InjectorError, match="no SCSI disk"):
        missing.apply()


# --------------------------------------------------------------------------- the scheduler


class Recorder(Injector):
    """A stand-in injector that notes when it is applied and reverted."""

    kind = "fake"

    def __init__(
        self, log: list[tuple[str, int, float]], index: int, fail: bool = False, slow: float = 0
    ):
        self.log, self.index, self.fail, self._on, self.slow = log, index, fail, False, slow

    @property
    def applied(self) -> bool:
        return self._on

    def apply(self) -> str:
        if self.fail:
            raise InjectorError("cannot")
        time.sleep(self.slow)  # an apply over SSH on a loaded host: 1.2 s seen
        self._on = True
        self.log.append(("apply", self.index, time.time()))
        return "on"

    def revert(self) -> str:
        if not self._on:
            return "nothing to revert"
        self._on = False
        self.log.append(("revert", self.index, time.time()))
        return "off"


def _fake_timeline(
    items: list[dict],
    fail: tuple[int, ...] = (),
    *,
    confirm: Callable[[str], None] | None = None,
    interactive: bool = False,
    steady: Callable[[], bool] | None = None,
    slow: float = 0,
) -> tuple[EventTimeline, list[tuple[str, int, float]]]:
    log: list[tuple[str, int, float]] = []
    events = _events(*items)
    counter = iter(range(len(events)))

    def factory(event: Event, pids: object) -> Injector | None:
        index = next(counter)
        return None if event.prompt else Recorder(log, index, index in fail, slow)

    timeline = EventTimeline(events, list, confirm, interactive, steady, injector_factory=factory)
    return timeline, log


def test_stop_reverts_on_an_exception_and_records_what_never_started() -> None:
    sig = {"signal": {"pid": 1}}
    timeline, log = _fake_timeline(
        [{"at": 0, **sig}, {"at": 0.1, "duration": "10s", **sig}, {"at": 60, **sig}]
    )
    with pytest.raises(RuntimeError), timeline.running():
        assert _wait_for(lambda: len(log) == 2, 5)
        raise RuntimeError("the load failed")
    assert [(a, i) for a, i, _ in log] == [("apply", 0), ("apply", 1), ("revert", 1), ("revert", 0)]
    records = timeline.records()
    assert [(r.index, r.action, r.outcome) for r in records] == [
        (0, "apply", "ok"),
        (1, "apply", "ok"),
        (1, "revert", "ok"),
        (0, "revert", "ok"),
        (2, "skipped", "timeout"),
    ]
    assert records[2].detail.startswith("at the point's end, before its duration")
    assert records[3].planned_at_s is None  # no duration: reverted at the point's end
    assert "before +60s" in records[4].detail


def test_failed_apply_is_recorded_and_not_reverted() -> None:
    timeline, log = _fake_timeline([{"at": 0, "signal": {"pid": 1}}], fail=(0,))
    with timeline.running():
        assert _wait_for(lambda: bool(timeline.records()), 5)
    [record] = timeline.records()
    assert (record.action, record.outcome, record.detail) == ("apply", "failed", "cannot")
    assert log == []


def test_steady_trigger_and_duration() -> None:
    steady = threading.Event()
    timeline, log = _fake_timeline(
        [{"when": "steady", "duration": "0.3s", "signal": {"pid": 1}}], steady=steady.is_set
    )
    with timeline.running() as running:
        time.sleep(0.3)
        assert log == []
        steady.set()
        assert _wait_for(lambda: len(log) == 2, 5)
        t0 = running.t0
    [apply, revert] = timeline.records()
    assert t0 is not None and apply.planned_at_s == pytest.approx(0.3, abs=0.2)
    assert revert.started_unix - apply.ended_unix == pytest.approx(0.3, abs=0.15)
    assert apply.planned_at_s is not None
    assert revert.planned_at_s == pytest.approx(apply.planned_at_s + 0.3)


def test_the_duration_counts_from_when_a_slow_apply_returned() -> None:
    timeline, log = _fake_timeline([{"at": 0, "duration": "0.3s", "signal": {"pid": 1}}],
                                   slow=0.5)  # fmt: skip
    with timeline.running():
        assert _wait_for(lambda: len(log) == 2, 5)
    [apply, revert] = timeline.records()
    assert apply.ended_unix - apply.started_unix >= 0.5
    # in force for its 0.3 s: from the apply's return, not from its start (0.5 s earlier)
    assert revert.started_unix - apply.ended_unix == pytest.approx(0.3, abs=0.15)
    assert revert.planned_at_s == pytest.approx(0.3)  # the plan's figure, unchanged


def test_prompts_interactive_and_assumed() -> None:
    asked: list[tuple[str, float]] = []

    def confirm(text: str) -> None:
        time.sleep(0.2)  # the operator takes a moment
        asked.append((text, time.time()))

    item = {"at": 0.1, "duration": "0.2s", "prompt": {"text": "pull A", "assume_after": "1s"}}
    timeline, _ = _fake_timeline([item], confirm=confirm, interactive=True)
    with timeline.running():
        assert _wait_for(lambda: len(timeline.records()) == 2, 5)
    prompt, revert = timeline.records()
    assert [t for t, _ in asked] == ["pull A", "Undo: pull A"]
    assert prompt.ended_unix == pytest.approx(asked[0][1], abs=0.01)
    assert prompt.ended_unix - prompt.started_unix == pytest.approx(0.2, abs=0.1)
    assert revert.started_unix - prompt.ended_unix == pytest.approx(0.2, abs=0.1)
    assert prompt.detail == "confirmed by the operator: pull A"

    timeline, _ = _fake_timeline([item])  # non-interactive: times from the plan
    with timeline.running(time.time()) as running:
        assert _wait_for(lambda: len(timeline.records()) == 2, 5)
        t0 = running.t0
    prompt, revert = timeline.records()
    assert t0 is not None
    assert prompt.started_unix == prompt.ended_unix == pytest.approx(t0 + 1.1)
    assert prompt.detail == "assumed (non-interactive): pull A"
    assert revert.started_unix == pytest.approx(t0 + 1.3)


def test_stop_does_not_wait_for_an_unanswered_prompt() -> None:
    answered = threading.Event()

    def confirm(text: str) -> None:
        answered.wait(10)  # the operator is away

    timeline, _ = _fake_timeline(
        [{"at": 0, "prompt": "power off controller B"}], confirm=confirm, interactive=True
    )
    try:
        with timeline.running():
            time.sleep(0.2)
            begin = time.monotonic()
        assert time.monotonic() - begin < 1.0
    finally:
        answered.set()
    [record] = timeline.records()
    assert (record.action, record.outcome) == ("skipped", "timeout")
    assert "before the operator confirmed" in record.detail


class Stubborn(Recorder):
    """Its first revert is interrupted by a (second) Ctrl-C."""

    interrupted = False

    def revert(self) -> str:
        if not Stubborn.interrupted:
            Stubborn.interrupted = True
            raise KeyboardInterrupt
        return super().revert()


def test_a_second_ctrl_c_does_not_skip_the_reverts() -> None:
    log: list[tuple[str, int, float]] = []
    timeline = EventTimeline(
        _events({"at": 0, "signal": {"pid": 1}}),
        list,
        injector_factory=lambda event, pids: Stubborn(log, 0),
    )
    timeline.start()
    assert _wait_for(lambda: bool(log), 5)
    with pytest.raises(KeyboardInterrupt):
        timeline.stop()
    assert [a for a, _, _ in log] == ["apply", "revert"]
    assert [r.action for r in timeline.records()] == ["apply", "revert"]
