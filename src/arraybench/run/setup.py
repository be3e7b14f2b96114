"""Before a campaign's first point: engines, targets, the run's record and settings, and
the conditioning (purge, precondition) it runs once."""

from __future__ import annotations

import platform
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from arraybench import __version__
from arraybench.engines.base import Engine, EngineFacts
from arraybench.errors import FioMissingError, PlanError
from arraybench.finding_kinds import PRECONDITION, PURGE
from arraybench.plan.expand import Point
from arraybench.plan.feasible import check_target_sizes
from arraybench.plan.model import Plan
from arraybench.records import RunRecord
from arraybench.run.context import Observer, RunContext, RunSettings
from arraybench.run.outline import write_seconds
from arraybench.run.record import now_iso
from arraybench.run.scenarios import run_label
from arraybench.targets.actions import check_host_phases, target_uses, writers_of
from arraybench.targets.condition import purge_lines, purge_target, run_precondition
from arraybench.targets.guard import TargetGuard
from arraybench.targets.prepare import file_size, needs_layout

SCRATCH_NAME = "arraybench-scratch.dat"


@dataclass(frozen=True)
class PreparedTargets:
    sizes: dict[str, int]  # target path -> bytes fio may use
    kinds: dict[str, str]  # target path -> "file", "new-file" or "block" (local targets)


def scratch_path(results_dir: Path) -> str:
    return str((results_dir / "scratch" / SCRATCH_NAME).resolve())


def plan_yaml(plan: Plan) -> str:
    """The plan as the user set it (defaults left out): read back on `--resume` it is the same
    plan, also for what depends on a key being given (a workload's family names its `region`
    only when the plan gave one; with every default dumped, resumed points got another)."""
    data = plan.model_dump(mode="json", exclude_none=True, exclude_unset=True)
    return yaml.safe_dump(data, sort_keys=False)


def configure(plan: Plan) -> RunSettings:
    """The plan's campaign-wide settings, for a new run and a resumed one alike."""
    return RunSettings(
        gc_rate=float(plan.gc_throughput) if plan.gc_throughput else None,
        monitor=plan.monitor,
        on_host_failure=plan.on_host_failure,
        allow_destroy=tuple(plan.allow_destroy),
        max_start_spread_s=plan.max_start_spread,
    )


def check_engines(points: Sequence[Point], facts: EngineFacts) -> None:
    """Every point's ioengine is one this engine has (`Engine.check`)."""
    engines = facts.ioengines
    for point in points:
        if engines and point.ioengine not in engines:
            raise FioMissingError(
                f"point {point.key}: ioengine {point.ioengine!r} is not available in this "
                f"{facts.name}",
                f"use one of: {', '.join(sorted(engines))}",
            )


def prepare_targets(
    plan: Plan, points: Sequence[Point], engine: Engine, guard: TargetGuard, observer: Observer,
    results_dir: Path,
) -> PreparedTargets:  # fmt: skip
    """Safety-check every target, create missing files; return target sizes in bytes.
    The check judges each target by every phase that writes it (`targets.actions`)."""
    check_host_phases(plan)
    if plan.hosts:  # the targets live on the hosts: the fleet inspects them at start
        every = [*plan.targets, *(t for h in plan.hosts for t in h.targets)]
        return PreparedTargets({t.path: t.size for t in every if t.size}, {})
    writers = writers_of(target_uses(plan))
    sizes: dict[str, int] = {}
    kinds: dict[str, str] = {}
    scratch = scratch_path(results_dir)
    if any(t.path == scratch for t in plan.targets):
        Path(scratch).parent.mkdir(parents=True, exist_ok=True)
    for target in plan.targets:
        phase = writers.get(target.path, "")
        info = guard.check(target.path, writes=bool(phase), allow_destroy=plan.allow_destroy,
                           direct=any(p.direct for p in points), phase=phase)  # fmt: skip
        kinds[target.path] = info.kind
        if info.kind != "new-file":  # arraybench creates new files itself, just below
            for text in info.warnings:
                observer.warning(text)
        if info.kind == "block":
            sizes[target.path] = info.size_bytes or 0
            continue
        want = target.size or (info.size_bytes or 0)
        if want <= 0:
            raise PlanError(
                f"target {target.path}: a new file needs a size", "add `size: 1g` to the target"
            )
        path = Path(target.path)
        if needs_layout(path, want):
            observer.target_preparing(target.path, want)
            guard.lay_out(target.path, want, engine)
        sizes[target.path] = min(want, file_size(path))
    check_target_sizes(plan, sizes)  # as plan check does: never found by fio mid-run
    return PreparedTargets(sizes, kinds)


def run_record(plan: Plan, run_id: str, scale: float, total: int, results_dir: Path) -> RunRecord:
    return RunRecord(
        id=run_id,
        plan_name=plan.name,
        scenario=run_label(plan.scenario, plan.scenarios),
        labels=dict(plan.labels),
        plan_yaml=plan_yaml(plan),
        folder=str(results_dir / "runs" / run_id),
        scale=scale,
        status="running",
        started=now_iso(),
        finished=None,
        total_points=total,
        engine_version=None,
        arraybench_version=__version__,
        host=socket.gethostname(),
        kernel=platform.release(),
        targets=[t.path for t in plan.targets]
        + [f"{h.name}:{t.path}" for h in plan.hosts for t in h.targets],
        latency_bound_us=plan.latency_bound.value * 1e6,
        latency_stat=plan.latency_bound.stat,
    )


def condition(ctx: RunContext) -> None:
    """Purge and precondition once per run (a resumed run does not repeat them)."""
    run, plan, sizes, store = ctx.run, ctx.plan, ctx.sizes, ctx.store
    kinds = {f.kind for f in store.findings(run.id)}
    if plan.purge and PURGE.name not in kinds:
        ctx.observer.phase_started("purge", "blkdiscard of the block devices", 1.0)
        with ctx.guard.pinned(t.path for t in plan.targets) as pins:  # what blkdiscard opens
            results = [purge_target(t.path, ctx.target_kinds.get(t.path, "file"), pins.get(t.path))
                       for t in plan.targets]  # fmt: skip
        ctx.observer.phase_finished(False)
        for line in purge_lines(results):
            ctx.observer.warning(line)
        store.add_finding(run.id, PURGE.new({"targets": results}))
    if plan.precondition and PRECONDITION.name not in kinds:
        written = sum(sizes.values()) * plan.precondition.passes
        passes = plan.precondition.passes
        ctx.observer.phase_started("precondition", f"writing the targets {passes:g} times over",
                                   write_seconds(written))  # fmt: skip
        folder = Path(run.folder) / "precondition"
        ctx.guard.recheck(t.path for t in plan.targets)
        with ctx.guard.pinned(t.path for t in plan.targets) as pins:
            done = run_precondition(plan, plan.precondition, sizes, folder, ctx.engine, pins)
        ctx.observer.phase_finished(False)
        store.add_finding(run.id, PRECONDITION.new(done))
