"""Plan -> the ordered list of points to measure. Pure: no I/O."""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from pydantic import ValidationError

from arraybench.errors import PlanError
from arraybench.plan.model import DataPattern, Host, Load, Plan, Target, Timing, Workload
from arraybench.point_identity import PointIdentity, level_name
from arraybench.units import format_size

DEFAULT_SCRATCH_SIZE = 1 << 30
MAX_SCALE = 1000.0


@dataclass(frozen=True)
class Level:
    workers: int  # per host
    iodepth: int
    devices: int | None = None  # a device-count ladder's step: the first N targets
    hosts: tuple[str, ...] = ()  # the hosts that run this level together (empty: local)

    @property
    def outstanding(self) -> int:
        return self.workers * self.iodepth


@dataclass(frozen=True)
class Knee:
    """The optimal point a workload's `rate_of` took its share of (run/knee_rate.py)."""

    run: str  # the run that measured it
    key: str  # its point key
    iops: float  # its total IOPS
    share: int  # the share taken, in %


@dataclass(frozen=True)
class Point:
    """One measurement: a workload at one load level on the plan's targets."""

    seq: int  # position in the campaign, from 1
    workload: Workload
    level: Level
    spread: str  # "shared" or "per_target"
    timing: Timing
    ioengine: str
    direct: bool
    data: DataPattern
    targets: tuple[Target, ...]
    round: int | None = None  # SNIA round number of a repeated workload
    adaptive: str = "off"  # "exact"/"economy": the series' levels are chosen as it runs
    repetition: int = 1  # of `repeat`: the first keeps the plain key (stores stay readable)
    scenario: str | None = None  # the plan's scenario (plan/scenarios.py) it is measured in
    knee: Knee | None = None  # its rate_of, resolved when it starts: the knee it is a share of

    @property
    def series(self) -> tuple[str, int | None, tuple[str, ...], int | None, str | None]:
        """The curve this point belongs to: one workload, device count, host set, round,
        scenario."""
        return (self.workload.name, self.level.devices, self.level.hosts, self.round,
                self.scenario)  # fmt: skip

    @property
    def identity(self) -> PointIdentity:
        level = self.level
        name = level_name(level.workers, level.iodepth, level.devices, len(level.hosts))
        return PointIdentity(self.workload.name, name, self.scenario, self.round, self.repetition)

    @property
    def key(self) -> str:
        return self.identity.key

    @property
    def expected_seconds(self) -> float:
        return self.timing.ramp + self.timing.duration

    @property
    def writes(self) -> bool:
        return self.workload.read < 100


def levels(
    load: Load, ntargets: int = 1, host_sets: list[tuple[str, ...]] | None = None
) -> list[Level]:
    """Host set outermost (one curve per host count), then device count, workers, iodepth."""
    if load.pairs is not None:
        pairs = list(load.pairs)
    else:
        pairs = [(w, d) for w in (load.workers or [1]) for d in (load.iodepth or [1])]
    if load.devices == "all":
        counts: list[int | None] = list(range(1, ntargets + 1))
    else:
        counts = list(load.devices) if load.devices else [None]
    sets = host_sets or [()]
    return [Level(w, d, n, hs) for hs in sets for n in counts for w, d in pairs]


def effective_load(base: Load, own: Load | None) -> Load:
    """A workload's load: what it sets itself, the rest from the plan's `load`."""
    if own is None:
        return base
    inherited = base.model_dump(exclude_none=True)
    if own.pairs is not None:  # pairs replace the plan's workers x iodepth grid
        inherited.pop("workers", None)
        inherited.pop("iodepth", None)
    if own.workers is not None or own.iodepth is not None:
        inherited.pop("pairs", None)
    return Load.model_validate(inherited | own.model_dump(exclude_unset=True))


