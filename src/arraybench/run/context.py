"""What every step of one run needs, in one typed record, and the observer it reports to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from arraybench.analysis.aggregate import PointMetrics
from arraybench.engines.base import Engine
from arraybench.plan.expand import Point
from arraybench.plan.model import Plan
from arraybench.records import RunRecord
from arraybench.run.array_pull import ArrayPull
from arraybench.run.fleet import Fleet
from arraybench.store.db import Store
from arraybench.targets.guard import TargetGuard


class Observer(Protocol):
    # beyond these, looked up with getattr where an observer may lack them: confirm, note,
    # phase_started, phase_finished, rounds_ended; live_second and live_event (the live
    # view's: run/live_feed.py calls them only on an observer whose live_seconds is True)
    def campaign_started(self, run: RunRecord, todo: Sequence[Point], skipped: int) -> None: ...
    def target_preparing(self, path: str, size: int) -> None: ...
    def point_started(self, point: Point, index: int, total: int) -> None: ...
    def point_tick(self, point: Point, elapsed_s: float) -> None: ...
    def point_finished(self, point: Point, metrics: PointMetrics, unit: str) -> None: ...
    def warning(self, text: str) -> None: ...
    def pausing(self, point: Point, seconds: float) -> None: ...
    def points_skipped(self, points: Sequence[Point]) -> None: ...


@dataclass(frozen=True)
class RunSettings:
    """The plan's campaign-wide settings, for a new run and a resumed one alike."""

    gc_rate: float | None  # declared in the plan (gc_throughput), if any
    monitor: bool  # sample the targets' devices and CPU beside fio
    on_host_failure: str
    allow_destroy: tuple[str, ...]
    max_start_spread_s: float  # the plan's max_start_spread


@dataclass(frozen=True)
class RunContext:
    """One run: its stored record, its plan (targets resolved), the targets' sizes in bytes,
    the load engine (the plan's `engine:`) and the results folder it writes into; the store,
    the observer, the target guard and the plan's settings every point uses."""

    run: RunRecord
    plan: Plan
    sizes: dict[str, int]
    engine: Engine  # runs every local job (engines.registry chose it)
    results_dir: Path
    store: Store
    observer: Observer
    guard: TargetGuard  # local targets as checked; rechecked before each job
    settings: RunSettings
    target_kinds: dict[str, str]  # target path -> "file", "new-file" or "block"
    interactive: bool = False  # prompts ask the operator (observer.confirm) when True
    fleet: Fleet | None = None  # the plan's hosts, once started
    array: ArrayPull | None = None  # the plan's array_monitor sources, once started

    def notify(self, name: str, *args: Any) -> None:
        """Progress beyond the Observer protocol (phases, rounds ended): observers that do
        not show progress need not know them."""
        method = getattr(self.observer, name, None)
        if method is not None:
            method(*args)

    def phase(self, kind: str, text: str, expected_s: float) -> None:
        method = getattr(self.observer, "phase_started", None)
        if method is not None:
            method(kind, text, expected_s)
        else:  # an observer without phases sees them as before
            self.observer.warning(f"{kind}: {text}")
