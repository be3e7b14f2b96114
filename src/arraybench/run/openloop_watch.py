"""A rate-limited local point's open-loop figures (analysis.openloop): fio writes each job's
completions to latency-histogram logs (`engines/fio/jobfile.py`, OPEN_LOOP_PREFIX), and
this sidecar watches the load generator meanwhile, so that a stall of the generator (fio's
job processes stopped, e.g. SIGSTOP, or a host frozen) is told apart from a stall of the
storage: every SAMPLE_S it reads the state of fio's job processes (/proc/PID/stat); the
moments when one of them was stopped (`T`, `t`) are the generator's."""

from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from arraybench.analysis.openloop import HistRow, HostsOpenLoop, OpenLoop, open_loop
from arraybench.analysis.validity import finding_data, generator_stall
from arraybench.engines.fio.jobfile import OPEN_LOOP_HIST_MS, OPEN_LOOP_PREFIX, point_rate
from arraybench.engines.fio.logs import hist_bin_value_ns, parse_hist_log
from arraybench.engines.fio.runner import STOP_REQUESTED
from arraybench.errors import ArraybenchError
from arraybench.finding_kinds import (
    OPEN_LOOP,
    VALIDITY,
    KneeData,
    OpenLoopFinding,
    OpenLoopHostData,
    OpenLoopStallData,
)
from arraybench.plan.expand import Point
from arraybench.records import Finding, Sample
from arraybench.run.load import LoadResult, LoadStart
from arraybench.run.sidecar import Line, Sidecar
from arraybench.system.procs import process_tree_pids

SAMPLE_S = 0.05  # how often fio's job processes' state is read
HOST_RESOLUTION_S = 1.0  # a many-host point's completions: the hosts' 1-second logs
TREE_EVERY = 20  # samples between two walks of /proc for fio's job processes (1 s)


def intended_iops(point: Point) -> float | None:
    """The point's total intended rate: each job's rate x its jobs (workers, per target when
    the load is spread per target), None without a rate."""
    rate = point_rate(point)
    if rate is None:
        return None
    jobs = point.level.workers * (len(point.targets) if point.spread == "per_target" else 1)
    return rate.total_iops * jobs


def _state(pid: int) -> str | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :][:1] or None


def read_rows(folder: Path) -> list[HistRow]:
    """Every job's histogram rows of a point folder, reads and writes together (each
    direction of a job its own series of rows)."""
    rows: list[HistRow] = []
    for job, path in enumerate(sorted(folder.glob(f"{OPEN_LOOP_PREFIX}_clat_hist.*.log"))):
        for t_ms, ddir, _bs, bins in parse_hist_log(path):
            lats = [(hist_bin_value_ns(i, len(bins)) / 1000, n) for i, n in enumerate(bins) if n]
            # a mixed job writes a row per direction, each since its own previous row
            rows.append(HistRow(job * 3 + ddir, float(t_ms), lats))
    return rows


def _stalls(figures: OpenLoop) -> list[OpenLoopStallData]:
    return [
        {"start_s": s.start_s, "length_s": s.length_s, "cause": s.cause,
         "unserved_peak_ios": round(s.unserved_peak_ios, 1), "drain_s": s.drain_s}
        for s in figures.stalls
    ]  # fmt: skip


def _latencies(values: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 1) for k, v in values.items()}


def host_data(figures: OpenLoop) -> OpenLoopHostData:
    return {
        "intended_iops": figures.intended_iops, "ios": figures.ios,
        "unserved_peak_ios": figures.unserved_peak_ios,
        "longest_stall_s": figures.longest_stall_s, "drain_s": figures.drain_s,
        "stalls": _stalls(figures),
        "corrected_latency_us": _latencies(figures.corrected_latency_us),
        "fio_latency_us": _latencies(figures.fio_latency_us), "stuck": figures.stuck,
    }  # fmt: skip


def second_rows(samples: Sequence[Sample]) -> list[HistRow]:
    """A host's 1-second samples as completion rows: each second's I/Os at its mean latency
    (fio's client writes a server's histogram logs wrong: docs/availability.md)."""
    rows = []
    for s in samples:
        both = ((s.read_iops, s.read_lat_us), (s.write_iops, s.write_lat_us))
        parts = [(iops, lat) for iops, lat in both if iops]
        count = round(sum(iops for iops, _ in parts))
        weighted = sum(iops * (lat or 0.0) for iops, lat in parts)
        mean = weighted / sum(iops for iops, _ in parts) if parts else 0.0
        rows.append(HistRow(0, s.t * 1000.0, [(mean, count)] if count else []))
    return rows


def hosts_finding(figures: HostsOpenLoop) -> Finding:
    """A many-host point's `open_loop`: the total's figures, each stall with its host, and
    every host's own figures, at one second's resolution."""
    finding = finding_of(figures.total)
    data = OPEN_LOOP.of(finding)
    for stall, host in zip(data["stalls"], figures.stall_hosts, strict=True):
        stall["host"] = host
    data["hosts"] = {name: host_data(f) for name, f in figures.hosts.items()}
    data["resolution_s"] = HOST_RESOLUTION_S
    return finding


def with_knee(finding: Finding, point: Point) -> Finding:
    """A `rate_of` point's open-loop finding names the knee its intended rate is a share of."""
    knee = point.knee
    if knee is not None:
        data: KneeData = {"run": knee.run, "key": knee.key, "iops": round(knee.iops, 1),
                "share": knee.share}  # fmt: skip
        OPEN_LOOP.of(finding)["knee"] = data
    return finding


