"""What this run has written of each local block device, point by point, so that a read point
can say how much of its region no earlier point wrote (analysis/written.py, the
`unwritten-region` remark of analysis/validity.py).

Kept on the run's context as a few running totals per target (so a 30,000-point run costs
nothing per point): per (region size, sequential) the density written, the largest of the
sequential passes (each starts at the region's first block) and the sum of the random ones
(their offsets add up, Poisson). Seeded once from the store, so a resumed run counts what its
first part wrote; preconditioning (or a precondition finding of a resumed run) writes all.
"""

from __future__ import annotations

from collections.abc import Sequence

from arraybench.analysis.written import Written, unwritten_share
from arraybench.finding_kinds import PRECONDITION
from arraybench.plan.expand import Point
from arraybench.records import PointRecord
from arraybench.run.context import RunContext

SEEDED = "written-seeded"  # RunContext.said keys
PRECONDITIONED = "written-preconditioned"


def _frontend_blocks(ctx: RunContext, workload: str) -> int:
    found = [w.frontend_blocks for w in ctx.plan.workloads if w.name == workload]
    return found[0] if found else 1000


def _region_bytes(ctx: RunContext, path: str, region: str, bs: int, workload: str) -> int:
    size = ctx.sizes.get(path, 0)
    if region == "frontend":
        return min(_frontend_blocks(ctx, workload) * bs, size) if size else 0
    return size


def _add(ctx: RunContext, p: PointRecord) -> None:
    """A stored point's writes into the run's totals (local block targets only)."""
    written = p.metric("write", "bytes") or 0.0
    paths = [t for t in p.targets.split(",") if t]
    if written <= 0 or not paths or p.hosts or p.pattern not in ("random", "sequential"):
        return
    for path in paths:
        region = _region_bytes(ctx, path, p.region, p.bs, p.workload)
        if ctx.target_kinds.get(path) != "block" or region <= 0:
            continue
        density = written / len(paths) / region
        sums = ctx.written.setdefault(path, {})
        key = (region, p.pattern == "sequential")
        sums[key] = max(sums.get(key, 0.0), density) if key[1] else sums.get(key, 0.0) + density


def _seed(ctx: RunContext) -> None:
    if SEEDED in ctx.said:
        return
    ctx.said.add(SEEDED)
    if ctx.store.findings(ctx.run.id, PRECONDITION.name):
        ctx.said.add(PRECONDITIONED)
    for p in ctx.store.points(ctx.run.id):
        _add(ctx, p)


def unwritten_before(ctx: RunContext, point: Point, hosts: int | None) -> float | None:
    """The largest share, over the point's local block targets, of the region it reads that
    this run's earlier points are not expected to have written; None when not judged (no
    reads, a host's targets, file targets: laid out with data)."""
    if point.workload.read <= 0 or hosts:
        return None
    paths = [t.path for t in point.targets if ctx.target_kinds.get(t.path) == "block"]
    if not paths:
        return None
    _seed(ctx)
    if PRECONDITIONED in ctx.said:
        return 0.0
    w = point.workload
    shares = []
    for path in paths:
        read = _region_bytes(ctx, path, w.region, w.bs, w.name)
        writes = [Written(region, density * region, seq)
                  for (region, seq), density in ctx.written.get(path, {}).items()]  # fmt: skip
        shares.append(unwritten_share(read, writes) if read > 0 else 0.0)
    return max(shares)


def count_written(ctx: RunContext, stored: Sequence[PointRecord]) -> None:
    """The points just stored into the run's totals (after their own reads were judged)."""
    if SEEDED not in ctx.said:  # the store holds them already: seeding counts them
        _seed(ctx)
        return
    for p in stored:
        _add(ctx, p)
