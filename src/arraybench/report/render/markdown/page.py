"""The report as GitHub Markdown: for an issue, a pull request, a wiki page or a README.

Renders a `ReportModel` only. Order: title and run metadata, summary table, acceptance
verdicts, one table per curve panel of each workload, the other tables and the overlay
curves, time series in brief, the main columns of every point, notes, provenance and the
plan in a fenced YAML block. Numbers are formatted as in the HTML report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from arraybench.report.model import (
    REMARK_MARK,
    CurvePanel,
    Overlay,
    ReportModel,
    ReportTable,
    SummaryCell,
    Timeline,
)
from arraybench.report.pointstable import heading, id_cells, points_layout, value
from arraybench.report.render.escape import for_markdown
from arraybench.report.render.html.page import DASH, format_value
from arraybench.report.render.markdown.figures import charts_markdown, figures_markdown
from arraybench.report.sections.headlines import OPTIMAL_RULE, summary_link
from arraybench.report.sections.warmup import measured_only

VERDICT_MARK = {"PASS": "✅ PASS", "FAIL": "❌ FAIL"}


def escape(text: object) -> str:
    """Text for a table cell or a line: `report.render.escape.for_markdown`."""
    return for_markdown(text)


def _code(text: str) -> str:
    """Inline code for a path or a label; escaped text if it holds a backtick."""
    if "`" in text or "\n" in text:
        return escape(text)
    return "`" + text.replace("|", "\\|") + "`"


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]], *, raw: bool = False) -> str:
    """A GitHub table; cells are escaped unless `raw` (already Markdown)."""
    if not columns:
        return ""

    def cells(values: Sequence[str]) -> str:
        shown = [v if raw else escape(v) for v in values]
        shown += [""] * (len(columns) - len(shown))
        return "| " + " | ".join(c if c != "" else " " for c in shown) + " |"

    lines = [cells(list(columns)), "|" + "|".join("---" for _ in columns) + "|"]
    lines += [cells(list(row)) for row in rows]
    return "\n".join(lines)


def _fence(text: str, lang: str) -> str:
    """A fenced block longer than any run of backticks inside the text."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def _num(v: float | None) -> str:
    return format_value(v)


# ---------------------------------------------------------------- parts


def _metadata(model: ReportModel) -> str:
    labels = ", ".join(_code(f"{k}={v}") for k, v in model.labels.items()) or DASH
    targets = ", ".join(_code(t) for t in model.targets) or DASH
    finished = model.finished or DASH
    rows = [
        *[(escape(k), escape(v)) for k, v in model.setup],  # customer, system under test, fabric
        ("Run id", _code(model.run_id)),
        *([("Scenario", escape(model.scenario))] if model.scenario else []),
        ("Status", f"**{escape(model.status)}**"),
        ("Labels", labels),
        ("Started", escape(model.started)),
        ("Finished", escape(finished)),
        ("arraybench", escape(model.arraybench_version)),
        ("fio", escape(model.engine_version)),
        ("Host", escape(model.host)),
        ("Kernel", escape(model.kernel)),
        ("Latency bound", escape(model.latency_bound)),
        ("Targets", targets),
    ]
    return _table(["Run", ""], [list(r) for r in rows], raw=True)


def _cell(cell: SummaryCell | None) -> str:
    if cell is None:
        return DASH
    return f"**{escape(cell.optimal)}**<br>{escape(cell.extremes)}<br>{escape(cell.bounded)}"


def _summary(model: ReportModel) -> str:
    columns = ["Workload", *(escape(c) for c in model.summary_columns)]
    rows = [
        [escape(row.workload), *(_cell(row.cells.get(c)) for c in model.summary_columns)]
        for row in model.summary
    ]
    caption = (
        f"Bold: optimal point ({OPTIMAL_RULE}), "
        "with its mean latency. Below: maximum throughput and minimum latency; best "
        f"throughput within the latency bound ({model.latency_bound}). "
        f"{summary_link(model.audience)}"
    ).strip()
    table = _table(columns, rows, raw=True) if rows else DASH
    return f"## Summary\n\n{table}\n\n_{escape(caption)}_"


