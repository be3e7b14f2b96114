"""The seed reports' own figure forms, built from the stored points and findings of a run:
each a `Figure` (report/model.py) drawn by report/figsvg.py in HTML and PDF and as a native
chart in Excel (report/xlsxfigures.py). One function per form; `seed_figures` gathers them."""

from __future__ import annotations

from arraybench.report.model import Figure, ReportModel, ReportTable
from arraybench.report.ratecurve import curve_report
from arraybench.store.records import Finding, PointRecord


def seed_figures(
    points: list[PointRecord], findings: list[Finding]
) -> tuple[list[ReportTable], list[Figure]]:
    """Every seed figure this run's points and findings make, and the tables beside them."""
    tables, figures = curve_report(findings)
    return tables, figures


def add_seed_figures(
    model: ReportModel, points: list[PointRecord], findings: list[Finding]
) -> None:
    tables, figures = seed_figures(points, findings)
    model.tables += tables
    model.figures += figures
