"""`plan check` and `hosts check`: what a run of a plan would do, and whether its hosts are
ready, without running anything."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arraybench.errors import PlanError

if TYPE_CHECKING:
    from arraybench.hosts.server import HostCheck, HostSpec
    from arraybench.plan.expand import Point
    from arraybench.plan.model import Plan
    from arraybench.run.data_reduction import WorkloadSample
    from arraybench.run.outline import Outline, TargetFacts
    from arraybench.run.request import PlanRequest


@dataclass(frozen=True)
class PlanCheck:
    plan: Plan
    outline: Outline
    facts: TargetFacts
    tuning: list[str]  # the host tuning the run applies (and restores after it)
    points: list[Point]  # the grid's points, outside the rounds
    per_round: list[Point]  # each SNIA round's points (none without rounds)
    jobs: list[tuple[str, str]]  # (whose, job file text) for the points shown
    data: list[WorkloadSample] | None = None  # `--data`: each writing workload's sample


def check_plan(
    request: PlanRequest, results: Path, all_jobs: bool, data: bool = False
) -> PlanCheck:
    """The plan asked for, with the verdict `run` gives (a target or tuning value it would
    refuse is refused here), the phases with their time, the points and their job files (the
    first of each workload unless `all_jobs`); with `data`, each writing workload's data
    sampled through fio into a scratch folder under `results` and measured."""
    from arraybench.engines.fio.jobfile import render_jobfile
    from arraybench.engines.registry import engine_for
    from arraybench.events.tuning import change_lines, plan_changes
    from arraybench.plan.expand import check_resolved, expand, host_point, round_points
    from arraybench.run.fleet import host_spec
    from arraybench.run.outline import plan_outline, target_facts
    from arraybench.run.request import requested_plan
    from arraybench.run.setup import scratch_path

    plan = requested_plan(request, results)
    check_resolved(plan)
    tuning = change_lines(plan_changes(plan, host_spec))  # a value the device refuses stops here
    facts = target_facts(plan, scratch_path(results))
    outline = plan_outline(plan, facts)
    points = expand(plan)
    per_round = round_points(plan, 1) if plan.rounds else []
    every = [*plan.targets, *(t for h in plan.hosts for t in h.targets)]
    sizes = {t.path: t.size or facts.blocks.get(t.path, 0) for t in every}
    hosts = {h.name: h for h in plan.hosts}
    jobs = []
    every_point = [*points, *per_round]
    for point in every_point if all_jobs else _first_of_each_workload(every_point):
        first = point.level.hosts[0] if point.level.hosts else None
        if first is None:
            jobs.append((point.key, engine_for(plan.engine).point_job(point, sizes)))
        else:  # each host runs its own job file on its own targets: the first one's shown
            job = render_jobfile(host_point(point, hosts[first]), sizes)
            jobs.append((f"{point.key} on {first}", job))
    samples = _data_samples(plan, results) if data else None
    return PlanCheck(plan, outline, facts, tuning, points, per_round, jobs, samples)


def _data_samples(plan: Plan, results: Path) -> list[WorkloadSample]:
    from arraybench.run.data_reduction import sample_workloads

    return sample_workloads(plan, results / "scratch")


def _first_of_each_workload(points: Sequence[Point]) -> list[Point]:
    seen: set[str] = set()
    chosen = []
    for point in points:
        if point.workload.name not in seen:
            seen.add(point.workload.name)
            chosen.append(point)
    return chosen


@dataclass(frozen=True)
class HostsCheck:
    plan_name: str
    hosts: list[tuple[HostSpec, HostCheck]]

    @property
    def ok(self) -> bool:
        return all(check.ok for _, check in self.hosts)


def check_plan_hosts(name: str, overrides: list[str]) -> HostsCheck:
    """Every host of the plan: reachable, its fio version, clock offset, targets."""
    from arraybench.engines.fio.runner import fio_binary, fio_version
    from arraybench.hosts import check_hosts
    from arraybench.plan import catalog
    from arraybench.run.fleet import host_spec, host_targets, target_safety
    from arraybench.run.plan_values import check_plan_values

    plan = catalog.resolve(name, overrides)
    check_plan_values(plan)
    if not plan.hosts:
        raise PlanError(f"{name}: the plan declares no hosts", "add a `hosts:` list")
    fio = fio_binary()
    specs = [host_spec(h) for h in plan.hosts]
    checks = check_hosts(specs, fio_version(fio), host_targets(plan), binary=fio,
                         safety=target_safety(plan))  # fmt: skip
    return HostsCheck(plan.name, list(zip(specs, checks, strict=True)))
