"""One point of a campaign, wherever its load runs: a fresh folder, the executor (here or on
the point's hosts) and its sidecars taken through their steps in order, then the shared
tail (`tail.py`) stores it before this returns (a crash later never loses it)."""

from __future__ import annotations

import shutil
from pathlib import Path

from arraybench.plan.expand import Point
from arraybench.records import RunRecord
from arraybench.run.array_pull import ArrayWindow
from arraybench.run.context import RunContext
from arraybench.run.interrupts import raise_if_swallowed
from arraybench.run.knee_rate import with_knee_rate
from arraybench.run.point.executor import Executor
from arraybench.run.point.hosts import HostsExecutor
from arraybench.run.point.local import LocalExecutor
from arraybench.run.point.tail import store_point
from arraybench.run.record import now_iso
from arraybench.run.sidecar import Sidecar, Sidecars


def point_folder(run: RunRecord, point: Point) -> Path:
    return Path(run.folder) / "points" / f"{point.seq:03d}-{point.key.replace('/', '-')}"


def executor_for(ctx: RunContext, point: Point, folder: Path) -> Executor:
    """Fio on the point's hosts when its level names hosts, else fio here."""
    if point.level.hosts:
        return HostsExecutor(ctx, point, folder)
    return LocalExecutor(ctx, point, folder)


def sidecars_for(ctx: RunContext, point: Point, executor: Executor) -> Sidecars:
    """The executor's sidecars, then the array monitor's window (asked once it is stored)."""
    found: list[Sidecar] = executor.sidecars()
    if ctx.array is not None:
        found.append(ArrayWindow(ctx.array, point.key))
    return Sidecars(found)


def run_point(ctx: RunContext, point: Point) -> None:
    """Run one point and store it before returning."""
    raise_if_swallowed()  # a Ctrl-C that CPython swallowed since the point before
    ctx.store.check_identity()  # a store deleted or replaced meanwhile: stop before measuring
    point = with_knee_rate(ctx, point)  # a rate_of's knee, measured by now: its rate
    folder = point_folder(ctx.run, point)
    if folder.exists():  # left by an interrupted attempt: start it afresh
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    started = now_iso()
    executor = executor_for(ctx, point, folder)
    sidecars = sidecars_for(ctx, point, executor)
    sizes = sidecars.prepare(ctx.sizes)  # verify's regions kept out of the load
    warmup = executor.warm_up(sizes)
    try:
        sidecars.start()
        executor.run(sizes, sidecars)
    finally:
        sidecars.stop()  # writers stopped, events reverted, whatever happened
    sidecars.check()  # then the read-back
    result = executor.result()
    if warmup is not None:
        result.findings.append(warmup)
    store_point(ctx, point, folder, started, result, sidecars)
