"""A frontend region (the first `frontend_blocks` x bs of each target) that is in fact the
whole target: said, since its figures are then the backend's too (a small target, a scaled
run), and a reader comparing frontend with backend would see a cache effect that is not."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from arraybench.finding_kinds import PROVENANCE
from arraybench.report.model import Internal, ReportModel
from arraybench.report.sections.inputs import RunInputs
from arraybench.store.db import Finding, PointRecord
from arraybench.units import format_size

# a customer's report: the finding without the plan's key to change (report/audience.py)
INTERNAL = (Internal(r"; use a larger target or fewer frontend_blocks"),)

if TYPE_CHECKING:
    from arraybench.plan.model import Plan


def smallest_target(findings: Sequence[Finding]) -> int | None:
    """The smallest target's size in bytes, as the run's provenance recorded it."""
    sizes = [int(t["size_bytes"]) for d in PROVENANCE.among(list(findings))
             for t in d["targets"] if t.get("size_bytes")]  # fmt: skip
    return min(sizes) if sizes else None


def whole_target_notes(
    plan: Plan | None, points: Sequence[PointRecord], findings: Sequence[Finding]
) -> list[str]:
    """One line per frontend workload whose region covers its smallest target whole."""
    smallest = smallest_target(findings)
    if plan is None or smallest is None:
        return []
    used = {p.workload for p in points if p.region == "frontend"}
    notes = []
    for w in plan.workloads:
        front = w.frontend_blocks * w.bs
        if w.name in used and w.region == "frontend" and front >= smallest:
            notes.append(f"{w.name}: its frontend region ({w.frontend_blocks:,} x "
                         f"{format_size(w.bs)} = {format_size(front)}) is the whole target "
                         f"({format_size(smallest)}): its figures are the backend's too, not "
                         "a cache's; use a larger target or fewer frontend_blocks")  # fmt: skip
    return notes


def section(model: ReportModel, run: RunInputs) -> None:
    model.notes += whole_target_notes(run.plan, run.once, run.findings)
