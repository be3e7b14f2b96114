"""The one shape of whatever runs beside a point's load: the integrity writer (here or on
every host), the events (here or on the hosts), the controller's monitor, the live stream,
the array monitor's window. The point pipeline (`run/point/pipeline.py`) takes each step
for all of a point's sidecars, in their order:

More: docs/internals.md, `run/sidecar.py`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from arraybench.records import Finding
from arraybench.run.load import LoadResult, LoadStart


@dataclass(frozen=True)
class Line:
    """One console line: a warning, or a note (something done that went well)."""

    warning: bool
    text: str


class Sidecar(Protocol):
    def prepare(self, sizes: dict[str, int]) -> dict[str, int]:
        return sizes

    def start(self) -> None:
        return None

    def load_started(self, load: LoadStart) -> None:
        return None

    def tick(self, elapsed_s: float) -> None:
        return None

    def stop(self) -> None:
        return None

    def check(self) -> None:
        return None

    def findings(self, result: LoadResult) -> list[Finding]:
        return []

    def lines(self) -> list[Line]:
        return []


class Sidecars(Sidecar):
    """A point's sidecars, each step taken by every one in order; `stop` by every one even
    when one of them fails (the first failure raised after the last stop)."""

    def __init__(self, items: Sequence[Sidecar]) -> None:
        self.items = list(items)

    def prepare(self, sizes: dict[str, int]) -> dict[str, int]:
        for item in self.items:
            sizes = item.prepare(sizes)
        return sizes

    def start(self) -> None:
        for item in self.items:
            item.start()

    def load_started(self, load: LoadStart) -> None:
        for item in self.items:
            item.load_started(load)

    def tick(self, elapsed_s: float) -> None:
        for item in self.items:
            item.tick(elapsed_s)

    def stop(self) -> None:
        failure: BaseException | None = None
        for item in self.items:
            try:
                item.stop()
            except BaseException as exc:  # the next ones still stop (events reverted)
                failure = failure or exc
        if failure is not None:
            raise failure

    def check(self) -> None:
        for item in self.items:
            item.check()

    def findings(self, result: LoadResult) -> list[Finding]:
        return [f for item in self.items for f in item.findings(result)]

    def lines(self) -> list[Line]:
        return [line for item in self.items for line in item.lines()]
