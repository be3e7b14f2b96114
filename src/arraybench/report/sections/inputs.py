"""What every section of a run's report reads, gathered once per report: the run, its stored
plan parsed once, its points and findings, the levels the curves are drawn from, their facts
and every series' headline, and each point's latency bins (stored at run time, or read from
its `fio.json` for a store made before they were stored)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arraybench.analysis.headline import Headline
from arraybench.run.reportable import fio_json_bins
from arraybench.store.db import Finding, PointRecord, RunRecord, Store

if TYPE_CHECKING:
    from arraybench.plan.model import Plan
    from arraybench.report.sections.spread import LevelFacts


def run_plan(run: RunRecord) -> Plan | None:
    """The plan the run stored, parsed; None for an import (its text describes its sources)."""
    from arraybench.plan.load import stored_plan  # the plan model (pydantic) loads here

    return stored_plan(run.plan_yaml, f"{run.folder}/plan.yaml")


@dataclass
class RunInputs:
    """One run's report inputs; built by report/assemble.py, read by every section."""

    store: Store
    run: RunRecord
    plan: Plan | None  # parsed once per report (run_plan)
    points: list[PointRecord]  # every stored point, repetitions and rounds included
    findings: list[Finding]
    once: list[PointRecord]  # the levels the curves are drawn from, repetitions collapsed
    facts: LevelFacts
    headlines: Mapping[str, Headline]  # series name -> its headline: computed once

    def latency_bins(self, point: PointRecord) -> dict[int, int] | None:
        """The point's merged json+ latency bins (ns -> count): those the run stored, else
        read from its `fio.json` (a store made before they were stored); None without."""
        return self.store.latency_bins(point.id) or fio_json_bins(Path(point.folder))
