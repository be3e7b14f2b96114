"""The live sidecar of a local point: the engine's live figures (fio's status reports) read
while it runs, handed to the observer as 1-second snapshots, with the point's events as they
happen.

The one hook of the live view (`live/`) in the run: a sidecar of every local point
(`run/sidecar.py`), its `tick` called from the engine's polling loop, its `stop` after it.
It is off unless the observer says `live_seconds = True` (`live/state.py`; not with
`run --no-live`), and reads seconds (fio: `--status-interval`) only from an engine that gives
a `LiveReader` (`Engine.live_reader`); whatever goes wrong in it is dropped, so the live
view can never stop a point, and a poll reads only what the engine appended since the last.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from arraybench.engines.live import LiveReader
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
        reader: LiveReader | None,
        events: Callable[[], list[EventRecord]] = list,
    ) -> None:
        self.observer = observer
        self.point = point
        self.enabled = observer.live_seconds is True  # events too, whatever the engine
        self.reader = reader if self.enabled else None
        self.interval = STATUS_INTERVAL_S if self.reader is not None else 0
        self.events = events
        self.seen_events = 0

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
        if self.reader is None:  # an engine that writes no live figures
            return
        left = max(0.0, self.point.expected_seconds - elapsed_s)
        for seconds in self.reader.poll():
            self.observer.live_second(self.point, seconds, left)

    def _events(self) -> None:
        records = self.events()
        for record in records[self.seen_events :]:
            self.observer.live_event(self.point, record)
        self.seen_events = len(records)

    def stop(self) -> None:
        """After the job: the last events, and the engine's output without its live figures
        (fio's final status report is no second: the I/O stopped somewhere in it)."""
        if not self.enabled:
            return
        with contextlib.suppress(Exception):
            self._events()
        if self.reader is not None:
            with contextlib.suppress(Exception):
                self.reader.finish()
