"""The run's progress on the terminal: one bar for every phase with its ETA, the live view's
lines above it, and the run's lines (points done, phases, warnings). Only cli/ uses it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.progress_bar import ProgressBar
from rich.text import Text

from arraybench.console import err, one_line, out, shown, styled
from arraybench.live.terminal import view_lines
from arraybench.units import format_duration, format_latency, format_size, format_throughput

if TYPE_CHECKING:
    from arraybench.analysis.aggregate import PointMetrics
    from arraybench.live.state import Snapshot
    from arraybench.plan.expand import Point
    from arraybench.run.progress import RunProgress
    from arraybench.store.db import RunRecord

PROGRESS_UNITS = 1000.0  # the bar's length; the model gives the fraction done


class EtaColumn(ProgressColumn):
    """The run's ETA from the progress model, recomputed at every refresh: it counts down
    while a step runs, also one that reports nothing (an interference test)."""

    def __init__(self, observer: ProgressObserver) -> None:
        super().__init__()
        self.observer = observer

    def render(self, task: Task) -> Text:
        model = self.observer.model
        if model is None:
            return Text("ETA –")
        return Text(f"ETA {format_duration(model.eta(time.monotonic()))}")


class ModelBar(BarColumn):
    """The bar from the progress model at every refresh: it grows during silent steps too."""

    def __init__(self, observer: ProgressObserver) -> None:
        super().__init__()
        self.observer = observer

    def render(self, task: Task) -> ProgressBar:
        bar = super().render(task)
        model = self.observer.model
        if model is not None:
            bar.completed = model.fraction(time.monotonic()) * PROGRESS_UNITS
        return bar


class LiveProgress(Progress):
    """The progress bar with the live view's lines above it (`live/terminal.py`)."""

    live_lines: tuple[str, ...] = ()

    def get_renderables(self) -> Any:
        if self.live_lines:
            yield Text("\n".join(one_line(line) for line in self.live_lines), no_wrap=True,
                       overflow="crop")  # fmt: skip
        yield from super().get_renderables()


