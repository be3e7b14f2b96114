"""The live sidecar of a local point: fio's status reports read while it runs, handed to the
observer as 1-second snapshots, with the point's events as they happen.

The one hook of the live view (`live/`) in the run: a sidecar of every local point
(`run/sidecar.py`), its `tick` called from fio's polling loop, its `stop` after fio. It is
off (no `--status-interval`, nothing read) unless the observer says `live_seconds = True`
(`live/state.py`; not with `run --no-live`); whatever goes wrong in it is dropped, so the
live view can never stop a point, and a poll reads only what fio appended since the last.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from arraybench.engines.fio.runner import JSON_NAME
from arraybench.engines.fio.status import StatusReport, StatusTail, keep_last_document, live_seconds
from arraybench.events.records import EventRecord
from arraybench.plan.expand import Point
from arraybench.run.context import Observer
from arraybench.run.sidecar import Sidecar

STATUS_INTERVAL_S = 1


class LiveFeed(Sidecar):
    def __init__(
        self,
        observer: Observer,
        point: Point,
        folder: Path,
        events: Callable[[], list[EventRecord]] = list,
    ) -> None:
        self.observer = observer
        self.point = point
        self.folder = folder
        self.enabled = observer.live_seconds is True
        self.interval = STATUS_INTERVAL_S if self.enabled else 0
        self.tail = StatusTail(folder / JSON_NAME)
        self.events = events
        self.seen_events = 0
        self.last: StatusReport | None = None

    def tick(self, elapsed_s: float) -> None:
        """Called every fio poll (0.25 s): new reports become seconds and new event records
        go to the observer."""
        if not self.enabled:
            return
        try:
            self._read(elapsed_s)
        except Exception:
            return

    def _read(self, elapsed_s: float) -> None:
        self._reports(elapsed_s)
        self._events()

    def _reports(self, elapsed_s: float) -> None:
        left = max(0.0, self.point.expected_seconds - elapsed_s)
        for report in self.tail.poll():
            if self.last is not None:
                seconds = live_seconds(self.last, report)
                if seconds:
                    self.observer.live_second(self.point, seconds, left)
            self.last = report

    def _events(self) -> None:
        records = self.events()
        for record in records[self.seen_events :]:
            self.observer.live_event(self.point, record)
        self.seen_events = len(records)

    def stop(self) -> None:
        """After fio: the last events, and fio's output without its status reports (its
        final report is no second: the I/O stopped somewhere in it)."""
        if not self.enabled:
            return
        with contextlib.suppress(Exception):
            self._events()
        with contextlib.suppress(OSError):
            keep_last_document(self.folder / JSON_NAME)
