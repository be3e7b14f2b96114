"""One stored point's record, built the same way for a measured point, a special test's point
and an imported result: the series' names, then what fio's jobs say (CPU, steady state)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from arraybench.engines.measurement import Measurement
from arraybench.plan.expand import family_label, mix_label, throughput_unit
from arraybench.plan.model import Workload
from arraybench.point_identity import PointIdentity
from arraybench.records import NewPoint


def now_iso() -> str:
    """A stored time stamp: UTC, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class SeriesNames:
    """What names a point's series in the store and the reports."""

    workload: str
    family: str
    mix: str
    pattern: str
    bs: int
    read_pct: int
    unit: str
    region: str = "backend"


def names_of(workload: Workload, ioengine: str, region: str | None = None) -> SeriesNames:
    """A plan workload's names; `region` overrides the workload's own (imported points)."""
    return SeriesNames(
        workload=workload.name,
        family=family_label(workload, ioengine),
        mix=mix_label(workload.read),
        pattern=workload.pattern,
        bs=workload.bs,
        read_pct=workload.read,
        unit=throughput_unit(workload),
        region=region or workload.region,
    )


@dataclass(frozen=True)
class PointPlace:
    """Where a point stands: its run, order, identity (its key), load level and files."""

    run_id: str
    seq: int
    identity: PointIdentity
    ioengine: str
    workers: int
    iodepth: int
    targets: Sequence[str]
    folder: str
    devices: int | None = None


def new_point(
    place: PointPlace,
    names: SeriesNames,
    jobs: Sequence[Measurement],
    started: str,
    finished: str,
    runtime_s: float,
    engine_version: str | None,
) -> NewPoint:
    """The record of one point; the caller adds what only it knows (`dataclasses.replace`:
    pause, kernel view, hosts), by field name, checked."""
    # fio's per-job CPU % is of one CPU; the sum is the load's CPU use in CPUs x 100
    cpu = [(j.usr_cpu, j.sys_cpu or 0.0) for j in jobs if j.usr_cpu is not None]
    steady = [j.steadystate for j in jobs if j.steadystate]
    attained = int(all(s.get("attained") for s in steady)) if steady else None
    return NewPoint(
        run_id=place.run_id,
        seq=place.seq,
        identity=place.identity,
        family=names.family,
        mix=names.mix,
        pattern=names.pattern,
        bs=names.bs,
        read_pct=names.read_pct,
        region=names.region,
        ioengine=place.ioengine,
        unit=names.unit,
        workers=place.workers,
        iodepth=place.iodepth,
        jobs=len(jobs),
        targets=",".join(place.targets),
        folder=place.folder,
        started=started,
        finished=finished,
        runtime_s=runtime_s,
        engine_version=engine_version,
        usr_cpu=sum(u for u, _ in cpu) if cpu else None,
        sys_cpu=sum(s for _, s in cpu) if cpu else None,
        devices=place.devices,
        steady_attained=attained,
        ended_early=int(bool(attained)) if steady else 0,
    )
