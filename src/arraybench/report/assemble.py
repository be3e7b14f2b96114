"""Build the ReportModel of one run: its inputs gathered once (the stored plan parsed once,
every series' headline computed once), then each section of report/sections/registry.py in
its order."""

from __future__ import annotations

from arraybench.report.audience import for_audience
from arraybench.report.gcpause import gc_paused
from arraybench.report.model import ReportModel
from arraybench.report.sections.headlines import curve_levels, includes_flagged, run_headlines
from arraybench.report.sections.inputs import RunInputs, run_plan
from arraybench.report.sections.registry import INTERNAL, SECTIONS
from arraybench.report.sections.spread import level_facts
from arraybench.report.sections.summary import new_model
from arraybench.store.db import Store


def run_inputs(store: Store, run_id: str) -> RunInputs:
    """What every section reads: curves and summaries on each level's median over its
    repetitions (repeat: N); the flags and spreads of the levels; one headline per series."""
    run = store.get_run(run_id)
    points = store.points(run_id)
    findings = store.findings(run_id)
    plan = run_plan(run)
    once = curve_levels(points)
    facts = level_facts(points, findings, includes_flagged(plan))
    headlines = run_headlines(once, run, facts)
    return RunInputs(store, run, plan, points, findings, once, facts, headlines)


def report_for_run(store: Store, run_id: str, audience: str = "engineer") -> ReportModel:
    """Everything stored about a run, as the report's view-model; for a customer
    (`audience`), without what the sections declare internal (report/audience.py)."""
    with gc_paused():  # a big run's millions of points and cells: see report/gcpause.py
        inputs = run_inputs(store, run_id)
        model = new_model(inputs.run, inputs.once, store.job_files(run_id))
        for section in SECTIONS:
            section(model, inputs)
    return for_audience(model, audience, INTERNAL)
