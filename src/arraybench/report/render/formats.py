"""The output formats: the one list of what `report -o` writes (docs/architecture.md).

Each format is one `OutputFormat`: its name (`--format`), the file extensions that choose
it, its writer, and its contract with the report model: the `ReportModel` parts it renders
and those it leaves out on purpose, each with why. tests/unit/test_format_contract.py holds
every format to it. A new format: a folder beside html/ with its `write`, one record here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from arraybench.report.model import ReportModel
from arraybench.report.render import csv, html, markdown, pdf, xlsx

# Writes the model to the path; `what` names the file in an error ("the html report")
Writer = Callable[[ReportModel, Path, str], None]


@dataclass(frozen=True)
class OutputFormat:
    name: str  # what --format takes
    extensions: tuple[str, ...]  # lower case, with the dot; the first is the usual one
    write: Writer
    renders: frozenset[str]  # the ReportModel fields it shows
    skips: Mapping[str, str] = field(default_factory=dict)  # field -> why it is left out
    printed: str = ""  # printed from that format's page by Chromium: renders what it renders


# every part of the model, in the model's order: a format renders these unless it says not
EVERY_PART = (
    "title", "run_id", "scenario", "labels", "started", "finished", "status",
    "arraybench_version", "engine_version", "host", "kernel", "targets", "latency_bound",
    "summary_columns", "summary", "sections", "points", "point_columns", "plan_yaml",
    "job_files", "job_series", "notes", "timelines", "tables", "overlays", "provenance",
    "verdicts", "distributions", "notes_box", "appendix", "figures", "chart_dir", "audience",
    "setup",
)  # fmt: skip


def _format(name: str, extensions: tuple[str, ...], write: Writer, printed: str = "",
            **skips: str) -> OutputFormat:  # fmt: skip
    """A format that renders every part but those it `skips`, each with why."""
    return OutputFormat(name, extensions, write, frozenset(EVERY_PART) - set(skips), skips,
                        printed)  # fmt: skip


_COLUMNS = "the points tables group their own columns (report/pointstable.py) from the values"
_CHARTS = "`--charts DIR` is linked from the Markdown; this format draws its charts itself"
_PAGE = {"point_columns": _COLUMNS, "chart_dir": _CHARTS}
_CSV_ONLY = "CSV is the points table alone: one row per point, every stored field"
_CSV = {part: _CSV_ONLY for part in EVERY_PART if part not in ("points", "point_columns")}

REGISTRY: tuple[OutputFormat, ...] = (
    _format("html", (".html", ".htm"), html.write, **_PAGE),
    _format(
        "md",
        (".md",),
        markdown.write,
        point_columns=_COLUMNS,
        job_files="a job file per point would bury the page: the plan's YAML is there, the job "
        "files are in the HTML appendix, the xlsx Provenance sheet and each point's folder",
        job_series="it groups the printed job files, which Markdown leaves out",
        distributions="percentile lines are charts: the points' p50/p99/p99.9 columns give the "
        "numbers, and `--charts DIR` links every chart, these included",
    ),
    _format(
        "csv",
        (".csv",),
        csv.write,
        **_CSV,
        point_columns="its columns are the points' stored fields, every one, not this list",
    ),
    _format(
        "xlsx",
        (".xlsx",),
        xlsx.write,
        chart_dir=_CHARTS,
        job_series="it groups the printed job files; the Provenance sheet lists each job file",
        distributions="percentile lines are charts: the Points sheet holds each point's "
        "p50/p99/p99.9 latency as numbers",
        notes_box="the HTML page's short box: the Summary sheet lists every note itself",
    ),
    _format("pdf", (".pdf",), pdf.write_pdf, printed="html", **_PAGE),
    _format("png", (".png",), pdf.write_png, printed="html", **_PAGE),
)
