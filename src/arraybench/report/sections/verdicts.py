"""Acceptance verdicts: the plan's criteria judged on the run's points (flagged points decide
none unless the plan keeps them in), and one integrity verdict per point run in verify mode."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from arraybench.analysis.acceptance import (
    CORRECTED_P99,
    FAIL,
    NO_DATA,
    PASS,
    STALL,
    Verdict,
    judge_all,
)
from arraybench.finding_kinds import INTEGRITY, OPEN_LOOP
from arraybench.report.model import ReportModel, ReportTable
from arraybench.report.sections.inputs import RunInputs
from arraybench.report.sections.spread import LevelFacts
from arraybench.store.db import Finding, PointRecord

if TYPE_CHECKING:
    from arraybench.plan.model import Plan


def section(model: ReportModel, run: RunInputs) -> None:
    model.verdicts = verdict_tables(run.plan, run.points, run.findings, run.facts)


def integrity_verdicts(points: list[PointRecord], findings: list[Finding]) -> list[Verdict]:
    """One verdict per point run in verify mode (per host on many hosts): no acknowledged
    write lost; a read-back that could not run is NO DATA."""
    keys = {p.id: p.key for p in points}
    verdicts = []
    for f in findings:
        if f.kind == INTEGRITY.name:
            d = INTEGRITY.of(f)
            clean = not (d.get("lost") or d.get("corrupt") or d.get("unreadable"))
            verdict = NO_DATA if d.get("error") else PASS if clean else FAIL
            summary, key = str(d.get("summary", "")), keys.get(f.point_id or 0)
            verdicts.append(Verdict("no acknowledged write lost", verdict, summary, key))
    return verdicts


def with_open_loop(points: list[PointRecord], findings: list[Finding]) -> list[PointRecord]:
    """The points, each rate-limited one with its open-loop figures as metrics (the
    acceptance criteria's max_stall and max_corrected_p99 read them)."""
    figures = {f.point_id: OPEN_LOOP.of(f) for f in findings if f.kind == OPEN_LOOP.name}
    out = []
    for p in points:
        d = figures.get(p.id)
        if d is not None:
            added = {f"total_{STALL}": d["longest_stall_s"],
                     f"total_{CORRECTED_P99}": d["corrected_latency_us"].get("p99")}  # fmt: skip
            p = replace(p, metrics={**p.metrics, **added})
        out.append(p)
    return out


def verdict_tables(
    plan: Plan | None, points: list[PointRecord], findings: list[Finding], facts: LevelFacts
) -> list[ReportTable]:
    """The plan's acceptance criteria and the integrity checks; flagged points decide no
    criterion, as they name no headline figure (unless the plan keeps them in)."""
    expectations = list(plan.acceptance) if plan else []
    points = with_open_loop(points, findings)
    verdicts = judge_all(expectations, points, facts.flagged, facts.include_flagged)
    verdicts += integrity_verdicts(points, findings)
    if not verdicts:
        return []
    rows = [[v.criterion, v.verdict, v.evidence, v.point or "–"] for v in verdicts]
    passed = sum(v.passed for v in verdicts)
    return [ReportTable("Acceptance criteria", ["Criterion", "Verdict", "Measured", "Point"],
                        rows, f"{passed} of {len(verdicts)} passed")]  # fmt: skip
