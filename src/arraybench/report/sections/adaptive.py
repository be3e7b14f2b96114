"""Adaptive series: which levels the search tried and why it stopped, its optimal point and
maximum (the series' headline, the search's own beside them when they differ), how sure."""

from __future__ import annotations

from collections.abc import Mapping

from arraybench.analysis.headline import Headline
from arraybench.finding_kinds import ADAPTIVE, AdaptiveFinding
from arraybench.report.build import series_name
from arraybench.report.model import ReportModel
from arraybench.report.sections.inputs import RunInputs
from arraybench.store.db import Finding, PointRecord


def section(model: ReportModel, run: RunInputs) -> None:
    model.notes += adaptive_notes(run.findings, run.once, run.headlines)


def adaptive_notes(
    findings: list[Finding], points: list[PointRecord], headlines: Mapping[str, Headline]
) -> list[str]:
    """Which levels an adaptive series tried, and why it stopped; its optimal point and
    maximum are the series' headline (the summary's), the search's own named beside them
    when they differ (the headline leaves flagged points out, the search saw every point)."""
    series = {p.key: series_name(p) for p in points}
    labels = {p.key: p.identity.label for p in points}  # the finding names points by key

    def _level(key: str) -> str:
        return labels.get(key, key)

    notes = []
    for d in ADAPTIVE.among(findings):
        found = next((headlines[series[k]] for k in d["tried"] if k in series), None)
        optimal = found.optimal.key if found and found.optimal else d["optimal"]
        top = found.maximum.key if found and found.maximum else d["maximum"]
        own = ""
        if (optimal, top) != (d["optimal"], d["maximum"]):
            own = (f" (the search named optimal {_level(d['optimal'] or '–')}, max "
                   f"{_level(d['maximum'] or '–')} on every point it measured)")  # fmt: skip
        notes.append(
            f"{d['series']}: adaptive series ({d['mode']}): ran {len(d['tried'])} of "
            f"{len(d['ladder'])} levels ({', '.join(_level(k) for k in d['tried'])}); "
            f"{d['reason']}; optimal {_level(optimal or '–')}, "
            f"max {_level(top or '–')}{own}" + _confidence(d)
        )
    return notes


def _confidence(d: AdaptiveFinding) -> str:
    """How sure the adaptive series' optimal point is, from its levels' 1-second spread."""
    if d.get("confidence"):
        return f"; {d.get('confidence')} (noise: {d.get('noise', '')})"
    if d.get("noise"):  # searched with noise, but no level had enough seconds for a spread
        return "; how sure: unknown (its points were too short for a spread of their seconds)"
    return ""
