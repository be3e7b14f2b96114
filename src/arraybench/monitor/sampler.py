"""Host metrics (disks, CPU) sampled on whole Unix seconds, on the clock of fio's logs.

Alignment with fio. fio stamps a row of its bw/iops logs at the moment it writes it, which is
the END of the averaging window: with ``log_unix_epoch=1`` the stamp is the wall-clock time
(ms) at which the job's epoch was taken plus the ms elapsed since then (stat.c
``__add_log_sample``), and with ``log_avg_msec=1000`` the helper thread writes a row every
1000 ms counted from that epoch (``calc_log_samples`` keeps "the time on the log avg msec
boundary"). So a row stamped T covers [T - 1000, T) ms, and its phase is the sub-second
part of the job's start: fio 3.33 started at ...062.114 writes rows at ...063.114,
...064.114. ``arraybench.engines.fio.logs`` files a row under second round(T / 1000).

More: docs/internals.md, `monitor/sampler.py`."""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType

from arraybench.errors import ArraybenchError
from arraybench.monitor.cpu import CpuCounters, CpuRates, cpu_rates, parse_proc_stat
from arraybench.monitor.diskstats import DiskCounters, DiskRates, disk_rates, parse_diskstats
from arraybench.system.signals import join_started, start_shielded

_JOIN_TIMEOUT_S = 1.0


