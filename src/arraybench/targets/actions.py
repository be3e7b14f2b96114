"""What a run will do to each target: the one list the destroy guard decides from.

The guard used to ask "does any workload write?"; a plan whose workloads only read still
writes with its special phases (SNIA preconditioning, a purge with blkdiscard, the
interference test's base load, the integrity writer of `verify`). ``target_uses`` lists, for
every target of every host (the controller is host ``""``), the first phase that writes it,
so the refusal can say which phase would have destroyed what.

More: docs/internals.md, `targets/actions.py`."""

from __future__ import annotations

from dataclasses import dataclass

from arraybench.errors import PlanError
from arraybench.plan.expand import Point, expand, round_points
from arraybench.plan.model import Plan

LOCAL = ""  # the host name of the controller's own targets


@dataclass(frozen=True)
class TargetUse:
    """One target of one host, and the first phase that writes it (None: only read)."""

    host: str  # LOCAL for the controller
    path: str
    writer: str | None

    @property
    def writes(self) -> bool:
        return self.writer is not None


def _points(plan: Plan) -> list[Point]:
    rounds = range(1, plan.rounds.max + 1) if plan.rounds else range(0)
    return expand(plan) + [p for r in rounds for p in round_points(plan, r)]


def _workload_writers(plan: Plan) -> tuple[str | None, str | None]:
    """(the first writing workload's phase, the first verify phase), or None each."""
    workload = verify = None
    for point in _points(plan):
        if workload is None and point.writes:
            workload = f"workload {point.workload.name}"
        if verify is None and point.workload.verify is not None:
            verify = f"verify (workload {point.workload.name})"
    return workload, verify


def _local_uses(plan: Plan, workload: str | None, verify: str | None) -> list[TargetUse]:
    interference = plan.interference
    writes_interference = interference is not None and (
        interference.base_read < 100 or interference.bg_read < 100
    )
    uses = []
    for index, target in enumerate(plan.targets):
        phases = [
            "purge (blkdiscard)" if plan.purge else None,
            "precondition" if plan.precondition else None,
            workload,
            verify if index == 0 else None,
            "interference" if writes_interference and index == 0 else None,
        ]
        uses.append(TargetUse(LOCAL, target.path, next((p for p in phases if p), None)))
    return uses


def target_uses(plan: Plan) -> list[TargetUse]:
    """Every target the run opens, with the first phase that writes it."""
    workload, verify = _workload_writers(plan)
    if not plan.hosts:
        return _local_uses(plan, workload, verify)
    uses = []
    for host in plan.hosts:
        for index, target in enumerate(host.targets or plan.targets):
            phase = workload or (verify if index == 0 else None)
            uses.append(TargetUse(host.name, target.path, phase))
    return uses


def writers_of(uses: list[TargetUse], host: str = LOCAL) -> dict[str, str]:
    """path -> the phase writing it, for one host's targets that are written."""
    return {u.path: u.writer for u in uses if u.host == host and u.writer is not None}


def check_host_phases(plan: Plan) -> None:
    """PlanError when a plan with hosts asks for a phase that only runs on the controller's
    own targets (it would write the hosts' paths on the controller)."""
    if not plan.hosts:
        return
    local_only = [
        ("purge", plan.purge),
        ("precondition", plan.precondition is not None),
        ("interference", plan.interference is not None),
    ]
    for key, asked in local_only:
        if asked:
            raise PlanError(
                f"{key}: runs on the controller's own targets, and this plan's targets are on "
                "its hosts",
                f"remove `{key}` from a plan with `hosts:` (or run it in a plan without hosts)",
            )
