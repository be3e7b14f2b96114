"""Where the numbers came from: arraybench's and fio's versions, the controller, the run's
times and folder, and what each point's provenance finding recorded (targets, hosts)."""

from __future__ import annotations

from arraybench.finding_kinds import PROVENANCE
from arraybench.report.model import ReportModel
from arraybench.report.sections.inputs import RunInputs
from arraybench.run.provenance import provenance_rows
from arraybench.store.db import Finding, RunRecord


def section(model: ReportModel, run: RunInputs) -> None:
    model.provenance = run_provenance(run.run, run.findings)


def run_provenance(run: RunRecord, findings: list[Finding]) -> list[tuple[str, str]]:
    rows = [
        ("arraybench", run.arraybench_version),
        ("fio", run.engine_version or "?"),
        ("controller", f"{run.host}, Linux {run.kernel}"),
        ("started", run.started),
        ("finished", run.finished or "not finished"),
        ("results folder", run.folder),
    ]
    for found in PROVENANCE.among(findings):
        rows += provenance_rows(found)
    return rows