def select(plan: Plan, patterns: Sequence[str]) -> Plan:
    """Only the workloads whose names match one of the glob patterns (`--only`)."""
    if not patterns:
        return plan
    kept = [w for w in plan.workloads if any(fnmatch.fnmatchcase(w.name, p) for p in patterns)]
    if not kept:
        names = ", ".join(w.name for w in plan.workloads[:8])
        raise PlanError(
            f"--only {' '.join(patterns)}: no workload of plan {plan.name} matches",
            f"workload names are e.g. {names}",
        )
    return plan.model_copy(update={"workloads": kept})


def in_rounds(plan: Plan, workload: Workload) -> bool:
    globs = plan.rounds.workloads if plan.rounds else []
    return any(fnmatch.fnmatchcase(workload.name, g) for g in globs)


def host_sets(plan: Plan) -> list[tuple[str, ...]] | None:
    """The scaling scenarios: the plan's host_sets, or all its hosts at once."""
    if not plan.hosts:
        return None
    if plan.host_sets:
        return [tuple(s) for s in plan.host_sets]
    return [tuple(h.name for h in plan.hosts)]


def expand(plan: Plan) -> list[Point]:
    """Workload-major order, as the reports run them: each curve is measured in one go.

    Workloads repeated in SNIA rounds are not here: `round_points` gives them per round.
    """
    once = [w for w in plan.workloads if not in_rounds(plan, w)]
    return in_scenarios(plan, _points(plan, once, first_seq=1, round_no=None))


def in_scenarios(plan: Plan, points: list[Point]) -> list[Point]:
    """Every point once per scenario, scenario after scenario, numbered on (no scenarios:
    the points as they are)."""
    if not plan.scenarios:
        return points
    n = len(points)
    return [replace(p, scenario=s.name, seq=p.seq + i * n)
            for i, s in enumerate(plan.scenarios) for p in points]  # fmt: skip


def round_points(plan: Plan, round_no: int) -> list[Point]:
    """The repeated workloads' points of round `round_no` (1-based), numbered after the rest."""
    repeated = [w for w in plan.workloads if in_rounds(plan, w)]
    once = len(expand(plan))
    per_round = len(_points(plan, repeated, 1, round_no))
    return _points(plan, repeated, once + (round_no - 1) * per_round + 1, round_no)


def _points(
    plan: Plan, workloads: list[Workload], first_seq: int, round_no: int | None
) -> list[Point]:
    points: list[Point] = []
    for workload in workloads:
        load = effective_load(plan.load, workload.load)
        repeat = 1 if round_no else workload.repeat or plan.repeat
        if repeat > 1 and load.adaptive != "off":
            raise PlanError(f"workload {workload.name}: repeat and an adaptive load do not mix",
                            "set repeat: 1 or load.adaptive: off for it")  # fmt: skip
        ladder = levels(load, target_count(plan), host_sets(plan))
        # the whole ladder once, then again: a drift of the target spreads over every level
        for repetition, level in ((r, lv) for r in range(1, repeat + 1) for lv in ladder):
            points.append(
                Point(
                    seq=first_seq + len(points),
                    workload=workload,
                    level=level,
                    spread=load.spread,
                    timing=workload.timing or plan.timing,
                    ioengine=workload.ioengine or plan.ioengine,
                    direct=plan.direct if workload.direct is None else workload.direct,
                    data=workload.data or plan.data,
                    targets=tuple(plan.targets[: level.devices] if level.devices else plan.targets),
                    round=round_no,
                    adaptive=load.adaptive,
                    repetition=repetition,
                )
            )
    return points


def _scaled_seconds(value: float, factor: float) -> float:
    """Whole seconds, or tenths below 1 s (fio takes 300ms); at least 0.3 s when non-zero."""
    if value <= 0:
        return 0.0
    scaled = value * factor
    return float(round(scaled)) if scaled >= 1 else max(0.3, round(scaled, 1))


def _scaled_size(value: int, factor: float) -> int:
    mib = 1 << 20
    return max(16 * mib, math.ceil(value * factor / mib) * mib)