class MonitorError(ArraybenchError):
    """Host sampling could not start, or failed while running; ``samples`` holds what it got."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.samples: list[HostSample] = []


@dataclass(frozen=True)
class HostSample:
    """Kernel figures for the interval [t - span_s, t), t in whole Unix seconds.

    ``disks`` holds the devices asked for that had valid readings at both ends (a device
    removed or re-created in between is left out of that second).
    """

    t: int
    disks: dict[str, DiskRates]
    cpu: CpuRates
    span_s: float = 1.0


@dataclass(frozen=True)
class _Reading:
    wall: float
    mono: float
    disks: dict[str, DiskCounters]
    cpu: CpuCounters


class HostSampler:
    """Samples block devices and CPU every ``interval_s`` whole seconds in a daemon thread.

    ``start()`` takes a first reading at once (and raises MonitorError if /proc cannot be read
    or a device is unknown); ``stop()`` ends the thread within milliseconds, takes a last
    partial sample and returns all samples. Failures inside the thread never escape it: the
    thread ends and ``stop()`` raises MonitorError (with ``samples`` attached). Also a context
    manager. One sampler runs once.
    """

    def __init__(
        self,
        devices: Sequence[str],
        interval_s: float = 1.0,
        proc_root: str | os.PathLike[str] = "/proc",
    ) -> None:
        if interval_s < 1 or not float(interval_s).is_integer():
            raise ValueError(f"interval_s must be a whole number of seconds >= 1: {interval_s}")
        self.devices = list(dict.fromkeys(devices))
        self.interval_s = int(interval_s)
        self.proc_root = os.fspath(proc_root)
        self.warnings: list[str] = []
        self._samples: list[HostSample] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._last_t: int | None = None
        self._stopped = False

    # ------------------------------------------------------------------ public

    def start(self) -> HostSampler:
        if self._thread is not None:
            raise RuntimeError("a HostSampler runs once; create a new one")
        first = self._read_or_fail()
        missing = [d for d in self.devices if d not in first.disks]
        if missing:
            raise MonitorError(
                f"no block device named {', '.join(missing)} in {self._path('diskstats')}",
                "give kernel names as /proc/diskstats lists them (sdb, nvme0n1, dm-3)",
            )
        self._thread = threading.Thread(
            target=self._run, args=(first,), name="arraybench-host-sampler", daemon=True
        )
        start_shielded(self._thread)  # a Ctrl-C now is handled once it has started
        return self

    def stop(self) -> list[HostSample]:
        """Stop sampling and return the samples (the same list again on a second call)."""
        if self._thread is None:
            raise RuntimeError("HostSampler.stop() before start()")
        self._stop.set()
        join_started(self._thread, _JOIN_TIMEOUT_S)
        if self._thread.is_alive() and self._error is None:
            self._error = TimeoutError("the sampling thread did not end within 1 s")
        if self._error is not None and not self._stopped:
            self._stopped = True
            error = MonitorError(
                f"host sampling failed: {self._error}",
                "host metrics for this point are incomplete; fio's own figures are unaffected",
            )
            error.samples = list(self._samples)
            raise error from self._error
        self._stopped = True
        return list(self._samples)

    @property
    def samples(self) -> list[HostSample]:
        """The samples so far (a copy)."""
        return list(self._samples)

    def __enter__(self) -> HostSampler:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self.stop()
            return
        try:  # the body's exception matters more than a sampling failure
            self.stop()
        except MonitorError as monitor_error:
            self.warnings.append(monitor_error.one_line())

    # ------------------------------------------------------------------ thread

    def _run(self, previous: _Reading) -> None:
        try:
            while True:
                boundary = self._next_boundary(time.time())
                stopped = self._wait_until(boundary)
                current = self._read()
                self._append(previous, current, boundary if stopped else None)
                previous = current
                if stopped:
                    return
        except Exception as exc:  # never escape the thread: stop() reports it
            self._error = exc

    def _next_boundary(self, now: float) -> int:
        step = self.interval_s
        boundary = (math.floor(now) // step + 1) * step
        if self._last_t is not None:  # wall clock stepped back: keep stamps increasing
            boundary = max(boundary, self._last_t + step)
        return boundary

    def _wait_until(self, boundary: int) -> bool:
        """Wait for the wall clock to reach ``boundary``; True when stop() came first."""
        while True:
            remaining = boundary - time.time()
            if remaining <= 0:
                return False
            if self._stop.wait(remaining):
                return True

    def _append(self, previous: _Reading, current: _Reading, final_t: int | None) -> None:
        span = current.mono - previous.mono
        if span <= 0:
            return
        if final_t is not None:
            t = final_t  # the partial last interval, labelled by the second it ends in
        else:
            t = math.floor(current.wall) // self.interval_s * self.interval_s
        if self._last_t is not None and t <= self._last_t:
            t = self._last_t + self.interval_s
        self._samples.append(
            HostSample(
                t=t,
                disks=self._disk_rates(previous, current, span),
                cpu=cpu_rates(previous.cpu, current.cpu),
                span_s=span,
            )
        )
        self._last_t = t

    def _disk_rates(
        self, previous: _Reading, current: _Reading, span: float
    ) -> dict[str, DiskRates]:
        rates: dict[str, DiskRates] = {}
        for name in self.devices:
            before, after = previous.disks.get(name), current.disks.get(name)
            if before is None or after is None:
                self._warn(f"{name}: missing from diskstats (device removed?)")
                continue
            try:
                rates[name] = disk_rates(before, after, span)
            except ValueError as exc:
                self._warn(f"{name}: {exc}")
        return rates

    def _warn(self, message: str) -> None:
        if len(self.warnings) < 100 and message not in self.warnings:
            self.warnings.append(message)

    # ------------------------------------------------------------------ reading

    def _path(self, name: str) -> str:
        return os.path.join(self.proc_root, name)

    def _read(self) -> _Reading:
        with open(self._path("diskstats"), encoding="ascii", errors="replace") as fh:
            disks_text = fh.read()
        mono, wall = time.monotonic(), time.time()
        with open(self._path("stat"), encoding="ascii", errors="replace") as fh:
            stat_text = fh.read()
        return _Reading(
            wall=wall,
            mono=mono,
            disks=parse_diskstats(disks_text, set(self.devices)),
            cpu=parse_proc_stat(stat_text),
        )

    def _read_or_fail(self) -> _Reading:
        try:
            return self._read()
        except (OSError, ValueError) as exc:
            raise MonitorError(
                f"cannot read host counters under {self.proc_root}: {exc}",
                "host monitoring needs Linux /proc (diskstats and stat)",
            ) from exc
