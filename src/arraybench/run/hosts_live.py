"""The live seconds of a point on many hosts: each host's target disks' kernel counters
(/proc/diskstats) read once a second over SSH, the hosts summed per second for the live view.

fio's client (`fio --client`, 3.33) relays no `--status-interval` reports from its servers, so
the hosts' own fio says nothing until the point ends; the kernel's block layer counts every
request as it completes. These figures are the kernel's view (requests the disk completed,
after merging and splitting, cache hits not counted; latency the block layer's mean per request
as iostat's await gives it, no percentiles), not fio's: the live page and terminal say so
(`source: kernel`). The stored 1-second samples stay fio's own, from its logs.

A sidecar of the point (`run/sidecar.py`): `start` opens one long-lived `ssh` per host with
`ssh:` running a fixed `sh` loop (`LOOP_SH`, targets as positional parameters, the device
found by `DEVICE_SH`), `stop` ends every one of them (always; the remote loop dies on its next
write to the closed pipe). A host without `ssh:` is said once to have no live figures.
Like the local live feed, nothing here can stop a point: whatever fails is dropped.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from arraybench.engines.live import DirectionSecond, LiveSecond
from arraybench.hosts.server import HostSpec, ssh_command
from arraybench.plan.expand import Point
from arraybench.run.context import Observer
from arraybench.run.load import LoadStart
from arraybench.run.sidecar import Sidecar
from arraybench.system.shell import DEVICE_SH, sh_command

SOURCE = "kernel"
SECTOR = 512  # /proc/diskstats counts 512-byte sectors whatever the disk's block size
STOP_WAIT_S = 5.0

# $@: the host's target paths. Prints `T <uptime>` then `D <name> <fields after the name>` of
# each distinct whole disk the targets live on, `E` after each pass, once a second; `N` once
# when no target is on a block device. Only builtins in the loop besides `sleep`. It ends on
# its first write after the connection closed; ssh ends on its first write after the
# controller closed its pipe (`stop`, or the controller killed: SIGKILL leaves no loop either).
LOOP_SH = (
    DEVICE_SH
    + r"""names=" "
for p in "$@"; do
  diskof "$p" || continue
  d=$(basename "$s")
  case "$names" in *" $d "*) ;; *) names="$names$d " ;; esac
done
[ "$names" = " " ] && { echo N; exit 0; }
while :; do
  read -r up _ </proc/uptime
  echo "T $up" || exit 0
  while read -r _ _ name rest; do
    case "$names" in *" $name "*) echo "D $name $rest" ;; esac
  done </proc/diskstats
  echo E || exit 0
  sleep 1
