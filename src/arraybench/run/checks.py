"""`plan check` and `hosts check`: what a run of a plan would do, and whether its hosts are
ready, without running anything."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arraybench.errors import PlanError

if TYPE_CHECKING:
    from arraybench.engines.fio.features import FeatureUse
    from arraybench.hosts.server import HostCheck, HostSpec
    from arraybench.plan.expand import Point
    from arraybench.plan.model import Plan
    from arraybench.run.data_reduction import WorkloadSample
    from arraybench.run.outline import Outline, TargetFacts
    from arraybench.run.request import PlanRequest


@dataclass(frozen=True)
class FioFound:
    """The fio a run of the plan would use, and what the plan asks of it."""

    binary: str  # its path ('' when not found)
    version: str  # `fio --version`, or why it is not known
    features: list[FeatureUse]  # each feature the plan asks for, found or not
    hosts: list[tuple[str, str]]  # (host, its fio version or why it is not known yet)


@dataclass(frozen=True)
class PlanCheck:
    plan: Plan
    outline: Outline
    facts: TargetFacts
    tuning: list[str]  # the host tuning the run applies (and restores after it)
    points: list[Point]  # the grid's points, outside the rounds
    per_round: list[Point]  # each SNIA round's points (none without rounds)
    jobs: list[tuple[str, str]]  # (whose, job file text) for the points shown
    fio: FioFound | None = None  # None: the plan runs another engine
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
    from arraybench.plan.feasible import check_target_sizes
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
    sizes = {t.path: t.size or facts.blocks.get(t.path, 0) or _existing_size(t.path)
             for t in every}  # fmt: skip
    check_target_sizes(plan, sizes)  # a device or an existing file too small for a point
    hosts = {h.name: h for h in plan.hosts}
    jobs = []
    every_point = [*points, *per_round]
    can = engine_for(plan.engine).capabilities
    fio = check_fio(plan, every_point) if can.version_features else None
    for point in every_point if all_jobs else _first_of_each_workload(every_point):
        first = point.level.hosts[0] if point.level.hosts else None
        if first is None:
            jobs.append((point.key, engine_for(plan.engine).point_job(point, sizes)))
        else:  # each host runs its own job file on its own targets: the first one's shown
            job = render_jobfile(host_point(point, hosts[first]), sizes)
            jobs.append((f"{point.key} on {first}", job))
    samples = _data_samples(plan, results) if data else None
    return PlanCheck(plan, outline, facts, tuning, points, per_round, jobs, fio, samples)


def check_fio(plan: Plan, points: list[Point]) -> FioFound:
    """The chosen fio (`--fio`, $ARRAYBENCH_FIO, else PATH), each feature the plan asks of it
    (one refusal line, exit 2, for one the run cannot do without), and every running host's
    fio server of the same release (one line naming both, exit 1, when not): fio's client
    and server refuse a peer of another protocol, so the run would fail at its first point."""
    from concurrent.futures import ThreadPoolExecutor

    from arraybench.engines.fio.choice import FIO_ENV, fio_binary
    from arraybench.engines.fio.runner import fio_version
    from arraybench.errors import FioMissingError
    from arraybench.hosts.server import HostError, probe_fio_release
    from arraybench.run.fleet import host_spec
    from arraybench.run.plan_values import check_fio_features

    try:
        binary = fio_binary()
    except FioMissingError as exc:
        if os.environ.get(FIO_ENV):
            raise
        return FioFound("", f"not found ({exc.message})", [], [])
    version = fio_version(binary)
    uses = check_fio_features(plan, points, version)
    specs = [host_spec(h) for h in plan.hosts]
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(specs)))) as pool:
        found = list(pool.map(lambda s: probe_fio_release(s, version, binary), specs))
    mismatched = [problem for _, problem in found if problem]
    if mismatched:
        raise HostError(mismatched[0])
    hosts = [(s.name, v or "no fio server answering yet: checked when the run starts")
             for s, (v, _) in zip(specs, found, strict=True)]  # fmt: skip
    return FioFound(binary, version, uses, hosts)


def _data_samples(plan: Plan, results: Path) -> list[WorkloadSample]:
    from arraybench.run.data_reduction import sample_workloads

    return sample_workloads(plan, results / "scratch")


def _existing_size(path: str) -> int:
    """An existing regular file's size (0 for anything else): fio uses it as it is."""
    with contextlib.suppress(OSError):
        info = os.stat(path)
        if stat.S_ISREG(info.st_mode):
            return info.st_size
    return 0


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
