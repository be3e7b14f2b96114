"""A logged warm-up (`timing.log_ramp`): the ramp run as its own fio phase before the measured
one, so its 1-second samples can be drawn.

fio writes no log sample during `ramp_time`, so a ramp inside the measured job can never be
drawn. With `log_ramp` the point runs fio twice back to back on the same job: first the ramp as
a plain logged run in the point's `warmup/` folder (its samples stored as the point's `warmup`
finding), then the measured job with `ramp_time=0`. The point's figures (fio.json, its samples,
its findings) are the measured run's alone, exactly as with an unlogged ramp; the warm-up is
drawn shaded before them on the point's chart, labelled "warm-up, not in the figures".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from arraybench.engines.base import Engine, RunSpec
from arraybench.finding_kinds import WARMUP
from arraybench.plan.expand import Point
from arraybench.records import Finding, Sample

FOLDER = "warmup"


def logs_ramp(point: Point) -> bool:
    """Whether this point runs its ramp as a logged phase: asked for, a ramp to run, and none
    of the sidecars (events, verify) whose times are counted from the one fio start."""
    sidecars = bool(point.workload.events) or point.workload.verify is not None
    return point.timing.log_ramp and point.timing.ramp > 0 and not sidecars


def measured_point(point: Point) -> Point:
    """The point's measured job: the same point with no ramp (the warm-up ran before it)."""
    return replace(point, timing=point.timing.model_copy(update={"ramp": 0.0}))


def warmup_point(point: Point) -> Point:
    """The warm-up job: the point's load for `ramp` seconds, all logged, never ended early."""
    timing = point.timing.model_copy(
        update={"ramp": 0.0, "duration": point.timing.ramp, "steady": None}
    )
    return replace(point, timing=timing)


def run_warmup(
    point: Point,
    folder: Path,
    sizes: Mapping[str, int],
    *,
    title: str,
    engine: Engine,
    on_tick: Callable[[float], None] | None = None,
    pins: Mapping[str, int] | None = None,
) -> Finding:
    """Run the warm-up phase in `folder`/warmup and return its samples as a `warmup` finding."""
    place = folder / FOLDER
    place.mkdir(parents=True, exist_ok=True)
    warm = warmup_point(point)
    job = place / engine.job_name
    job.write_text(engine.point_job(warm, sizes, title=f"{title}, warm-up"))
    spec = RunSpec(f"{point.key} (warm-up)", engine.watchdog_seconds(warm.expected_seconds),
                   on_tick=on_tick, pins=dict(pins or {}))  # fmt: skip
    engine.run(job, spec)  # the targets as checked (TargetGuard.pinned), as the measured job's
    return WARMUP.new({"seconds": point.timing.ramp, "samples": warmup_rows(engine.samples(place))})


def warmup_rows(samples: list[Sample]) -> list[list[float | None]]:
    """The `warmup` finding's rows: [t, read_iops, write_iops, read_mbps, write_mbps,
    read_lat_us, write_lat_us] per logged second (on many hosts: the hosts' totals)."""
    return [
        [s.t, s.read_iops, s.write_iops, s.read_mbps, s.write_mbps, s.read_lat_us, s.write_lat_us]
        for s in samples
    ]
