"""What runs beside one many-host point's fio: its integrity writers on the hosts and its
events (on the hosts over SSH, or on the controller), in the order the local `PointExtras`
keeps: the writers start before the load and the events with it (the hosts' start gate); when
the load ends the writers stop, then the events are reverted, then every host reads its
acknowledged blocks back."""

from __future__ import annotations

import os
from pathlib import Path

from arraybench.plan.expand import Point
from arraybench.run.fleet import HostRun
from arraybench.run.host_events import HostPointEvents
from arraybench.run.host_verify import HostsVerify
from arraybench.run.sidecars import POINT_ENV
from arraybench.store.db import Finding


class HostPointExtras:
    def __init__(
        self,
        point: Point,
        folder: Path,
        verify: HostsVerify | None,
        events: HostPointEvents | None,
    ) -> None:
        self.point = point
        self.folder = str(folder)
        self.verify = verify
        self.events = events

    def prepare(self, sizes: dict[str, int]) -> dict[str, int]:
        """Target sizes for fio's job files (each host's verify region kept out)."""
        return self.verify.prepare(sizes) if self.verify else sizes

    def start(self) -> None:
        """Before the fio client: writers ready on every host."""
        # `run` commands (and their reverts) learn which point they act on
        os.environ.update(dict(zip(POINT_ENV, (self.folder, self.point.key), strict=True)))
        if self.verify:
            self.verify.start()

    def load_started(self, t0: float) -> None:
        """The fleet's start gate (Unix s, the instant every host's I/O starts): the events'
        clock."""
        if self.events:
            self.events.started(t0)

    def stop(self) -> None:
        """Always, after the fio client (also on an exception or Ctrl-C/SIGTERM): the writers
        stop with the load, then the events are reverted on every host."""
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

    def findings(self, result: HostRun) -> list[Finding]:
        """One integrity finding per host; the events finding (the total's and each host's
        dip)."""
        found = self.verify.findings() if self.verify else []
        return found + (self.events.findings(result) if self.events else [])

    def lines(self) -> list[tuple[bool, str]]:
        """(is a warning, one console line): each host's integrity, each failed event step."""
        found = self.verify.lines() if self.verify else []
        for line in self.events.failed_lines() if self.events else []:
            found.append((True, f"point {self.point.key}: {line}"))
        return found
