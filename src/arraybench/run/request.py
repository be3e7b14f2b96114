"""The plan a command asks for: a template or file with --set, --only, --target, --repeat,
--allow-destroy and --scale applied, checked before anything runs (`run`, `plan check`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from arraybench.errors import PlanError, StoreError

if TYPE_CHECKING:
    from arraybench.plan.model import Plan
    from arraybench.store.db import Store


@dataclass(frozen=True)
class PlanRequest:
    """What the command line says about the plan (None: the default template)."""

    plan: str | None = None
    overrides: list[str] = field(default_factory=list)
    only: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    scale: float = 1.0
    repeat: int | None = None
    allow_destroy: list[str] = field(default_factory=list)


def requested_plan(request: PlanRequest, results: Path) -> Plan:
    """The plan as the user asked, scaled; PlanError for a value fio, ssh or a host would
    misread (said here, before anything runs)."""
    from arraybench.plan import catalog
    from arraybench.plan.expand import scale_plan, select, with_targets
    from arraybench.run.plan_values import check_plan_values
    from arraybench.run.setup import scratch_path

    if not request.scale > 0:
        raise PlanError(f"--scale {request.scale:g}: the factor must be positive",
                        "e.g. --scale 0.2")  # fmt: skip
    repeat = [f"repeat={request.repeat}"] if request.repeat is not None else []
    plan = catalog.resolve(request.plan or catalog.DEFAULT_TEMPLATE,
                           [*request.overrides, *repeat])  # fmt: skip
    plan = select(plan, request.only)
    plan = with_targets(plan, request.targets, scratch_path(results), os.path.exists)
    check_plan_values(plan)
    plan = scale_plan(plan, request.scale)
    if request.allow_destroy:
        plan = plan.model_copy(update={"allow_destroy": [*plan.allow_destroy,
                                                         *request.allow_destroy]})  # fmt: skip
    return plan


LATEST = "latest"  # a run id meaning the newest run of the results directory


def stored_run_id(store: Store, given: str, results: str) -> str:
    """A run id as typed: `latest` is the newest run of the results directory."""
    if given != LATEST:
        return given
    if not (runs := store.list_runs()):
        raise StoreError(f"{LATEST}: no runs in {results} yet", "start one: arraybench run quick")
    return max(runs, key=lambda row: (row[0].started, row[0].id))[0].id