done
"""
)


@dataclass(frozen=True)
class Counters:
    """A host's disks summed at one instant (uptime: the host's clock, seconds); `*_ms`: the
    milliseconds the completed requests of that direction took, summed (iostat's await)."""

    uptime: float
    reads: int
    read_bytes: int
    writes: int
    write_bytes: int
    read_ms: int = 0
    write_ms: int = 0


def counters(uptime: float, disks: Sequence[Sequence[str]]) -> Counters:
    """Fields after a disk's name: reads completed, merged, sectors read, ms reading; writes
    completed, merged, sectors written, ms writing, ..."""
    r = rb = rm = w = wb = wm = 0
    for f in disks:
        r, rb, rm = r + int(f[0]), rb + int(f[2]) * SECTOR, rm + int(f[3])
        w, wb, wm = w + int(f[4]), wb + int(f[6]) * SECTOR, wm + int(f[7])
    return Counters(uptime, r, rb, w, wb, rm, wm)


def _rate(count: int, seconds: float, scale: float = 1.0) -> float:
    return max(0, count) / seconds / scale


AWAIT_MIN_MS = 10  # the counter moves in whole ms: under 10 in a second, off by over 10 %


def _await_us(ios: int, ms: int) -> float | None:
    """The block layer's mean time per completed request (iostat's r_await / w_await), in
    µs; None without a completed request, when the counter went back, or when the second's
    requests took under `AWAIT_MIN_MS` in all (a few fast ones: the whole-ms sum says
    little, and 0 ms would read as a latency of 0)."""
    return ms * 1000.0 / ios if ios > 0 and ms >= AWAIT_MIN_MS else None


def host_second(host: str, t: int, before: Counters, after: Counters) -> LiveSecond | None:
    """The host's second between two passes; None when they are not about a second apart
    (a stalled connection) or a counter went back (a disk replaced)."""
    seconds = after.uptime - before.uptime
    if not 0.5 <= seconds <= 2.5 or after.reads < before.reads or after.writes < before.writes:
        return None

    def direction(ios: int, size: int, ms: int) -> DirectionSecond:
        return DirectionSecond(_rate(ios, seconds), _rate(size, seconds, 1e6),
                               _await_us(ios, ms), None)  # fmt: skip

    read = direction(after.reads - before.reads, after.read_bytes - before.read_bytes,
                     after.read_ms - before.read_ms)  # fmt: skip
    write = direction(after.writes - before.writes, after.write_bytes - before.write_bytes,
                      after.write_ms - before.write_ms)  # fmt: skip
    return LiveSecond(t, host, read, write, 0)


class HostReader:
    """One host's ssh process and the thread reading its lines."""

    def __init__(self, name: str, argv: list[str], sink: HostsLive) -> None:
        self.name, self.sink = name, sink
        self.stopping = False
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)  # fmt: skip
        self.thread = threading.Thread(target=self._read, name=f"live-{name}", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        last: Counters | None = None
        uptime, disks = 0.0, list[list[str]]()
        with contextlib.suppress(Exception):
            for line in self.proc.stdout:
                kind, _, rest = line.strip().partition(" ")
                if kind == "N":
                    self.sink.no_device(self.name)
                elif kind == "T":
                    uptime, disks = float(rest), []
                elif kind == "D":
                    disks.append(rest.split()[1:])
                elif kind == "E":
                    now = counters(uptime, disks)
                    if last is not None:
                        self.sink.second(self.name, last, now)
                    last = now
        if not self.stopping:  # ended by itself: an ssh that failed, a loop that died
            code = self.proc.wait()
            self.sink.lost(self.name, f"its ssh ended with exit status {code}")

    def stop(self) -> None:
        self.stopping = True
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.thread.join(timeout=STOP_WAIT_S)


class HostsLive(Sidecar):
    def __init__(
        self, observer: Observer, point: Point, specs: dict[str, HostSpec],
        targets: dict[str, list[str]], said: set[str] | None = None,
    ) -> None:  # fmt: skip
        """`said`: the hosts already said to have no live seconds (the campaign's, kept by the
        fleet: said once per run, not per point)."""
        self.observer, self.point = observer, point
        self.enabled = observer.live_seconds is True
        self.hosts = [name for name in point.level.hosts if name in specs]
        self.specs, self.targets = specs, targets
        self.readers: list[HostReader] = []
        self.lock = threading.Lock()
        self.latest: dict[str, LiveSecond] = {}
        self.t0: float | None = None
        self.said = said if said is not None else set()
        self.ticker: threading.Thread | None = None
        self.done = threading.Event()

    def command(self, name: str) -> list[str]:
        script = sh_command(LOOP_SH, self.targets.get(name, []), name="arraybench-live")
        return ssh_command(self.specs[name], script)

    def start(self) -> None:
        if not self.enabled:
            return
        blind = [name for name in self.hosts if self.specs[name].ssh is None]
        if blind:
            self._say(blind, "no ssh: in the plan")
        for name in self.hosts:
            if self.specs[name].ssh is not None:
                with contextlib.suppress(Exception):  # that host's seconds missing, no more
                    self.readers.append(HostReader(name, self.command(name), self))
        if self.readers:
            self.ticker = threading.Thread(target=self._tick, name="live-hosts", daemon=True)
            self.ticker.start()

    def load_started(self, load: LoadStart) -> None:
        self.t0 = load.t0

    def no_device(self, name: str) -> None:
        self._say([name], "its targets are on no block device")

    def lost(self, name: str, why: str) -> None:
        if not self.done.is_set():
            self._say([name], why)

    def _say(self, names: list[str], why: str) -> None:
        with self.lock:
            new = [n for n in names if n not in self.said]
            self.said.update(new)
        if new:
            with contextlib.suppress(Exception):
                self.observer.note(f"live view: no per-second figures for host(s) "
                                   f"{', '.join(new)} during many-host points ({why})")  # fmt: skip

    def second(self, name: str, before: Counters, after: Counters) -> None:
        found = host_second(name, round(time.time()), before, after)
        if found is not None:
            with self.lock:
                self.latest[name] = found

    def _tick(self) -> None:
        """Once a second, a little after the hosts' passes: the hosts' new seconds as one
        batch (the live view totals the hosts of a batch)."""
        while not self.done.wait(1.0 - (time.time() % 1.0) + 0.3):
            with self.lock:
                found, self.latest = list(self.latest.values()), {}
            t = max((s.t for s in found), default=0)
            batch = [replace(s, t=t) for s in found]  # one second: the hosts' passes in it
            if not batch or self.t0 is None or time.time() < self.t0:
                continue  # nothing new, or the gated start not reached yet
            left = max(0.0, self.point.expected_seconds - (time.time() - self.t0))
            with contextlib.suppress(Exception):
                self.observer.live_second(self.point, batch, left, source=SOURCE)

    def stop(self) -> None:
        """Every ssh process ended and waited for (no orphan), also when one stop fails."""
        self.done.set()
        failure: BaseException | None = None
        for reader in self.readers:
            try:
                reader.stop()
            except BaseException as exc:  # the next ones still stop
                failure = failure or exc
        if self.ticker is not None:
            self.ticker.join(timeout=STOP_WAIT_S)
        if failure is not None:
            raise failure