class ProgressObserver:
    """Shows the run as one bar for every phase: what runs now (a point, a round's point,
    preconditioning, a special test), steps done/total, elapsed and an ETA that moves."""

    def __init__(self) -> None:
        self.live = out.is_terminal
        self.progress = LiveProgress(
            TextColumn("{task.description}", markup=False),
            ModelBar(self),
            TextColumn("{task.fields[counts]} steps", markup=False),
            TimeElapsedColumn(),
            EtaColumn(self),
            console=out,
            transient=False,
            disable=not self.live,
        )
        self.task: TaskID | None = None
        self.model: RunProgress | None = None

    def _update(self, description: str | None = None) -> None:
        if self.task is None or self.model is None:
            return
        fields: dict[str, Any] = {"counts": self.model.counts()}
        if description is not None:
            fields["description"] = description
        done = self.model.fraction(time.monotonic()) * PROGRESS_UNITS
        self.progress.update(self.task, completed=done, **fields)

    def _line(self, text: str) -> None:
        """A line above the bar (or, without a terminal, on its own, with the counts)."""
        if self.live:
            self.progress.console.print(shown(text), markup=False)
        else:
            counts = f"[{self.model.counts()}] " if self.model else ""
            print(shown(f"{counts}{text}"), flush=True)

    def campaign_started(self, run: RunRecord, todo: Sequence[Point], skipped: int) -> None:
        from arraybench.plan.load import parse_plan_text
        from arraybench.run.progress import RunProgress

        plan = parse_plan_text(run.plan_yaml, f"{run.folder}/plan.yaml")
        self.model = RunProgress.for_plan(plan, skipped)
        resumed = f", {skipped} already done" if skipped else ""
        left = self.model.eta(time.monotonic())
        out.print(
            styled(
                "run ",
                (run.id, "bold"),
                f": {self.model.total_steps} steps (points, rounds at most, special tests)"
                f"{resumed}, about {format_duration(left)} left; folder {run.folder}",
            )
        )
        self.progress.start()
        self.task = self.progress.add_task("starting", total=PROGRESS_UNITS,
                                           counts=self.model.counts())  # fmt: skip

    def target_preparing(self, path: str, size: int) -> None:
        out.print(f"preparing target {path}: writing {format_size(size)} of random data")

    def point_started(self, point: Point, index: int, total: int) -> None:
        from arraybench.run.outline import OVERHEAD_S

        if self.model is not None:
            self.model.begin(point.key, point.expected_seconds + OVERHEAD_S, time.monotonic())
        where = f"round {point.round} " if point.round else ""
        self._update(f"{where}{point.key}")

    def phase_started(self, kind: str, text: str, expected_s: float) -> None:
        """A phase that is not a grid point: preconditioning, purge, a special test."""
        if self.model is not None:
            self.model.begin(kind, expected_s, time.monotonic())
        self._line(f"{kind}: {text}")
        self._update(kind)

    def phase_finished(self, counts: bool) -> None:
        """counts: a special test (a step, stored as a point); else a phase of seconds only."""
        kind = self.model.current if self.model is not None else "phase"
        if self.model is not None:
            self.model.end(time.monotonic(), counts)
        if counts:
            self._line(f"  {kind}: done")
        self._update()

    def confirm(self, text: str) -> None:
        """An operator action (pull a cable, fail a controller): show it, wait for Enter."""
        self.progress.live_lines = ()  # the question stands alone under the bar
        self.progress.stop()
        out.print(styled("\n", ("ACTION:", "bold yellow"), f" {text}"))
        try:
            input("press Enter once it is done (the time is recorded) ")
        finally:
            self.progress.start()

    def _skip(self, points: Sequence[Point]) -> None:
        from arraybench.run.outline import OVERHEAD_S

        if self.model is not None:
            self.model.skip(len(points), sum(p.expected_seconds + OVERHEAD_S for p in points))
        self._update()

    def points_skipped(self, points: Sequence[Point]) -> None:
        """An adaptive series ended early: its remaining points leave the totals."""
        if not points:
            return
        self._skip(points)
        self._line(f"adaptive: {len(points)} level(s) of {points[0].workload.name} not needed")

    def rounds_ended(self, round_no: int, points: Sequence[Point]) -> None:
        """SNIA rounds steady at `round_no`: the rounds not needed leave the totals."""
        self._skip(points)
        self._line(f"rounds: steady after round {round_no}; {len(points)} point(s) of later "
                   "rounds not needed")  # fmt: skip

    def point_tick(self, point: Point, elapsed_s: float) -> None:
        self._update()

    def point_finished(self, point: Point, metrics: PointMetrics, unit: str) -> None:
        if self.model is not None:
            self.model.end(time.monotonic(), counts=True)
        self._update()
        total = metrics.total
        value = total.iops if unit == "IOPS" else total.mbps
        self._line(
            f"  {point.key}: {format_throughput(value, unit)} @ "
            f"{format_latency(total.lat_mean_us)} mean, p99 {format_latency(total.lat_p99_us)}"
        )

    def live_view(self, snap: Snapshot) -> None:
        """The live lines above the bar, on a terminal; plain progress lines otherwise."""
        if self.live:
            self.progress.live_lines = tuple(view_lines(snap, notes=False)[1:])  # bar: the rest

    def pausing(self, point: Point, seconds: float) -> None:
        if self.model is not None:  # a pause the estimate did not know (GC: as measured)
            self.model.total_s += seconds
            self.model.begin("pause", seconds, time.monotonic())
        self._line(f"  pausing {seconds:.0f}s after {point.key} (bytes written / GC throughput)")
        self._update(f"pause after {point.key}")

    def note(self, text: str) -> None:
        """Something the run did that is no warning (a clean integrity check)."""
        self._line(text)

    def warning(self, text: str) -> None:
        err.print(styled(("warning:", "yellow"), f" {shown(text)}"))

    def stop(self) -> None:
        """Also after SIGHUP: a terminal that is gone must not turn the interruption into an
        I/O error (the run is marked interrupted either way)."""
        with contextlib.suppress(OSError):
            self.progress.stop()
