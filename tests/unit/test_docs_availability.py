"""Every plan in docs/availability.md is a plan arraybench accepts, shaped as the page says."""

from __future__ import annotations

import re
from pathlib import Path

from arraybench.plan.load import parse_plan_text

DOC = Path(__file__).resolve().parents[2] / "docs" / "availability.md"


def _yaml_blocks() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)


def test_every_plan_of_the_availability_page_parses() -> None:
    blocks = _yaml_blocks()
    assert blocks, "the page shows its plan"
    for block in blocks:
        parse_plan_text(block, "availability.md")  # a PlanError names the line


def test_the_study_has_hosts_a_ladder_scenarios_an_event_on_h2_and_verify() -> None:
    plan = parse_plan_text(_yaml_blocks()[0], "availability.md")
    assert [h.name for h in plan.hosts] == ["h0", "h1", "h2"]
    assert all(h.ssh is not None and h.ssh.python for h in plan.hosts)
    assert len(plan.load.workers) > 2  # a ladder
    assert [s.name for s in plan.scenarios] == ["C2", "C1"]
    degraded = plan.scenarios[1]
    assert degraded.label == "-1 controller"
    assert [step.kind for step in degraded.before] == ["prompt", "run"]
    rr = plan.workloads[0]
    assert rr.verify is not None
    [event] = rr.events
    assert event.kind == "throttle" and event.named_hosts == ["h2"]
