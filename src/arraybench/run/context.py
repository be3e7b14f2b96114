"""What every step of one run needs, in one typed record, and the observer it reports to."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from arraybench.analysis.aggregate import PointMetrics
from arraybench.engines.base import Engine
from arraybench.engines.live import LiveSecond
from arraybench.events.records import EventRecord
from arraybench.plan.expand import Point
from arraybench.plan.model import Plan
from arraybench.records import RunRecord
from arraybench.run.array_pull import ArrayPull
from arraybench.run.fleet import Fleet
from arraybench.store.db import Store
from arraybench.targets.guard import TargetGuard


class Observer(Protocol):
    """What a run reports to. Every step is a method here, called directly (never looked
    up): `live/state.py` `LiveObserver` implements them all; a class that names Observer as
    its base gets these defaults, which show nothing (a note and a phase are said as a
    warning line) and overrides what it shows (a test's recorder what it records)."""

    live_seconds: bool = False  # True: fio's status reports are read (run/live_feed.py)

    def campaign_started(self, run: RunRecord, todo: Sequence[Point], skipped: int) -> None:
        return None

    def target_preparing(self, path: str, size: int) -> None:
        return None

    def point_started(self, point: Point, index: int, total: int) -> None:
        return None

    def point_tick(self, point: Point, elapsed_s: float) -> None:
        return None

    def point_finished(self, point: Point, metrics: PointMetrics, unit: str) -> None:
        return None

    def warning(self, text: str) -> None:
        return None

    def note(self, text: str) -> None:
        """Something the run did that is no warning (a clean integrity check)."""
        self.warning(text)

    def pausing(self, point: Point, seconds: float) -> None:
        return None

    def points_skipped(self, points: Sequence[Point]) -> None:
        return None

    def phase_started(self, kind: str, text: str, expected_s: float) -> None:
        """Preconditioning, a scenario's step, a special test: said as it starts."""
        self.warning(f"{kind}: {text}")

    def phase_finished(self, counts: bool) -> None:
        return None

    def rounds_ended(self, round_no: int, points: Sequence[Point]) -> None:
        return None

    def confirm(self, text: str) -> None:
        """An operator action, asked only when the run is interactive (`prompt_with`)."""
        return None

    def live_second(
        self, point: Point, seconds: Sequence[LiveSecond], left_s: float, source: str = "fio"
    ) -> None:
        """Called only when `live_seconds` is True (run/live_feed.py; run/hosts_live.py with
        `source="kernel"`: a many-host point's disk counters, not fio's)."""
        return None

    def live_event(self, point: Point, record: EventRecord) -> None:
        """Called only when `live_seconds` is True (run/live_feed.py)."""
        return None


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
    # warnings that hold for the whole run, said once (their keys): a GC pause skipped for want
    # of a GC rate is the same news at every point of a 36-point group
    said: set[str] = field(default_factory=set)
    # local block device -> (region bytes, sequential) -> density written so far (run/written.py)
    written: dict[str, dict[tuple[int, bool], float]] = field(default_factory=dict)
    # workload -> how its sampled data missed the ratios asked (run.data_reduction)
    data_misses: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def prompt_with(self) -> Callable[[str], None] | None:
        """How a prompt asks the operator: the observer's `confirm` when the run is
        interactive, else None (the prompts are then assumed, as the plan says)."""
        return self.observer.confirm if self.interactive else None
