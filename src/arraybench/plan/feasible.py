"""What `run` or fio would refuse, found from the plan alone, before anything is written.

`plan check` and `run` both call `check_runnable` on the plan as it will run (after `--set`,
`--only`, `--target` and `--scale`), so `plan check` never calls valid a plan that `run` then
refuses: more devices in a ladder than targets, more fio jobs than fio runs, more outstanding
I/Os than libaio can set up, block sizes direct I/O cannot move, regions larger than a target
whose size the plan gives, and campaigns too large to list.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from arraybench.errors import PlanError
from arraybench.plan.expand import effective_load, host_sets, in_rounds, target_count, target_need
from arraybench.plan.model import Load, Plan, Workload
from arraybench.plan.types import MAX_JOBS
from arraybench.units import format_size

MAX_POINTS = 100_000  # hus-fmd, the largest template, has about 700
SECTOR = 512  # O_DIRECT moves whole logical sectors; 512 bytes is the smallest there is
DEFAULT_AIO_MAX = 65536  # Linux's default fs.aio-max-nr
_AIO_MAX_NR = Path("/proc/sys/fs/aio-max-nr")


@dataclass(frozen=True)
class Shape:
    """The load of one workload as fio will see it on one host."""

    where: str  # `workloads[3]`, for the error line
    workload: Workload
    load: Load
    counts: list[int]  # device counts of the ladder (the number of targets without one)
    levels: int  # points of the series


def aio_max_nr() -> int:
    """This machine's fs.aio-max-nr: libaio's io_setup fails past it (sum over all jobs)."""
    try:
        return int(_AIO_MAX_NR.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return DEFAULT_AIO_MAX


def _shapes(plan: Plan) -> Iterator[Shape]:
    ntargets = target_count(plan)
    nsets = len(host_sets(plan) or [()])
    for index, workload in enumerate(plan.workloads):
        load = effective_load(plan.load, workload.load)
        if load.devices == "all":
            counts = list(range(1, ntargets + 1))
        else:
            counts = list(load.devices) if load.devices else [ntargets]
        levels = nsets * len(counts) * len(_pairs(load))
        yield Shape(f"workloads[{index}]", workload, load, counts, levels)


def _pairs(load: Load) -> list[tuple[int, int]]:
    if load.pairs is not None:
        return list(load.pairs)
    return [(w, d) for w in (load.workers or [1]) for d in (load.iodepth or [1])]


def _check_size(plan: Plan, shapes: list[Shape]) -> None:
    points = sum(s.levels for s in shapes if not in_rounds(plan, s.workload))
    if plan.rounds:
        per_round = sum(s.levels for s in shapes if in_rounds(plan, s.workload))
        points += per_round * plan.rounds.max
    if points > MAX_POINTS:
        raise PlanError(
            f"the plan has {points} points, more than {MAX_POINTS}",
            "shorten the load ladders or split the campaign into several plans",
        )


def _check_devices(plan: Plan) -> None:
    loads = [("load", plan.load)]
    loads += [(f"workloads[{i}].load", w.load) for i, w in enumerate(plan.workloads) if w.load]
    for where, load in loads:
        if isinstance(load.devices, list) and max(load.devices) > target_count(plan):
            raise PlanError(
                f"{where}.devices: asks for {max(load.devices)} devices but the plan has "
                f"{target_count(plan)} target(s)",
                "add targets (or --target PATH, repeated) or shorten the devices ladder",
            )


def _check_jobs(plan: Plan, shape: Shape, aio_max: int) -> None:
    engine = shape.workload.ioengine or plan.ioengine
    named = f"{shape.where} ({shape.workload.name})"
    for workers, iodepth in _pairs(shape.load):
        for devices in shape.counts:
            jobs = workers * devices if shape.load.spread == "per_target" else workers
            if jobs > MAX_JOBS:
                raise PlanError(
                    f"{named}: {workers} workers on each of {devices} targets make "
                    f"{jobs} fio jobs, and fio runs at most {MAX_JOBS}",
                    "use fewer workers or devices (or spread: shared)",
                )
            if engine == "libaio" and jobs * iodepth > aio_max:
                raise PlanError(
                    f"{named}: {jobs} jobs x iodepth {iodepth} = {jobs * iodepth} "
                    f"outstanding I/Os, more than libaio can set up (fs.aio-max-nr = {aio_max})",
                    "lower workers or iodepth, or raise fs.aio-max-nr with sysctl",
                )


def _check_direct(plan: Plan, workload: Workload, where: str) -> None:
    direct = plan.direct if workload.direct is None else workload.direct
    if direct and workload.bs % SECTOR:
        raise PlanError(
            f"{where}.bs: {workload.bs} bytes is not a multiple of {SECTOR}, and direct I/O "
            "moves whole sectors (fio fails with EINVAL)",
            f"use a multiple of {SECTOR} bytes or direct: false",
        )


def _check_regions(plan: Plan, workload: Workload, where: str) -> None:
    """Against the targets whose size the plan states (devices and existing files are measured
    only when the run starts)."""
    sizes = [t.size for t in plan.targets if t.size] + [
        t.size for h in plan.hosts for t in h.targets if t.size
    ]
    if not sizes:
        return
    smallest = min(sizes)
    if workload.bs > smallest:
        raise PlanError(
            f"{where}.bs: {format_size(workload.bs)} is larger than the smallest target "
            f"({format_size(smallest)})",
            "use a smaller block size or a larger target size",
        )
    first = plan.targets[0].size if plan.targets else None
    if workload.verify and first and workload.verify.region >= first:
        raise PlanError(
            f"{where}.verify.region: {format_size(workload.verify.region)} leaves nothing of the "
            f"first target ({format_size(first)}) for the load",
            "use a smaller region or a larger target",
        )


def check_target_sizes(plan: Plan, sizes: Mapping[str, int]) -> None:
    """PlanError when a target (its stated size, or `sizes`: files and devices as measured)
    is too small for a point's regions (expand.target_need): fio would find it mid-run."""
    hosts = [t for h in plan.hosts for t in h.targets]
    for index, target in enumerate([*plan.targets, *hosts]):
        size = target.size or sizes.get(target.path, 0)
        need = target_need(plan, first=index == 0)
        if size <= 0 or need is None or need.size <= size:
            continue
        raise PlanError(
            f"target {target.path}: {format_size(size)} is too small: {need.why} need "
            f"{format_size(need.size)} on each target, and fio cannot grow a target mid-run",
            f"give a target of at least {format_size(need.size)} (size: for a file "
            "arraybench creates), or fewer workers, or a smaller block size",
        )


