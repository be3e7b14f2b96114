"""Terminal output: the progress bar with ETA, result tables, warnings. Only cli.py uses it.

No string is ever read as rich markup: names, paths, labels and messages come from users and
may hold `[/]` or `[bold]`. Both consoles have markup (and emoji codes) off, so every string
printed, in a table, a title or a rule is shown as it is; arraybench's own styling is built
from Text pieces (`styled`), never from markup text."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from arraybench.analysis.aggregate import PointMetrics
from arraybench.plan.expand import Point
from arraybench.report.model import ReportModel
from arraybench.store.db import RunRecord
from arraybench.units import format_duration, format_latency, format_size, format_throughput

OVERHEAD_S = 0.7  # per point: fio start-up, parsing, commit

# a pipe or a CI log is not 80 columns wide: keep the tables whole there
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160,
              markup=False, emoji=False)  # fmt: skip
err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False, emoji=False)

# a message is one line: control characters of user strings are shown escaped
_CONTROL = {c: f"\\x{c:02x}" for c in [*range(32), 127]} | {10: "\\n", 13: "\\r", 9: "\\t"}


def styled(*parts: str | tuple[str, str]) -> Text:
    """Text from plain strings and (string, style) pairs; nothing in them is markup."""
    return Text.assemble(*parts)


MAX_ERROR_CHARS = 1000  # a message quoting a huge user string stays readable


def one_line(text: str) -> str:
    """The text on one line (control characters escaped), its middle cut when very long."""
    text = text.translate(_CONTROL)
    if len(text) <= MAX_ERROR_CHARS:
        return text
    cut = len(text) - MAX_ERROR_CHARS
    return f"{text[:700]}[... {cut} characters ...]{text[-(MAX_ERROR_CHARS - 700) :]}"


class ProgressObserver:
    """Shows the campaign as a bar: current point, points done/total, elapsed and ETA."""

    def __init__(self) -> None:
        self.live = out.is_terminal
        self.progress = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            TextColumn("{task.fields[done]}/{task.fields[npoints]} points", markup=False),
            TimeElapsedColumn(),
            TextColumn("ETA", markup=False),
            TimeRemainingColumn(),
            console=out,
            transient=False,
            disable=not self.live,
        )
        self.task: TaskID | None = None
        self.base = 0.0
        self.done = 0
        self.total = 0

    def campaign_started(self, run: RunRecord, todo: Sequence[Point], skipped: int) -> None:
        estimate = sum(p.expected_seconds + OVERHEAD_S for p in todo)
        self.total = len(todo)
        resumed = f", {skipped} already done" if skipped else ""
        out.print(styled("run ", (run.id, "bold"), f": {len(todo)} points{resumed}, "
                         f"about {format_duration(estimate)}; folder {run.folder}"))  # fmt: skip
        self.progress.start()
        self.task = self.progress.add_task("starting", total=estimate, done=0, npoints=self.total)

    def target_preparing(self, path: str, size: int) -> None:
        out.print(f"preparing target {path}: writing {format_size(size)} of random data")

    def point_started(self, point: Point, index: int, total: int) -> None:
        if self.task is not None:
            self.progress.update(self.task, description=f"[{index}/{total}] {point.key}")

    def confirm(self, text: str) -> None:
        """An operator action (pull a cable, fail a controller): show it, wait for Enter."""
        self.progress.stop()
        out.print(styled("\n", ("ACTION:", "bold yellow"), f" {text}"))
        try:
            input("press Enter once it is done (the time is recorded) ")
        finally:
            self.progress.start()

    def points_skipped(self, points: Sequence[Point]) -> None:
        """An adaptive series ended early: its remaining points leave the estimate."""
        if not points:
            return
        self.total -= len(points)
        if self.task is not None:
            saved = sum(p.expected_seconds + OVERHEAD_S for p in points)
            total = self.progress.tasks[0].total or 0.0
            self.progress.update(self.task, total=max(self.base, total - saved),
                                 npoints=self.total)  # fmt: skip
        out.print(f"adaptive: {len(points)} level(s) of {points[0].workload.name} not needed")

    def point_tick(self, point: Point, elapsed_s: float) -> None:
        if self.task is not None:
            step = min(elapsed_s, point.expected_seconds + OVERHEAD_S)
            self.progress.update(self.task, completed=self.base + step)

    def point_finished(self, point: Point, metrics: PointMetrics, unit: str) -> None:
        self.base += point.expected_seconds + OVERHEAD_S
        self.done += 1
        if self.task is not None:
            self.progress.update(self.task, completed=self.base, done=self.done)
        total = metrics.total
        value = total.iops if unit == "IOPS" else total.mbps
        line = (
            f"  {point.key}: {format_throughput(value, unit)} @ "
            f"{format_latency(total.lat_mean_us)} mean, p99 {format_latency(total.lat_p99_us)}"
        )
        if self.live:
            self.progress.console.print(line)
        else:
            print(f"[{self.done}/{self.total}]{line}", flush=True)

    def pausing(self, point: Point, seconds: float) -> None:
        line = f"  pausing {seconds:.0f}s after {point.key} (bytes written / GC throughput)"
        if self.live:
            self.progress.console.print(line)
        else:
            print(line, flush=True)

    def warning(self, text: str) -> None:
        err.print(styled(("warning:", "yellow"), f" {text}"))

    def stop(self) -> None:
        """Also after SIGHUP: a terminal that is gone must not turn the interruption into an
        I/O error (the run is marked interrupted either way)."""
        with contextlib.suppress(OSError):
            self.progress.stop()


def summary_table(model: ReportModel) -> Table:
    table = Table(
        title=f"{model.title} — optimal @ latency / max, min latency ({model.run_id})",
        show_lines=True,
    )
    table.add_column("Workload", style="bold")
    for column in model.summary_columns:
        table.add_column(column, justify="center")
    for row in model.summary:
        cells = []
        for column in model.summary_columns:
            cell = row.cells.get(column)
            cells.append(
                styled((cell.optimal, "bold"), f"\n{cell.extremes}\n", (cell.bounded, "dim"))
                if cell
                else "–"
            )
        table.add_row(row.workload, *cells)
    return table


def print_model(model: ReportModel) -> None:
    """The result tables a run ends with: the summary, then any method-specific tables."""
    if model.summary:
        out.print(summary_table(model))
    for extra in [*model.tables, *model.verdicts]:
        table = Table(title=extra.title, caption=extra.caption or None)
        for column in extra.columns:
            table.add_column(column)
        for row in extra.rows:
            table.add_row(*row)
        out.print(table)
    for note in model.notes:
        out.print(styled(("note:", "yellow"), f" {note}"))


def print_error(message: str) -> None:
    """One line on stderr; a closed terminal (SIGHUP) must not turn it into a traceback."""
    with contextlib.suppress(OSError):
        err.print(styled(("error:", "red"), f" {one_line(message)}"), soft_wrap=True)


def is_tty() -> bool:
    return sys.stdout.isatty()