def scale_plan(plan: Plan, factor: float) -> Plan:
    """Multiply durations and file sizes (`--scale`): whole seconds, at least 1 s and 16 MiB.

    The factor is finite and positive, and the scaled plan is validated again: scaling may not
    carry a value out of its range (a 5 h point at --scale 1000 is more than 30 days).
    """
    if not (math.isfinite(factor) and 0 < factor <= MAX_SCALE):
        raise PlanError(
            f"--scale {factor:g}: the factor must be more than 0 and at most {MAX_SCALE:g}",
            "e.g. --scale 0.1 for a short trial run",
        )
    if factor == 1:
        return plan
    try:
        scaled = _scaled(plan, factor)
        # validated again, but returned as built: a re-validated copy would mark every field
        # as given, and a workload's `load` would then override the plan's with its None's
        Plan.model_validate(scaled.model_dump())
        return scaled
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"] if not str(p).startswith("function"))
        message = str(error["msg"]).removeprefix("Value error, ")
        raise PlanError(
            f"--scale {factor:g}: {where}: {message}", "use a smaller --scale factor"
        ) from None


def _scaled(plan: Plan, factor: float) -> Plan:

    def timing(t: Timing) -> Timing:
        steady = t.steady
        if steady:
            # fio checks steady state once a second: the window stays at least 1 s
            window = max(1.0, _scaled_seconds(steady.window, factor))
            steady = steady.model_copy(update={"window": window})
        return t.model_copy(
            update={
                "ramp": _scaled_seconds(t.ramp, factor),
                "duration": _scaled_seconds(t.duration, factor),
                "steady": steady,
            }
        )

    workloads = [
        w.model_copy(update={"timing": timing(w.timing)}) if w.timing else w for w in plan.workloads
    ]
    # a smaller trial never shrinks a target below what its points need (target_need), up to
    # the size the plan gave: fio cannot grow a file in the middle of a point
    needs = [target_need(plan, first=i == 0) for i in range(len(plan.targets))]
    targets = [
        t.model_copy(update={"size": max(_scaled_size(t.size, factor),
                                         min(t.size, _whole_mib(need.size) if need else 0))})
        if t.size else t
        for t, need in zip(plan.targets, needs, strict=True)
    ]  # fmt: skip
    update: dict[str, object] = {
        "timing": timing(plan.timing), "workloads": workloads, "targets": targets,
    }  # fmt: skip
    if plan.interference:
        interval = max(3.0, round(plan.interference.interval * factor))  # a window needs seconds
        update["interference"] = plan.interference.model_copy(update={"interval": interval})
    if plan.metadata:
        files = max(50, round(plan.metadata.files_per_thread * factor))
        update["metadata"] = plan.metadata.model_copy(update={"files_per_thread": files})
    return plan.model_copy(update=update)


def target_count(plan: Plan) -> int:
    """Targets each load host has: the plan's, or the fewest any host has of its own."""
    counts = [len(h.targets) if h.targets else len(plan.targets) for h in plan.hosts]
    return min(counts) if counts else len(plan.targets)


def host_point(point: Point, host: Host) -> Point:
    """The point as one host runs it: on the host's own targets when it has any."""
    if not host.targets:
        return point
    devices = point.level.devices
    return replace(point, targets=tuple(host.targets[:devices] if devices else host.targets))


@dataclass(frozen=True)
class TargetNeed:
    """The fewest bytes a target must hold for every point of the plan, and why."""

    size: int
    why: str  # "workloads[2] (bw-1m-read): 32 sequential workers x 1 MiB"