def finding_of(figures: OpenLoop) -> Finding:
    stalls = _stalls(figures)
    data: OpenLoopFinding = {
        "intended_iops": figures.intended_iops,
        "origin_unix": figures.origin_unix,
        "ios": figures.ios,
        "unserved_peak_ios": figures.unserved_peak_ios,
        "longest_stall_s": figures.longest_stall_s,
        "drain_s": figures.drain_s,
        "stalls": stalls,
        "corrected_latency_us": _latencies(figures.corrected_latency_us),
        "fio_latency_us": _latencies(figures.fio_latency_us),
        "slot_s": figures.slot_s,
        "series": [[p.t_s, round(p.due, 1), p.completed] for p in figures.series],
        "stuck_limit_s": figures.stuck_limit_s,
        "stuck": figures.stuck,
        "generator_stalled": figures.generator_stalled,
    }
    return OPEN_LOOP.new(data)


def stuck_seconds(iops: list[float], intended: float) -> int:
    """How many of the last seconds completed under a tenth of the intended rate."""
    n = 0
    for value in reversed(iops):
        if value >= intended / 10:
            break
        n += 1
    return n


class OpenLoopWatch(Sidecar):
    def __init__(
        self, point: Point, folder: Path, stuck_limit_s: float | None = None,
        live_iops: Callable[[], list[float]] | None = None, end_on_stuck: bool = False,
    ) -> None:  # fmt: skip
        self.point, self.folder = point, folder
        self.stuck_limit_s = stuck_limit_s
        # the targets' devices' per-second IOPS so far: a point stuck that long is ended
        self.live_iops = live_iops if end_on_stuck else None
        self.ended_stuck: float | None = None  # the stalled seconds when it was ended
        self.rate = intended_iops(point)
        self.fio_pid: int | None = None
        self.stops: list[tuple[float, float]] = []  # the generator stopped, Unix s
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self.figures: OpenLoop | None = None
        self.problem: str | None = None

    def load_started(self, load: LoadStart) -> None:
        self.fio_pid = load.pid
        self._thread = threading.Thread(target=self._watch, name="openloop-watch", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        jobs: list[int] = []
        since: float | None = None
        n = 0
        while not self._done.wait(SAMPLE_S):
            if n % TREE_EVERY == 0 and self.fio_pid is not None:
                jobs = [p for p in process_tree_pids(self.fio_pid) if p != self.fio_pid]
            n += 1
            now = time.time()
            stopped = any(_state(p) in ("T", "t") for p in jobs)
            if stopped and since is None:
                since = now - SAMPLE_S / 2
            elif not stopped and since is not None:
                self.stops.append((since, now - SAMPLE_S / 2))
                since = None
        if since is not None:
            self.stops.append((since, time.time()))

    def tick(self, elapsed_s: float) -> None:
        """End the point (fio stopped as on Ctrl-C: it reports what it measured) once its
        devices completed under a tenth of the rate for the stuck-I/O limit."""
        if self.live_iops is None or self.rate is None or self.stuck_limit_s is None:
            return
        if self.ended_stuck is not None or self.fio_pid is None:
            return
        stalled = stuck_seconds(self.live_iops(), self.rate)
        if stalled >= math.ceil(self.stuck_limit_s):
            self.ended_stuck = float(stalled)
            (self.folder / STOP_REQUESTED).write_text(f"stuck for {stalled} s\n")
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.fio_pid, signal.SIGINT)

    def stop(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def findings(self, result: LoadResult) -> list[Finding]:
        if self.rate is None:
            return []
        try:
            rows = read_rows(self.folder)
        except ArraybenchError as exc:  # a log fio cut short: the point keeps its figures
            self.problem = exc.one_line()
            return []
        figures = open_loop(rows, self.rate, OPEN_LOOP_HIST_MS, generator_stops=self.stops,
                            stuck_limit_s=self.stuck_limit_s)  # fmt: skip
        self.figures = figures
        if figures is None:
            return []
        flag = generator_stall([(s.start_s, s.length_s) for s in figures.stalls
                                if s.cause == "generator"])  # fmt: skip
        flagged = [VALIDITY.new(finding_data([flag]))] if flag else []
        return [with_knee(finding_of(figures), self.point), *flagged]

    def lines(self) -> list[Line]:
        key = self.point.key
        if self.problem:
            return [Line(True, f"point {key}: open loop: {self.problem}")]
        f = self.figures
        if f is None:
            return []
        found: list[Line] = []
        if f.stalls:
            s = max(f.stalls, key=lambda s: s.length_s)
            drain = "not drained" if s.drain_s is None else f"drained in {s.drain_s:g} s"
            found.append(Line(False, (
                f"point {key}: open loop at {f.intended_iops:,.0f} IOPS: longest stall "
                f"{s.length_s:g} s ({s.cause}), unserved peak {f.unserved_peak_ios:,.0f} I/Os, "
                f"{drain}; corrected p99 {f.corrected_latency_us['p99']:,.0f} µs "
                f"(fio's {f.fio_latency_us['p99']:,.0f} µs)")))  # fmt: skip
        if f.generator_stalled:
            found.append(Line(True, f"point {key}: open loop: the load generator stopped "
                              "(fio's processes were stopped): its availability figures "
                              "are the host's, not the storage's"))  # fmt: skip
        if self.ended_stuck is not None and self.stuck_limit_s is not None:
            found.append(Line(True, f"point {key}: ended after its devices completed under a "
                              f"tenth of {f.intended_iops:,.0f} IOPS for "
                              f"{self.ended_stuck:g} s (stuck-I/O limit "
                              f"{self.stuck_limit_s:g} s); what was measured is kept"))  # fmt: skip
        elif f.stuck and f.stuck_limit_s is not None:
            found.append(Line(True, f"point {key}: open loop: a stall of "
                              f"{f.longest_stall_s:g} s, over the stuck-I/O limit of "
                              f"{f.stuck_limit_s:g} s"))  # fmt: skip
        return found
