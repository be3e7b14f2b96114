"""The time a plan says it takes counts a many-host point's start gate (`start_lead`), twice
with a logged warm-up (its own gated run before the measured one)."""

from __future__ import annotations

import pytest

from arraybench.plan.expand import expand
from arraybench.plan.load import parse_plan_text
from arraybench.run.outline import point_span

PLAN = """name: gated
hosts:
  - {{name: h1, address: 192.0.2.1, targets: [{{path: t.dat, size: 16m}}]}}
  - {{name: h2, address: 192.0.2.2, targets: [{{path: t.dat, size: 16m}}]}}
host_sets: [[h1, h2]]
start_lead: 3s
timing: {{ramp: 2s, duration: 4s, log_ramp: {log}}}
load: {{workers: [1], iodepth: [1]}}
workloads:
  - {{name: rr, pattern: random, bs: 4k, read: 100}}
"""


@pytest.mark.parametrize("log_ramp, gates", [(False, 1), (True, 2)])
def test_a_many_host_point_counts_its_start_gates(log_ramp: bool, gates: int) -> None:
    plan = parse_plan_text(PLAN.format(log=str(log_ramp).lower()), "gated.yaml")
    [point] = expand(plan)
    assert point.level.hosts == ("h1", "h2")
    span = point_span(point, plan)
    assert span.low == pytest.approx(2 + 4 + 3 * gates)
    assert span.high is not None and span.high >= span.typical >= span.low
    local = parse_plan_text(
        PLAN.format(log=str(log_ramp).lower()).split("hosts:")[0]
        + "targets: [{path: t.dat, size: 16m}]\n"
        + "timing:" + PLAN.format(log=str(log_ramp).lower()).split("timing:")[1],
        "local.yaml",
    )  # fmt: skip
    [alone] = expand(local)
    assert point_span(alone, local).low == pytest.approx(2 + 4)  # no gate, no lead
