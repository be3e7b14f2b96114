"""A point's sidecars are taken through each step in their order, and every one is stopped
even when one of them fails to (a writer's failure must not leave an event applied)."""

from __future__ import annotations

import pytest

from arraybench.run.context import Observer
from arraybench.run.load import LoadResult, LoadStart
from arraybench.run.sidecar import Line, Sidecar, Sidecars


class Step(Sidecar):
    def __init__(self, name: str, log: list[str], fail_stop: bool = False) -> None:
        self.name, self.log, self.fail_stop = name, log, fail_stop

    def prepare(self, sizes: dict[str, int]) -> dict[str, int]:
        return {k: v - 1 for k, v in sizes.items()}  # each keeps a region out

    def load_started(self, load: LoadStart) -> None:
        self.log.append(f"{self.name} started at {load.t0:g}")

    def stop(self) -> None:
        self.log.append(f"{self.name} stopped")
        if self.fail_stop:
            raise RuntimeError(f"{self.name} did not stop")

    def lines(self) -> list[Line]:
        return [Line(False, self.name)]


class Idle(Sidecar):
    """Every step left to the protocol's defaults."""


def test_each_step_in_order_and_sizes_through_every_sidecar() -> None:
    log: list[str] = []
    group = Sidecars([Step("verify", log), Step("events", log), Idle()])
    assert group.prepare({"/t": 10}) == {"/t": 8}
    group.load_started(LoadStart(5.0))
    group.stop()
    assert log == ["verify started at 5", "events started at 5", "verify stopped",
                   "events stopped"]  # fmt: skip
    assert [line.text for line in group.lines()] == ["verify", "events"]
    assert group.findings(LoadResult([], [], 0.0, None)) == []


def test_every_sidecar_stops_and_the_first_failure_is_raised_after() -> None:
    log: list[str] = []
    group = Sidecars([Step("verify", log, fail_stop=True), Step("events", log, fail_stop=True)])
    with pytest.raises(RuntimeError, match="verify did not stop"):
        group.stop()
    assert log == ["verify stopped", "events stopped"]


def test_an_observer_without_notes_or_phases_sees_them_as_warnings() -> None:
    class Warnings(Observer):
        def __init__(self) -> None:
            self.seen: list[str] = []

        def warning(self, text: str) -> None:
            self.seen.append(text)

    observer = Warnings()
    observer.note("point a: integrity clean")
    observer.phase_started("purge", "blkdiscard", 1.0)
    observer.phase_finished(False)
    assert observer.seen == ["point a: integrity clean", "purge: blkdiscard"]
    assert observer.live_seconds is False
