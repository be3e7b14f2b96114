"""The curve kind's steps carry their workload and share of its maximum as typed fields: the
rate of a step is never read back from its point key or identity strings (issue 26)."""

from __future__ import annotations

from dataclasses import replace

from arraybench.plan.load import parse_plan_text
from arraybench.point_identity import PointIdentity
from arraybench.run.kinds.curve import CurveKind, _percent

PLAN = """name: curve
targets: [{path: /tmp/curve-steps.dat, size: 16m}]
timing: {ramp: 0s, duration: 2s}
load: {workers: [1, 2], iodepth: [4]}
curve: {percents: [10, 50, 400], tolerance: 10, workloads: [rr-*]}
workloads:
  - {name: rr-4k, pattern: random, bs: 4k, read: 100}
  - {name: rr-8k, pattern: random, bs: 8k, read: 100}
  - {name: sw, pattern: sequential, bs: 1m, read: 0}
"""


def test_each_step_carries_its_workload_and_percent() -> None:
    plan = parse_plan_text(PLAN, "curve.yaml")
    steps = CurveKind().steps(plan, 7)
    assert [(s.source, s.percent) for s in steps] == [
        (w, p) for w in ("rr-4k", "rr-8k") for p in (10, 50, 400)
    ]
    assert [s.seq for s in steps] == list(range(7, 13))
    assert steps[0].identity == PointIdentity("curve-rr-4k", "p10")
    # the share comes from the field: an identity written any other way does not change it
    renamed = replace(steps[1], identity=PointIdentity("curve/other name", "level 3"))
    assert _percent(renamed) == 50 and renamed.source == "rr-4k"