def target_need(plan: Plan, first: bool = True) -> TargetNeed | None:
    """What one target (the first one with `first`: it also holds a verify region) must hold.

    Sequential workers each read or write their own stripe of at least one block, one after
    the other (fio's offset_increment), so W workers need W blocks; random workers share the
    region and need one block. fio cannot grow a target in the middle of a point (it is given
    a pinned /dev/fd/N and fails with EPERM on unlink), so a target too small for a point's
    stripes has to be found before the run: made big enough when arraybench creates it, else
    refused by `plan check` (feasible.py).
    """
    need: TargetNeed | None = None
    for index, w in enumerate(plan.workloads):
        load = effective_load(plan.load, w.load)
        pairs = load.pairs or [(n, 1) for n in (load.workers or [1])]
        workers = max(n for n, _ in pairs)
        sequential = w.pattern == "sequential" and workers > 1
        size = workers * w.bs if sequential else w.bs
        why = (f"{workers} sequential workers x {format_size(w.bs)}" if sequential
               else f"one {format_size(w.bs)} block")  # fmt: skip
        if first and w.verify:  # kept at the end of the first target, out of fio's load
            size += w.verify.region
            why += f" + the {format_size(w.verify.region)} verify region"
        if need is None or size > need.size:
            need = TargetNeed(size, f"workloads[{index}] ({w.name}): {why}")
    return need


def _new_file_size(plan: Plan) -> int:
    """A file arraybench creates: the default size, or more when a point needs more."""
    need = target_need(plan)
    return max(DEFAULT_SCRATCH_SIZE, _whole_mib(need.size) if need else 0)


def _whole_mib(size: int) -> int:
    mib = 1 << 20
    return -(-size // mib) * mib


def with_targets(
    plan: Plan, paths: list[str], scratch: str, exists: Callable[[str], bool] = lambda _: False
) -> Plan:
    """Apply `--target` paths, or the default scratch file when the plan names no target.

    New files get the default size, or what the plan's points need when that is more
    (`target_need`; scaled later with the rest of the plan by `scale_plan`, never below that
    need); existing files and devices are used at their own size.
    """
    if paths:
        targets = [_target(p, exists, _new_file_size(plan)) for p in paths]
    elif not plan.targets and not (plan.hosts and all(h.targets for h in plan.hosts)):
        targets = [Target(path=scratch, size=_new_file_size(plan))]
    else:
        return plan
    return plan.model_copy(update={"targets": targets})


def _target(path: str, exists: Callable[[str], bool], new_size: int) -> Target:
    """A `--target` path as a plan target, or one line saying why it cannot be one."""
    try:
        return Target(path=path, size=None if exists(path) else new_size)
    except ValidationError as exc:
        problem = "an empty path" if not path else str(exc.errors()[0]["msg"]).lower()
        raise PlanError(
            f"--target {path[:80]!r}: {problem}",
            "give the path of a file or a block device",
        ) from None


def describe_level(level: Level) -> str:
    return f"{level.workers} workers x qd{level.iodepth}"


def check_resolved(plan: Plan) -> None:
    """What can only be checked once targets are known (after --target and --only): all that
    `run` or fio would refuse (see plan/feasible.py, which builds on this module)."""
    from arraybench.plan.feasible import check_runnable

    check_runnable(plan)


def mix_label(read_pct: int) -> str:
    """Column label of a mix in the reports' tables: Read, Write, R/W 70/30."""
    if read_pct == 100:
        return "Read"
    if read_pct == 0:
        return "Write"
    return f"R/W {read_pct}/{100 - read_pct}"


def family_label(workload: Workload, ioengine: str) -> str:
    """Row label: what a workload is apart from its mix, e.g. `Random 8 KiB (frontend)`."""
    if workload.group:
        return workload.group
    text = f"{workload.pattern.capitalize()} {format_size(workload.bs)}"
    if workload.region == "frontend" or "region" in workload.model_fields_set:
        text += f" ({workload.region})"
    if workload.ioengine:
        text += f" [{ioengine}]"
    return text


def throughput_unit(workload: Workload) -> str:
    metric = workload.metric or ("iops" if workload.pattern == "random" else "mbps")
    return "IOPS" if metric == "iops" else "MB/s"