def _report_table(t: ReportTable, level: str = "###", *, verdicts: bool = False) -> str:
    rows = [
        [VERDICT_MARK.get(c, escape(c)) if verdicts else escape(c) for c in row] for row in t.rows
    ]
    parts = [f"{level} {escape(t.title)}"]
    if t.caption:
        parts.append(f"_{escape(t.caption)}_")
    parts.append(_table([escape(c) for c in t.columns], rows, raw=True) or DASH)
    return "\n\n".join(parts)


def _verdicts(model: ReportModel) -> str:
    if not model.verdicts:
        return ""
    body = "\n\n".join(_report_table(t, verdicts=True) for t in model.verdicts)
    return f"## Acceptance verdicts\n\n{body}"


def _marks(panel: CurvePanel, i: int) -> str:
    named = (
        ("optimal", panel.optimal_index),
        ("max", panel.max_index),
        ("min latency", panel.min_latency_index),
    )
    marks = [f"**{name}**" for name, index in named if index == i]
    flagged = panel.flagged[i] if i < len(panel.flagged) else ""
    remark = panel.remarks[i] if i < len(panel.remarks) else ""
    return ", ".join(marks + ([f"flagged: {escape(flagged)}"] if flagged else [])
                     + ([f"{REMARK_MARK} remark: {escape(remark)}"] if remark else []))  # fmt: skip


def _get(values: Sequence[float | None], i: int) -> float | None:
    return values[i] if i < len(values) else None


def _panel(panel: CurvePanel) -> str:
    unit = panel.throughput_unit
    columns = [escape(panel.x_label), unit, "mean latency (µs)", "p99 latency (µs)", ""]
    rows = []
    for i, x in enumerate(panel.x_values):
        tick = panel.x_ticks[i] if i < len(panel.x_ticks) else format_value(x)
        rows.append(
            [
                escape(tick),
                _num(_get(panel.throughput, i)),
                _num(_get(panel.lat_mean_us, i)),
                _num(_get(panel.lat_p99_us, i)),
                _marks(panel, i),
            ]
        )
    head = f"#### {escape(panel.mix_label)} ({unit})"
    ceiling = ""
    if panel.ceiling is not None:
        ceiling = f"\n\nFabric ceiling: {format_value(panel.ceiling)} {unit}."
    return f"{head}\n\n{_table(columns, rows, raw=True)}{ceiling}"


def _workloads(model: ReportModel) -> str:
    if not model.sections:
        return ""
    parts = ["## Workloads"]
    for section in model.sections:
        parts.append(f"### {escape(section.title)}")
        parts += [_panel(p) for p in section.panels] or ["no series: nothing measured"]
    return "\n\n".join(parts)


def _overlay(o: Overlay) -> str:
    columns = [escape(o.x_label), *(escape(line.label) for line in o.lines)]
    rows = []
    for i, tick in enumerate(o.x_ticks):
        row = [escape(tick)]
        for line in o.lines:
            iops, mbps, lat = (_get(v, i) for v in (line.iops, line.mbps, line.lat_mean_us))
            row.append(
                DASH
                if iops is None and mbps is None
                else f"{_num(iops)} IOPS · {_num(mbps)} MB/s · {_num(lat)} µs"
            )
        rows.append(row)
    return f"### {escape(o.title)}\n\n{_table(columns, rows, raw=True)}"


def _tables(model: ReportModel) -> str:
    parts = [_report_table(t) for t in model.tables] + [_overlay(o) for o in model.overlays]
    return "## Tables\n\n" + "\n\n".join(parts) if parts else ""


def _timeline(t: Timeline) -> str:
    if t.shade is not None:  # a logged warm-up: drawn, but never in the figures
        t = measured_only(t)
    finite = [v for v in t.throughput if v is not None]
    span = f"{len(t.t_s)} samples"
    if t.t_s:
        span += f" over {format_value(t.t_s[-1] - t.t_s[0])} s"
    if finite:
        span += (
            f"; {t.throughput_unit} min {format_value(min(finite))}, "
            f"mean {format_value(sum(finite) / len(finite))}, "
            f"{'highest round' if t.x_label == 'round' else '1-s peak'} "
            f"{format_value(max(finite))}"
        )
    lines = [f"- **{escape(t.title)}**: {escape(span)}"]
    cpu = [v for v in t.controller_cpu or [] if v is not None]
    if cpu:  # the chart under it in HTML and PDF: its figures here
        lines.append(f"  - array controller CPU: mean {format_value(sum(cpu) / len(cpu))} %, "
                     f"max {format_value(max(cpu))} % ({len(cpu)} s)")  # fmt: skip
    lines += [f"  - {escape(label)} at {format_value(at)} s" for at, label in t.events]
    lines += [f"  - {escape(line)}" for line in t.findings]
    return "\n".join(lines)


