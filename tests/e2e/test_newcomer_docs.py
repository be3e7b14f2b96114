"""The docs a new user reads: one page per built-in methodology with the duration `plan check`
gives, the failure-test page's examples are valid plans, the README links them all."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from arraybench.cli import main
from arraybench.plan import catalog
from arraybench.plan.load import parse_plan_text

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _flat(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


@pytest.mark.parametrize("name", catalog.template_names())
def test_each_template_has_a_page_with_the_checked_duration(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = DOCS / "methodologies" / f"{name}.md"
    assert f"](docs/methodologies/{name}.md)" in (ROOT / "README.md").read_text()
    text = _flat(page)
    for heading in ("**Reproduces**", "**How long at scale 1**", "**The report shows**"):
        assert heading in text
    assert main(["plan", "check", name, "--results", str(tmp_path)]) == 0
    said = re.search(r"the run executes \d+ phases, (about [^:]+\)):", capsys.readouterr().out)
    assert said is not None and said.group(1) in text, (name, said and said.group(1))


def test_the_failure_test_page_examples_are_plans() -> None:
    text = (DOCS / "failure-tests.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)
    events = yaml.safe_load(blocks[0])["events"]
    kinds = {k for e in events for k in e if k in ("prompt", "run", "throttle", "netem",
                                                    "signal", "scsi_offline")}  # fmt: skip
    assert kinds == {"prompt", "run", "throttle", "netem", "signal", "scsi_offline"}
    workload = {"name": "w", "pattern": "random", "bs": "4k", "read": 0, "events": events,
                "verify": yaml.safe_load(blocks[1])["verify"]}  # fmt: skip
    plan = parse_plan_text(yaml.safe_dump({"name": "p", "workloads": [workload]}), "doc")
    assert len(plan.workloads[0].events) == 7
    worked = parse_plan_text(blocks[2], "worked example")
    assert worked.workloads[0].verify is not None and worked.acceptance


def test_readme_links_the_docs_and_shows_events_and_verify() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for link in ("docs/plan.md", "docs/failure-tests.md"):
        assert f"]({link})" in readme and (ROOT / link).exists()
    assert "events:" in readme and "verify:" in readme


def test_the_readme_failure_example_is_a_valid_plan() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL) if "events:" in b)
    plan = parse_plan_text(f"name: readme\n{block}", "README.md")
    assert plan.workloads[0].verify is not None and len(plan.workloads[0].events) == 3