def _check_timing(plan: Plan, workload: Workload, where: str) -> None:
    timing = workload.timing or plan.timing
    if timing.steady and timing.steady.window > timing.duration:
        raise PlanError(
            f"{where}: the steady-state window ({timing.steady.window:g}s) is longer than the "
            f"point ({timing.duration:g}s), so the point could never end steady",
            "shorten timing.steady.window or lengthen timing.duration",
        )
    end = timing.ramp + timing.duration
    for number, event in enumerate(workload.events):
        if event.at is not None and event.at >= end:
            raise PlanError(
                f"{where}.events[{number}].at: {event.at:g}s is after the point ends "
                f"({end:g}s of ramp and duration)",
                "give an offset within the point, or lengthen its timing "
                "(--scale shortens points, not event offsets)",
            )


def _check_expectations(plan: Plan) -> None:
    hosts = max(len(plan.hosts), 1)
    for number, expectation in enumerate(plan.acceptance):
        if expectation.hosts and expectation.hosts > hosts:
            raise PlanError(
                f"acceptance[{number}].hosts: {expectation.hosts} hosts, but the plan has "
                f"{hosts}: no point could ever be measured on that many",
                "use a host count the plan has, or drop `hosts`",
            )


def check_runnable(plan: Plan, aio_max: int | None = None) -> None:
    """Raise a PlanError for the first thing `run` or fio would refuse in this plan."""
    if plan.rounds and not any(w.name == plan.rounds.track for w in plan.workloads):
        raise PlanError(
            f"rounds.track: the tracked workload {plan.rounds.track!r} is not in the plan "
            "(left out by --only?)",
            "keep it in the run or track another repeated workload (--set rounds.track=NAME)",
        )
    _check_devices(plan)
    shapes = list(_shapes(plan))
    _check_size(plan, shapes)
    limit = aio_max if aio_max is not None else aio_max_nr()
    for shape in shapes:
        _check_jobs(plan, shape, limit)
        _check_direct(plan, shape.workload, shape.where)
        _check_regions(plan, shape.workload, shape.where)
        _check_timing(plan, shape.workload, shape.where)
    check_target_sizes(plan, {})  # the sizes the plan states; measured ones: run/checks.py
    _check_expectations(plan)
