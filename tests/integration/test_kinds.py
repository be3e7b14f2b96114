"""The registry of test kinds: interference and metadata are its first two kinds, and a third
kind plugs into the campaign and the outline without a line of either changing."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TypedDict

import pytest

from arraybench.engines.fio.parse import EngineDocument
from arraybench.finding_kinds import FindingKind
from arraybench.plan.catalog import resolve
from arraybench.plan.load import parse_plan_text
from arraybench.plan.model import Plan
from arraybench.point_identity import PointIdentity
from arraybench.run import campaign, kinds, outline
from arraybench.run.campaign import Campaign
from arraybench.run.context import RunContext
from arraybench.run.record import SeriesNames
from arraybench.run.spans import Phase, Span
from arraybench.store.db import Store
from tests.conftest import needs_fio, small_plan
from tests.integration.test_campaign import Recorder

SPECIALS = """\
interference: {base_bs: 8k, base_read: 70, base_rate_iops: 200, bg_rate_iops: 100, steps: 2,
               interval: 2s}
metadata: {threads: [1, 4], files_per_thread: 20}
"""


def _plan(tmp_path: Path) -> Plan:
    return parse_plan_text(small_plan(tmp_path, extra=SPECIALS).read_text(), "plan.yaml")


def test_interference_and_metadata_are_the_first_two_kinds():
    assert [k.name for k in kinds.TEST_KINDS] == ["interference", "metadata", "curve"]
    for kind in kinds.TEST_KINDS:  # the report function named by the kind exists
        module, _, function = f"arraybench.{kind.report_section}".rpartition(".")
        assert callable(getattr(importlib.import_module(module), function))


def test_steps_keep_their_keys_numbers_and_folders(tmp_path: Path):
    plan = _plan(tmp_path)
    seq, steps = 10, []
    for kind in kinds.TEST_KINDS:
        steps += kind.steps(plan, seq)
        seq += kind.slots(plan)
    assert [(s.key, s.seq, s.folder_name) for s in steps] == [
        ("interference/base+steps", 10, "010-interference"),
        ("metadata/t1", 12, "012-metadata-t1"),
        ("metadata/t4", 15, "015-metadata-t4"),
    ]
    phases = [p.kind for p in outline.plan_outline(plan).phases]
    assert phases[-3:-1] == ["interference", "metadata"]


class ProbeFinding(TypedDict):
    ios: int


PROBE = FindingKind("probe", ProbeFinding)  # a new kind declares its finding's keys


class ProbeKind:
    """A third kind: one sequential read of the first target, its I/O count as the finding."""

    name = "probe"
    report_section = "report.sections.special.special_report"
    touches_targets = True

    def slots(self, plan: Plan) -> int:
        return 1

    def steps(self, plan: Plan, first_seq: int) -> list[kinds.KindStep]:
        names = SeriesNames("probe", "Probe", "Read", "sequential", 65536, 100, "MB/s")
        probe = PointIdentity("probe", "once")
        return [kinds.KindStep(probe, first_seq, f"{first_seq:03d}-probe", "one read",
                               1.0, 5.0, names, 1, 1)]  # fmt: skip

    def outline(self, plan: Plan) -> Phase | None:
        return Phase("probe", "probe: one sequential read", Span(0.1, 0.5, 5.0), 1)

    def job_file(self, step: kinds.KindStep, ctx: RunContext) -> str:
        target = ctx.plan.targets[0].path
        return f"[probe]\nfilename={target}\nrw=read\nbs=64k\nsize=4m\nioengine=psync\n"

    def finding(
        self, step: kinds.KindStep, ctx: RunContext, folder: Path, document: EngineDocument
    ) -> ProbeFinding:
        return {"ios": sum(j.read.ios for j in document.jobs)}


@needs_fio
def test_a_third_kind_plugs_in_without_touching_the_campaign(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    registry = (*kinds.TEST_KINDS, ProbeKind())
    monkeypatch.setattr(campaign, "TEST_KINDS", registry)
    monkeypatch.setattr(outline, "TEST_KINDS", registry)
    plan = resolve(str(small_plan(tmp_path, workers="[1]", workloads=(  # one load point beside
        "  - {name: r, pattern: random, bs: 8k, read: 100}\n"
    ))))  # fmt: skip
    assert outline.plan_outline(plan).phases[-2].kind == "probe"
    store = Store(tmp_path / "results")
    result = Campaign(store, tmp_path / "results", Recorder()).start(plan, 1.0)
    assert result.status == "complete"
    probe = store.point(result.run_id, "probe/once")
    assert probe is not None and probe.workload == "probe" and probe.unit == "MB/s"
    assert probe.metric("read", "bytes") == 4 << 20  # what the job file asked for
    [finding] = store.findings(result.run_id, "probe")
    assert finding.point_id == probe.id and finding.data == {"ios": 64}
    assert Path(probe.folder, "point.fio").read_text().startswith("[probe]")