def _timelines(model: ReportModel) -> str:
    if not model.timelines:
        return ""
    body = "\n".join(_timeline(t) for t in model.timelines)
    return f"## Time series\n\n{body}"


def _points(model: ReportModel) -> str:
    if not model.points:
        return ""
    layout = points_layout(model.points)
    parts = [f"## Points ({len(model.points)})"]
    if layout.fixed:
        parts.append(" · ".join(f"{escape(k)}: {_code(v)}" for k, v in layout.fixed))
    for table in layout.tables:
        cells = [(g, c) for g in table.groups for c in g.columns]
        short = lambda g: g.title.split(" (")[0]  # noqa: E731 - "Host (kernel ...)" -> "Host"
        columns = [*layout.id_columns, *(f"{short(g)} {heading(c)}" for g, c in cells)]
        rows = [
            [*(escape(v) for v in id_cells(p, layout.id_columns)),
             *(_num(value(p, g, c)) for g, c in cells)]
            for p in model.points
        ]  # fmt: skip
        parts.append(_table([escape(c) for c in columns], rows, raw=True))
    if model.audience == "engineer":  # a command: not in a customer's report
        parts.append("_Every stored field of every point: `arraybench show RUN --format csv`._")
    return "\n\n".join(parts)


def _notes(model: ReportModel) -> str:
    """The notes box: its few lines (counts, where to look), or every note when it has none."""
    box = model.notes_box or model.notes
    if not box:
        return ""
    return "## Notes\n\n" + "\n".join(f"- {escape(n)}" for n in box)


def _appendix(model: ReportModel) -> str:
    """What a reader looks up: every note in full, every validity flag, per-point tables."""
    parts = []
    if model.notes_box and model.notes:
        parts.append(f"### All notes ({len(model.notes)})\n\n"
                     + "\n".join(f"- {escape(n)}" for n in model.notes))  # fmt: skip
    parts += [_report_table(t) for t in model.appendix if t.medium != "print"]
    return "## Appendix\n\n" + "\n\n".join(parts) if parts else ""


def _provenance(model: ReportModel) -> str:
    rows = [[escape(k), escape(v)] for k, v in model.provenance]
    versions = [
        ("arraybench", model.arraybench_version),
        ("fio", model.engine_version),
        ("host", model.host),
        ("kernel", model.kernel),
    ]
    known = {k for k, _ in model.provenance}
    rows += [[k, escape(v)] for k, v in versions if k not in known]
    provenance = f"## Provenance\n\n{_table(['what', 'value'], rows, raw=True)}"
    if model.audience != "engineer":  # a customer's report holds no plan keys
        return provenance
    plan = _fence(model.plan_yaml, "yaml") if model.plan_yaml.strip() else DASH
    return f"{provenance}\n\n### Plan\n\n{plan}"


def render_markdown(model: ReportModel, base: Path | None = None) -> str:
    """The whole report as one GitHub Markdown document; `base`: the folder it is written to
    (the exported charts are linked relative to it)."""
    tool = "arraybench report" if model.audience == "engineer" else "Measured with arraybench"
    sub = f"{tool} · run {_code(model.run_id)}"
    sub += f" · scenario {escape(model.scenario)}" if model.scenario else ""
    parts = [
        f"# {escape(model.title)}",
        sub,
        _metadata(model),
        _notes(model),
        _summary(model),
        _verdicts(model),
        _tables(model),
        figures_markdown(model, escape, _table),
        charts_markdown(model, base, escape),
        _workloads(model),
        _timelines(model),
        _appendix(model),
        _points(model),
        _provenance(model),
        f"_Generated by arraybench {escape(model.arraybench_version)}._",
    ]
    return "\n\n".join(p for p in parts if p) + "\n"
