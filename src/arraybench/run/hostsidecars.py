"""What runs beside one many-host point's fio: its integrity writers on the hosts and its
events, in the order the local `PointExtras` keeps: the writers and the events start with the
load; when it ends the writers stop, then the events are reverted, then every host reads its
acknowledged blocks back."""

from __future__ import annotations

import os
import time
from pathlib import Path

from arraybench.plan.expand import Point
from arraybench.run.hostevents import ControllerEvents
from arraybench.run.hostverify import HostsVerify
from arraybench.run.sidecars import POINT_ENV
from arraybench.store.db import Finding


class HostPointExtras:
    def __init__(
        self,
        point: Point,
        folder: Path,
        verify: HostsVerify | None,
        events: ControllerEvents | None,
        start_lead_s: float,
    ) -> None:
        self.point = point
        self.folder = str(folder)
        self.verify = verify
        self.events = events
        self.start_lead_s = start_lead_s

    def prepare(self, sizes: dict[str, int]) -> dict[str, int]:
        """Target sizes for fio's job files (each host's verify region kept out)."""
        return self.verify.prepare(sizes) if self.verify else sizes

    def start(self) -> None:
        """Before the fio client: writers ready on every host, the events on the hosts' clock
        (t0: the start gate every host's I/O waits for)."""
        # `run` commands (and their reverts) learn which point they act on
        os.environ.update(dict(zip(POINT_ENV, (self.folder, self.point.key), strict=True)))
        if self.verify:
            self.verify.start()
        if self.events:
            self.events.started(time.time() + self.start_lead_s)

    def stop(self) -> None:
        """Always, after the fio client (also on an exception or Ctrl-C/SIGTERM): the writers
        stop with the load, then the events are reverted."""
        try:
            if self.verify:
                self.verify.stop_writers()
        finally:
            try:
                if self.events:
                    self.events.finish()
            finally:
                for name in POINT_ENV:
                    os.environ.pop(name, None)

    def check(self) -> None:
        """The read-back on every host, after the reverts."""
        if self.verify:
            self.verify.check()

    def findings(self) -> list[Finding]:
        return self.verify.findings() if self.verify else []

    def lines(self) -> list[tuple[bool, str]]:
        """(is a warning, one console line): each host's integrity, each failed event step."""
        found = self.verify.lines() if self.verify else []
        for line in self.events.failed_lines() if self.events else []:
            found.append((True, f"point {self.point.key}: {line}"))
        return found
