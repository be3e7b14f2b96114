"""The plan's `array_monitor:` during a run: after each point, its window asked of each source
in a thread of its own, stored as the array-side series `attach` stores (one `array_series`
finding per point and source), so the report and `compare` put the array's figures beside
fio's. A source that fails, answers slowly or prints garbage gives an `array_pull` finding
and one warning line; the run never waits on it (only its end waits, at most
`CLOSE_WAIT_S` past the last point's lag, for the last answers).
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arraybench.finding_kinds import ARRAY_PULL, ARRAY_SERIES, WARMUP, ArrayPullFinding
from arraybench.monitor.arraypull import (
    ArrayPullError,
    CommandSource,
    prometheus_samples,
    shown_url,
)
from arraybench.monitor.arrayside import ArraySample
from arraybench.plan.array_monitor import ArrayMonitor
from arraybench.records import Finding
from arraybench.run.load import LoadResult
from arraybench.run.sidecar import Line, Sidecar
from arraybench.store.db import Store

CLOSE_WAIT_S = 10.0


@dataclass(frozen=True)
class PointWindow:
    key: str
    start: int  # the point's first and last measured second (Unix)
    end: int


class ArrayPull:
    def __init__(self, monitor: ArrayMonitor, results_dir: Path, run_id: str) -> None:
        self.monitor = monitor
        self.results_dir = results_dir
        self.run_id = run_id
        self.jobs: queue.Queue[PointWindow | None] = queue.Queue()
        self.messages: queue.Queue[str] = queue.Queue()
        self.command = CommandSource(monitor.command) if monitor.command else None
        self.thread = threading.Thread(target=self._work, name="arraybench-array-pull",
                                       daemon=True)  # fmt: skip
        self.thread.start()

    def point_done(self, key: str, seconds: Sequence[int]) -> list[str]:
        """The point's window queued; the lines to warn about since the last call."""
        if seconds:
            self.jobs.put(PointWindow(key, min(seconds), max(seconds)))
        return self.lines()

    def lines(self) -> list[str]:
        found = []
        with contextlib.suppress(queue.Empty):
            while True:
                found.append(self.messages.get_nowait())
        return found

    def close(self) -> list[str]:
        """The last windows asked (waiting at most their lag and CLOSE_WAIT_S), the command
        stopped; the lines left to warn about."""
        self.jobs.put(None)
        lag = self.monitor.prometheus.lag if self.monitor.prometheus else 0.0
        self.thread.join(timeout=lag + CLOSE_WAIT_S)
        if self.thread.is_alive():
            self.messages.put("array_monitor: the last answers did not come in time; skipped")
        if self.command is not None:
            self.command.stop()
        return self.lines()

    # -- the worker thread ---------------------------------------------------------------
    def _work(self) -> None:
        store = Store(self.results_dir, create=False)  # its own connection, in its thread
        try:
            while (window := self.jobs.get()) is not None:
                try:
                    self._pull(store, window)
                except Exception as exc:  # a store error here must not end the next points' pulls
                    self.messages.put(f"array_monitor: point {window.key}: {exc}; skipped")
        finally:
            store.close()

    def _pull(self, store: Store, window: PointWindow) -> None:
        prom, command = self.monitor.prometheus, self.command
        if prom is not None:
            wait = window.end + prom.lag - time.time()
            if wait > 0:
                time.sleep(wait)
            queries = {k: v for k, v in prom.queries.model_dump().items() if v}
            start, end = window.start - 1, window.end
            source = f"array_monitor prometheus {shown_url(prom.url)}"  # no password in it
            self._store(store, window, source, queries,
                        lambda: prometheus_samples(prom.url, queries, start, end, prom.step,
                                                   prom.timeout))  # fmt: skip
        if command is not None:
            self._store(store, window, f"array_monitor command {command.argv[0]}",
                        {"argv": " ".join(command.argv)},
                        lambda: command.window(window.start - 1, window.end))  # fmt: skip

    def _store(self, store: Store, window: PointWindow, source: str, mapping: dict[str, str],
               pull: Callable[[], list[ArraySample]]) -> None:  # fmt: skip
        try:
            samples = pull()
            if not samples:
                raise ArrayPullError("no sample in the point's window")
        except ArrayPullError as exc:
            error = str(exc)
            failed = ArrayPullFinding(source=source, point=window.key, error=error)
            store.add_finding(self.run_id, ARRAY_PULL.new(failed))
            self.messages.put(f"{source}: point {window.key} not read ({error}); skipped")
            return
        store.add_finding(self.run_id, ARRAY_SERIES.new({
            "file": source, "map": mapping, "offset_s": 0.0,
            "samples": [[s.t, s.values] for s in samples]}))  # fmt: skip


class ArrayWindow(Sidecar):
    """The array monitor as a sidecar of one point: once the point is stored, its window is
    queued (`ArrayPull.point_done`) and the lines about earlier windows are said."""

    def __init__(self, pull: ArrayPull, key: str) -> None:
        self.pull = pull
        self.key = key
        self.seconds: list[int] = []

    def findings(self, result: LoadResult) -> list[Finding]:
        """The point's seconds, its logged warm-up's too (drawn with the controller's CPU
        beside it: AERODISK's whole hour)."""
        warm = [int(r[0]) for f in WARMUP.among(result.findings) for r in f["samples"]
                if r[0] is not None]  # fmt: skip
        self.seconds = [s.t for s in result.samples] + warm
        return []  # the pull's own, stored by its thread

    def lines(self) -> list[Line]:
        return [Line(True, line) for line in self.pull.point_done(self.key, self.seconds)]
