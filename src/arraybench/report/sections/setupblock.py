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
    system = plan.system_under_test.strip()
    rows += [("System under test", system)] if system else []
    if plan.fabric is not None:  # "4 x FC 16G per host, MTU 9000" (the MTU where not 1500)
        mtu = f", MTU {plan.fabric.mtu}" if plan.fabric.mtu != 1500 else ""
        rows.append(("Fabric", f"{' + '.join(plan.fabric.links)} per host{mtu}"))
    if plan.hosts:
        rows.append(("Load hosts", ", ".join(h.name for h in plan.hosts)))
    return rows
