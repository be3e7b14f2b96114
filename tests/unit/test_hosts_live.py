"""run/hosts_live.py without hosts: the second between two passes of a host's counters, the
remote command (one `sh -c`, every target a positional parameter), a host without ssh said
once, and `stop` ending a stream that never ends (tests/e2e/test_live_hosts.py runs it)."""

from __future__ import annotations

import shlex
import sys
from types import SimpleNamespace
from typing import Any, cast

from arraybench.hosts.server import HostSpec, SshSpec
from arraybench.live.page import live_page
from arraybench.live.state import LiveObserver, LiveState
from arraybench.live.terminal import KERNEL_NOTE, view_lines
from arraybench.plan.expand import Point
from arraybench.run.hosts_live import LOOP_SH, HostReader, HostsLive, counters, host_second

DISK = "100 5 800 10 50 2 400 20 0 0 0"  # reads, merged, sectors read, ms, writes, ... sectors


def _pass(uptime: float, reads: int, writes: int, read_ms: int = 10, write_ms: int = 20) -> Any:
    fields = DISK.split()
    fields[0], fields[2], fields[4], fields[6] = str(reads), str(reads * 8), str(writes), "0"
    fields[3], fields[7] = str(read_ms), str(write_ms)
    return counters(uptime, [fields, DISK.split()])  # two disks of the host, summed


def test_a_second_is_the_counters_difference_over_the_hosts_own_clock() -> None:
    second = host_second("h0", 7, _pass(10.0, 1000, 10), _pass(12.0, 3000, 50))
    assert second is not None and second.t == 7 and second.host == "h0"
    assert second.read.iops == 1000 and second.write.iops == 20
    assert second.read.mbps == 2000 * 8 * 512 / 2 / 1e6 and second.write.mbps == 0
    # ms spent on the second's requests over their count: the block layer's mean (await)
    assert second.read.lat_mean_us is None and second.write.lat_mean_us is None  # 0 ms moved
    timed = host_second("h0", 7, _pass(10.0, 1000, 10, 10, 20), _pass(11.0, 3000, 50, 130, 30))
    assert timed is not None
    assert timed.read.lat_mean_us == 120 * 1000 / 2000  # 60 µs per read
    assert timed.write.lat_mean_us == 10 * 1000 / 40  # 250 µs per write
    assert timed.read.lat_p99_us is None  # no percentiles from a sum
    idle = host_second("h0", 7, _pass(10.0, 1000, 10), _pass(11.0, 1000, 10))
    assert idle is not None and idle.read.lat_mean_us is None  # no request: no latency
    back = host_second("h0", 7, _pass(10.0, 1000, 10, 50), _pass(11.0, 1100, 10, 40))
    assert back is not None and back.read.lat_mean_us is None  # a counter that went back
    few = host_second("h0", 7, _pass(10.0, 1000, 10, 10), _pass(11.0, 1005, 10, 13))
    assert few is not None and few.read.lat_mean_us is None  # 3 ms in all: too coarse


def test_a_stalled_pass_or_counters_going_back_give_no_second() -> None:
    assert host_second("h0", 7, _pass(10.0, 1000, 10), _pass(14.0, 3000, 10)) is None
    assert host_second("h0", 7, _pass(10.0, 1000, 10), _pass(11.0, 10, 10)) is None


class _Observer:
    live_seconds = True

    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)


def _live(
    specs: dict[str, HostSpec], observer: _Observer, said: set[str] | None = None
) -> HostsLive:
    point = cast(Point, SimpleNamespace(level=SimpleNamespace(hosts=list(specs)),
                                        expected_seconds=5.0))  # fmt: skip
    return HostsLive(
        cast(Any, observer), point, specs, {"h1": ["/dev/x; rm -rf /", "/dev/y"]}, said
    )


def test_the_remote_command_passes_targets_as_parameters_never_as_code() -> None:
    live = _live({"h1": HostSpec("h1", "10.0.0.2", ssh=SshSpec(user="root"))}, _Observer())
    argv = live.command("h1")
    assert argv[:2] == ["ssh", "-o"] and argv[-2] == "root@10.0.0.2"
    assert shlex.split(argv[-1]) == ["sh", "-c", LOOP_SH, "arraybench-live", "/dev/x; rm -rf /",
                                     "/dev/y"]  # fmt: skip


def test_hosts_without_ssh_are_said_once_to_have_no_live_figures() -> None:
    observer = _Observer()
    specs = {"h0": HostSpec("h0", "10.0.0.1"), "h2": HostSpec("h2", "10.0.0.3")}
    said: set[str] = set()  # the fleet's, for the whole campaign
    for _ in range(2):  # two points: still one line
        live = _live(specs, observer, said)
        live.start()
        live.stop()
    assert len(observer.notes) == 1
    assert "h0, h2" in observer.notes[0] and "no per-second figures" in observer.notes[0]


def test_stop_ends_a_stream_that_never_ends() -> None:
    live = _live({}, _Observer())
    forever = [sys.executable, "-c", "import time\nwhile True: time.sleep(1)"]
    reader = HostReader("h0", forever, live)
    reader.stop()
    assert reader.proc.returncode is not None
    assert not reader.thread.is_alive()


def test_the_terminal_and_the_page_say_the_seconds_are_the_kernels() -> None:
    state = LiveState()
    state.data["state"] = "running"
    state.data["point"] = {"key": "p1", "seq": 1, "scenario": "", "workload": "rr",
                           "level": "w1-qd1", "expected_s": 5.0, "left_s": 5.0, "unit": "IOPS",
                           "started": 0.0, "source": "fio"}  # fmt: skip
    observer = LiveObserver(cast(Any, SimpleNamespace(live_view=lambda snap: None)), state)
    second = host_second("h0", 7, _pass(10.0, 1000, 10), _pass(11.0, 1800, 10))
    assert second is not None
    observer.live_second(cast(Point, None), [second], 3.0, source="kernel")
    snap = state.snapshot()
    assert snap["point"] is not None and snap["point"]["source"] == "kernel"
    assert KERNEL_NOTE in view_lines(snap) and snap["series"][-1][1] == 800
    assert "kernel's view" in live_page()


def test_a_stream_that_ends_by_itself_is_said_once() -> None:
    observer = _Observer()
    live = _live({}, observer)
    reader = HostReader("h3", [sys.executable, "-c", "raise SystemExit(255)"], live)
    reader.thread.join(timeout=10)
    reader.stop()
    assert len(observer.notes) == 1 and "h3" in observer.notes[0]
    assert "exit status 255" in observer.notes[0]
