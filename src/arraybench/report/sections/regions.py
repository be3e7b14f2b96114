"""A frontend region (the first `frontend_blocks` x bs of each target) that is in fact the
whole target: said, since its figures are then the backend's too (a small target, a scaled
run), and a reader comparing frontend with backend would see a cache effect that is not."""

from __future__ import annotations

from collections.abc import Sequence

from arraybench.finding_kinds import PROVENANCE
from arraybench.plan.load import stored_plan
from arraybench.store.db import Finding, PointRecord, RunRecord
from arraybench.units import format_size


def smallest_target(findings: Sequence[Finding]) -> int | None:
    """The smallest target's size in bytes, as the run's provenance recorded it."""
    sizes = [int(t["size_bytes"]) for d in PROVENANCE.among(list(findings))
             for t in d["targets"] if t.get("size_bytes")]  # fmt: skip
    return min(sizes) if sizes else None


def whole_target_notes(
    run: RunRecord, points: Sequence[PointRecord], findings: Sequence[Finding]
) -> list[str]:
    """One line per frontend workload whose region covers its smallest target whole."""
    plan = stored_plan(run.plan_yaml, f"{run.folder}/plan.yaml")
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
