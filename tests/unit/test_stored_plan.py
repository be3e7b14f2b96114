"""A run's stored plan is read back through the plan loader, not as loose YAML."""

from __future__ import annotations

import yaml

from arraybench.plan.load import parse_plan_text, stored_plan
from arraybench.report.sections.overlays import chart_keys
from arraybench.run.setup import plan_yaml

PLAN = """\
name: stored
targets: [{path: /tmp/x.dat, size: 1m}]
fabric: {links: ["2 x FC 16G"]}
workloads:
  - {name: a, pattern: random, bs: 4k, read: 100, chart: both}
  - {name: b, pattern: random, bs: 8k, read: 100, chart: both}
  - {name: c, pattern: sequential, bs: 1m, read: 100}
"""


def test_a_stored_plan_comes_back_as_the_plan_it_was() -> None:
    plan = parse_plan_text(PLAN, "plan.yaml")
    again = stored_plan(plan_yaml(plan), "runs/x/plan.yaml")
    assert again == plan
    assert again is not None and again.fabric is not None and again.fabric.mtu == 1500
    assert chart_keys(again) == {"a": "both", "b": "both"}


def test_an_import_description_is_no_plan() -> None:
    text = yaml.safe_dump({"name": "imp", "imported": {"sources": ["/a"], "points": 3}})
    assert stored_plan(text, "runs/imp/import.yaml") is None
    assert chart_keys(stored_plan(text, "runs/imp/import.yaml")) == {}
