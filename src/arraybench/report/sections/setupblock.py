"""The set-up block's rows from the plan: who the results are for (`customer:`), the system
under test, the fabric between the hosts and the storage, and the load hosts. Every format
draws them first in its set-up; a customer's report is titled by the system under test."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arraybench.report.model import ReportModel
from arraybench.report.sections.inputs import RunInputs

if TYPE_CHECKING:
    from arraybench.plan.model import Plan


def section(model: ReportModel, run: RunInputs) -> None:
    model.setup = setup_rows(run.plan)


def setup_rows(plan: Plan | None) -> list[tuple[str, str]]:
    """(label, value) for each of customer, system under test, fabric and hosts the plan
    names; none for an import (no plan)."""
    if plan is None:
        return []
    rows = [("Customer", plan.customer)] if plan.customer else []
    system = system_under_test(plan)
    rows += [("System under test", system)] if system else []
    if plan.fabric is not None:
        rows.append(("Fabric", f"{', '.join(plan.fabric.links)} per host, MTU {plan.fabric.mtu}"))
    if plan.hosts:
        rows.append(("Load hosts", ", ".join(h.name for h in plan.hosts)))
    return rows


def system_under_test(plan: Plan) -> str:
    """The plan's `system_under_test:` in one line (its text, or a record's values joined),
    "" when the plan has none. Read without assuming its form: the key is described in
    docs/plan.md, its shape owned by the plan model."""
    value = getattr(plan, "system_under_test", None)
    if not value:
        return ""
    if isinstance(value, str):
        return value
    fields = value.model_dump(exclude_none=True) if hasattr(value, "model_dump") else {}
    return ", ".join(str(v) for v in fields.values() if v not in ("", None, [], {})) or str(value)
