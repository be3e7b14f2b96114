"""Self-contained HTML report: one file, inline CSS and SVG, works offline.

Renders a `ReportModel` only; every number is already computed by `report.build`.
Layout, in the order a customer reads: title and set-up, the notes box, summary table, tables,
one section per workload with its curve panels stacked (Read / Write / Read-Write), the other
charts; then the appendix (`appendix.py`): provenance, every note, every validity flag, the
points table, the plan and the job files.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from arraybench.report.charts import interact
from arraybench.report.charts.curve import curve_chart, point_tip
from arraybench.report.charts.figures import figures_html
from arraybench.report.charts.timechart import (
    ChartEvent,
    TimeSeries,
    XAxis,
    gb_chart,
    time_chart,
    xy_chart,
)
from arraybench.report.model import (
    CurvePanel,
    Distribution,
    Figure,
    Overlay,
    ReportModel,
    ReportTable,
    SummaryCell,
    Timeline,
    WorkloadSection,
)
from arraybench.report.render.chartfiles.export import name_charts
from arraybench.report.render.escape import for_html
from arraybench.report.render.html import appendix, lazycharts, pagedtable
from arraybench.report.render.html.style import CSS, JS
from arraybench.report.sections.headlines import OPTIMAL_RULE, summary_link
from arraybench.units import format_number

DASH = "–"
# an interactive hint: on the screen only, never on paper (every audience)
OPEN_HINT = '<span class="screen-only-inline"> Click a series to open it.</span>'
MAX_INLINE_TARGETS = 6
LADDER_CHART_POINTS = 400
C_GUIDE = "#9aa0a6"
C_CPU = "#0f8a6c"  # the array controller's CPU, under the time chart


def _e(text: object) -> str:
    return for_html(text)


# ---------------------------------------------------------------- formatting


def format_value(v: float | None) -> str:
    """Table cell under a heading that states the unit: `units.format_number`."""
    return format_number(v)


def _duration(started: str, finished: str | None) -> str | None:
    if not finished:
        return None
    try:
        secs = (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()
    except (ValueError, TypeError):
        return None
    if secs < 0:
        return None
    h, rest = divmod(int(secs), 3600)
    return f"{h} h {rest // 60:02d} min" if h else f"{rest // 60} min {rest % 60:02d} s"


# ---------------------------------------------------------------- page parts


def _head(model: ReportModel, lazy: bool = False) -> str:
    css = lazycharts.CSS if lazy else ""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="arraybench {_e(model.arraybench_version)}">\n'
        f"<title>{_e(model.title)}</title>\n<style>{CSS}{interact.CSS}{pagedtable.CSS}{css}</style>\n</head>\n"
    )


HISTOGRAMS = "Latency histograms"


def _seed_figures(model: ReportModel) -> list[Figure]:
    return [f for f in model.figures if f.form != "histogram"]


def _histograms(model: ReportModel) -> list[Figure]:
    return [f for f in model.figures if f.form == "histogram"]


def _contents(model: ReportModel) -> list[tuple[str, str]]:
    """The sections the document has, in its order: (anchor, title)."""
    links = [("run", "Set-up"), ("summary", "Summary")]
    links += [("verdicts", "Acceptance verdicts")] if model.verdicts else []
    links += [("tables", "Tables")] if model.tables else []
    seed = [("seedfigures", "Figures")] if _seed_figures(model) else []
    if model.sections:  # the body's order: overlays, seed figures, the workloads' sections
        links += [("overlays", "Curves together")] if model.overlays else []
        links += [*seed, ("workloads", "Workloads")]
    elif model.overlays:  # the overlays stand in the workloads' place
        links += [("workloads", "Workloads"), *seed]
    else:
        links += seed
    links += [("histograms", HISTOGRAMS)] if _histograms(model) else []
    links += [("distribution", "Latency distribution")] if model.distributions else []
    links += [("timelines", "Time series")] if model.timelines else []
    links += [("appendix", appendix_title(model.audience))]
    return links


APPENDIX = "Appendix: flags, points, plan and job files"
APPENDIX_CUSTOMER = "Appendix: provenance, flags and points"  # no plan, no job files


def appendix_title(audience: str) -> str:
    return APPENDIX if audience == "engineer" else APPENDIX_CUSTOMER


def _title(model: ReportModel) -> str:
    tool = "arraybench report" if model.audience == "engineer" else "Measured with arraybench"
    sub = f"{tool} · run {model.run_id}"
    sub += f" · scenario {model.scenario}" if model.scenario else ""  # only the user's
    links = _contents(model)
    toc = "".join(f'<a href="#{a}">{t}</a>' for a, t in links)
    paper = [(a, t) for a, t in links  # load ladders alone are not printed (_timelines)
             if a != "timelines" or any(not tl.series for tl in model.timelines)]  # fmt: skip
    printed = "".join(f'<li><a href="#{a}">{_e(t)}</a></li>' for a, t in paper)
    return (
        f"<header><h1>{_e(model.title)}</h1>"
        f'<p class="subtitle">{_e(sub)}</p><nav class="toc">{toc}</nav>'
        f'<nav class="contents"><p class="contents-title">Contents</p><ol>{printed}</ol></nav>'
        "</header>"
    )


def _status(status: str) -> str:
    known = {"complete", "interrupted", "running"}
    cls = status if status in known else "other"
    return f'<span class="status status-{cls}">{_e(status)}</span>'


def _targets(targets: list[str]) -> str:
    if not targets:
        return DASH
    items = ", ".join(f"<code>{_e(t)}</code>" for t in targets)
    if len(targets) <= MAX_INLINE_TARGETS:
        return items
    return f"<details><summary>{len(targets)} targets</summary>{items}</details>"


def _labels(labels: dict[str, str]) -> str:
    chips = [f'<span class="chip">{_e(k)}={_e(v)}</span>' for k, v in labels.items()]
    return "".join(chips) or DASH


def _metadata(model: ReportModel) -> str:
    finished = model.finished or DASH
    took = _duration(model.started, model.finished)
    if took:
        finished = f"{finished} ({took})"
    rows = [
        *[(_e(k), _e(v)) for k, v in model.setup],  # customer, system under test, fabric
        ("Run id", f"<code>{_e(model.run_id)}</code>"),
        *([("Scenario", _e(model.scenario))] if model.scenario else []),
        ("Status", _status(model.status)),
        ("Labels", _labels(model.labels)),
        ("Started", _e(model.started)),
        ("Finished", _e(finished)),
        ("arraybench", _e(model.arraybench_version)),
        ("fio", _e(model.engine_version)),
        ("Host", _e(model.host)),
        ("Kernel", _e(model.kernel)),
        ("Latency bound", _e(model.latency_bound)),
        ("Targets", _targets(model.targets)),
    ]
    items = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return f'<section id="run"><h2>Set-up</h2><dl class="meta">{items}</dl></section>'


def _linked(note: str) -> str:
    """A note with "the appendix" a link to it."""
    return _e(note).replace("the appendix", '<a href="#appendix">the appendix</a>')


def _notes(notes: list[str]) -> str:
    if not notes:
        return ""
    items = "".join(f"<li>{_linked(n)}</li>" for n in notes)
    return (
        '<div class="notes" role="note"><p class="notes-title">&#9888; Notes</p>'
        f"<ul>{items}</ul></div>"
    )


def _appendix_tables(model: ReportModel) -> str:
    if not model.appendix:
        return ""
    return '<section id="lookup">' + "".join(map(_table, model.appendix)) + "</section>"


def _anchors(sections: list[WorkloadSection]) -> dict[str, str]:
    """Section title -> element id `w<position>` (as `_sections` assigns; any title is safe)."""
    out: dict[str, str] = {}
    for i, s in enumerate(sections, start=1):
        out.setdefault(s.title, f"w{i}")
    return out


def _cell(cell: SummaryCell | None) -> str:
    if cell is None:
        return f"<td>{DASH}</td>"
    return (
        f'<td><div class="opt">{_e(cell.optimal)}</div>'
        f'<div class="ext">{_e(cell.extremes)}</div>'
        f'<div class="bnd">{_e(cell.bounded)}</div></td>'
    )


def _summary_part(model: ReportModel, anchors: dict[str, str], columns: list[str]) -> str:
    head = "".join(f'<th scope="col">{_e(c)}</th>' for c in columns)
    rows = []
    for row in model.summary:
        name = _e(row.workload)
        if row.workload in anchors:
            name = f'<a href="#{anchors[row.workload]}">{name}</a>'
        cells = "".join(_cell(row.cells.get(c)) for c in columns)
        rows.append(f'<tr><th scope="row">{name}</th>{cells}</tr>')
    body = "".join(rows) or f'<tr><td colspan="{len(columns) + 1}">{DASH}</td></tr>'
    return (
        '<table class="summary">'
        f'<thead><tr><th scope="col">Workload</th>{head}</tr></thead><tbody>{body}</tbody>'
        "</table>"
    )


def _summary(model: ReportModel, anchors: dict[str, str]) -> str:
    caption = (
        f"Bold: optimal point ({OPTIMAL_RULE}), "
        "with its mean latency. Below: maximum throughput and minimum latency; "
        f"best throughput within the latency bound ({model.latency_bound}). "
        f"{summary_link(model.audience)}"
    ).strip()
    names = ["", *model.summary_columns]
    parts = [
        _summary_part(model, anchors, [names[i] for i in keep[1:]])
        for keep in column_chunks(len(names), MAX_SUMMARY_COLUMNS + 1)
    ]
    return (
        '<section id="summary"><h2>Summary</h2>'
        + '<div class="gap"></div>'.join(parts)
        + f'<p class="caption">{_e(caption)}</p></section>'
    )


def _single(panel: CurvePanel) -> str:
    """One load level: a chart would be one dot; its numbers say more."""
    level = panel.x_ticks[0] if panel.x_ticks else format_value(panel.x_values[0])
    text = point_tip(panel, 0, level).replace("\n", " · ")
    return (
        f'<figure class="panel single"><p><strong>{_e(panel.mix_label)}</strong>, one load '
        f"level: {_e(text)}. Its 1-second samples are under Time series.</p></figure>"
    )


def _panel(p: CurvePanel, lazy: lazycharts.LazyCharts | None, workload: str = "") -> str:
    """`workload`: named in the chart's own title (the images of `--charts`, read alone)."""
    if len(p.x_values) == 1:
        return _single(p)
    held = None if lazy is None else lazy.panel(p)  # a big run: drawn by the page
    return held or f'<figure class="panel">{curve_chart(p, workload=workload)}</figure>'


def _section(
    section: WorkloadSection, anchor: str, lazy: lazycharts.LazyCharts | None = None,
    every_chart: bool = False,
) -> str:  # fmt: skip
    named = section.title if every_chart else ""  # on the page, its heading names it
    figs = "".join(_panel(p, lazy, named) for p in section.panels)
    figs = figs or f'<p class="caption">no series {DASH} nothing measured for this workload</p>'
    return f'<section class="workload" id="{anchor}"><h3>{_e(section.title)}</h3>{figs}</section>'


def _sections(
    model: ReportModel, lazy: lazycharts.LazyCharts | None = None, every_chart: bool = False
) -> str:
    if not model.sections:
        return ""
    parts = [_section(s, f"w{i}", lazy, every_chart) for i, s in enumerate(model.sections, 1)]
    return (
        '<div id="workloads"><h2>Workloads</h2>'
        + _spread_caption(model)
        + "".join(parts)
        + "</div>"
    )


def _spread_caption(model: ReportModel) -> str:
    """Say by the curves whether they carry a spread (issue 18: a figure without one says so)."""
    panels = [p for s in model.sections for p in s.panels]
    if any(ci for p in panels for ci in p.throughput_ci):
        text = (
            "Shaded band around the throughput, bars on the mean latency: the 95 % interval "
            f"of the mean over the repeats ({panels[0].interval_method or 'Student t'})."
        )
    else:
        text = "Each point was measured once: the curves have no spread (no band is drawn)."
    if any(f for p in panels for f in p.flagged):
        text += (
            " Red crosses: points with an invalidating flag (see the appendix's validity "
            "flags); the notes say which ones the optimal point and the maximum leave out."
        )
    return f'<p class="caption">{_e(text)}</p>'


def _timeline(t: Timeline) -> str:
    # a second's peak beside the summary's maximum reads as a second maximum: named for what
    # it is (a round's mean on the SNIA chart)
    word = "highest round" if t.x_label == "round" else "1-s peak"
    throughput = TimeSeries(t.throughput_unit, t.throughput, t.throughput_unit, peak_word=word)
    series = [throughput]
    if t.kernel is not None:
        series.append(TimeSeries(f"kernel {t.throughput_unit}", t.kernel, t.throughput_unit,
                                 dashed=True))  # fmt: skip
    if t.array is not None:  # `arraybench attach`
        series.append(TimeSeries(f"array {t.throughput_unit}", t.array, t.throughput_unit))
    series += [TimeSeries(label, values, t.throughput_unit, dashed=True, color=C_GUIDE,
                          peak_word=None) for label, values in t.guides]  # fmt: skip
    has_latency = any(v is not None for v in t.lat_mean_us)
    latency = [TimeSeries("mean latency", t.lat_mean_us, "µs")] if has_latency else []
    events = [ChartEvent(at, label) for at, label in t.events]
    most = LADDER_CHART_POINTS if t.series else 2000  # many ladders: each drawn a little coarser
    charts = time_chart(t.title, t.t_s, series, right=latency, events=events, x_label=t.x_label,
                        max_points=most, neutral_marks=bool(t.series), shade=t.shade)  # fmt: skip
    if t.controller_cpu is not None:  # under it, on the same time axis (AERODISK's form)
        cpu = TimeSeries("controller CPU", t.controller_cpu, "%", color=C_CPU, peak_word=None)
        charts += time_chart(f"{t.title}: array controller CPU", t.t_s, [cpu], events=events,
                             x_label=t.x_label, height=180, max_points=most,
                             neutral_marks=bool(t.series), shade=t.shade,
                             right_axis=has_latency)  # fmt: skip
    if t.gb_written is not None:
        charts += gb_chart(f"{t.title}: against data written", t.gb_written, [throughput],
                           events=events, t_s=t.t_s)  # fmt: skip
    found = "".join(f"<li>{_e(line)}</li>" for line in t.findings)
    found = f'<ul class="findings">{found}</ul>' if found else ""
    return f'<figure class="panel">{charts}{found}</figure>'


VERDICT_CLASSES = {"PASS": "pass", "FAIL": "fail"}


def _table_cell(cell: str, verdicts: bool) -> str:
    cls = VERDICT_CLASSES.get(cell) if verdicts else None
    return f'<td class="{cls}">{_e(cell)}</td>' if cls else f"<td>{_e(cell)}</td>"


MAX_TABLE_COLUMNS = 8  # more are split into several tables that repeat the first column
MAX_SUMMARY_COLUMNS = 4  # summary cells are wide: four mixes fill an A4 page


def column_chunks(count: int, most: int, keys: int = 1) -> list[list[int]]:
    """Indexes of the columns of each part of a table of `count` columns split so that no part
    has more than `most`: every part starts with the `keys` columns that name the row."""
    if count <= most:
        return [list(range(count))]
    rest = list(range(keys, count))
    size = max(most - keys, 1)
    parts = -(-len(rest) // size)
    size = -(-len(rest) // parts)  # even parts: 4 + 4, not 7 + 1
    return [[*range(keys), *rest[i : i + size]] for i in range(0, len(rest), size)]


def _table(t: ReportTable, verdicts: bool = False) -> str:
    """A plain table; with `verdicts`, a cell that is exactly PASS or FAIL is green or red.
    A table wider than a page is split into parts that repeat its first column."""
    caption = f'<p class="caption">{_e(t.caption)}</p>' if t.caption else ""
    parts = [] if t.rows else [f"<p>{DASH} none</p>"]  # not a heading row over nothing
    for keep in column_chunks(len(t.columns), MAX_TABLE_COLUMNS, t.key_columns) if t.rows else []:
        head = "".join(f'<th scope="col">{_e(t.columns[i])}</th>' for i in keep)
        body = "".join(
            "<tr>"
            + "".join(_table_cell(row[i] if i < len(row) else "", verdicts) for i in keep)
            + "</tr>"
            for row in t.rows
        )
        parts.append(
            f'<table class="plain"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        )
    body = f"<h3>{_e(t.title)}</h3>{caption}" + '<div class="gap"></div>'.join(parts)
    return f'<div class="{t.medium}-only">{body}</div>' if t.medium else body


def _category_axis(labels: list[str]) -> Callable[[float, float, int, str], XAxis]:
    def axis(lo: float, hi: float, target: int, title: str) -> XAxis:
        return XAxis([float(i) for i in range(len(labels))], labels, title)

    return axis


# distinct hues for up to 10 lines (Tableau 10), so block sizes never share a colour
LINE_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
               "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")  # fmt: skip


def _overlay(o: Overlay) -> str:
    """One dual-axis chart: throughput on the left, mean latency on the right (dashed, in the
    same colour), one line per scenario or block size."""
    x = [float(i) for i in range(len(o.x_ticks))]
    pick = "mbps" if o.unit == "MB/s" else "iops"
    left, right = [], []
    for i, line in enumerate(o.lines):
        color = LINE_COLORS[i % len(LINE_COLORS)]
        left.append(TimeSeries(line.label, getattr(line, pick), o.unit, color=color,
                               interval=getattr(line, f"{pick}_ci"),
                               flagged=line.flagged, marks=line.marks))  # fmt: skip
        right.append(TimeSeries(f"{line.label} latency", line.lat_mean_us, "µs", dashed=True,
                                color=color))  # fmt: skip
    chart = xy_chart(o.title, x, left, right=right, x_label=o.x_label,
                     x_axis=_category_axis(o.x_ticks), mark_max=False,
                     x_names=o.x_ticks)  # fmt: skip
    return f'<figure class="panel">{chart}</figure>'


def _distribution(d: Distribution) -> str:
    x = [float(i) for i in range(len(d.percentiles))]
    lines = [
        TimeSeries(f"level {line.label}", line.lat_mean_us, "µs",
                   color=LINE_COLORS[i % len(LINE_COLORS)])
        for i, line in enumerate(d.lines)
    ]  # fmt: skip
    names = [f"p{p}" if p != "100" else "max" for p in d.percentiles]
    title = f"{d.series}: latency percentiles ({d.latency})"
    chart = xy_chart(title, x, lines, x_label="percentile",
                     x_axis=_category_axis(names), mark_max=False, x_names=names,
                     log_y=True)  # fmt: skip
    return f'<details class="series dist"><summary>{_e(d.series)}</summary>{chart}</details>'


def _distributions(model: ReportModel) -> str:
    if not model.distributions:
        return ""
    parts = "".join(_distribution(d) for d in model.distributions)
    return (
        '<section id="distribution"><h2>Latency distribution</h2><p class="caption">Per '
        "series, the latency at each percentile of every load level, from the merged json+ "
        "histograms of all its jobs (never an average of percentiles)."
        f"{OPEN_HINT}</p>{parts}</section>"
    )


def _overlays(model: ReportModel) -> str:
    if not model.overlays:
        return ""
    parts = "".join(_overlay(o) for o in model.overlays)
    if not model.sections:  # a comparison: these are its workload charts
        caption = (
            '<p class="caption">Per workload, one line per scenario: throughput (solid, left '
            "axis) and mean latency (dashed, right axis) against the load level.</p>"
        )
        return f'<section id="workloads"><h2>Workloads</h2>{caption}{parts}</section>'
    return f'<section id="overlays"><h2>Curves together</h2>{parts}</section>'


def _tables(model: ReportModel) -> str:
    if not model.tables:
        return ""
    return (
        '<section id="tables"><h2>Tables</h2>' + "".join(map(_table, model.tables)) + "</section>"
    )


def _verdicts(model: ReportModel) -> str:
    if not model.verdicts:
        return ""
    tables = "".join(_table(t, verdicts=True) for t in model.verdicts)
    return f'<section id="verdicts"><h2>Acceptance verdicts</h2>{tables}</section>'


def _timelines(model: ReportModel) -> str:
    if not model.timelines:
        return ""
    singles = "".join(_timeline(t) for t in model.timelines if not t.series)
    ladders = [t for t in model.timelines if t.series]
    folded = "".join(
        f'<details class="series"><summary>{_e(t.series)}</summary>{_timeline(t)}</details>'
        for t in ladders
    )
    if folded:  # diagnostics of every level: on the page, not on paper
        folded = (
            f"<h3>Load ladders over time ({len(ladders)})</h3>"
            '<p class="caption">Each series\' levels one after the other, every level marked '
            f"where its logged seconds start.{OPEN_HINT}</p>"
            '<p class="caption print-only">Not printed: every series\' ladder is in the HTML '
            f'report.</p><div class="screen-only">{folded}</div>'
        )
    paper = "" if singles else ' class="screen-only"'  # ladders alone: not on paper
    return (
        f'<section id="timelines"{paper}><h2>Time series</h2><p class="caption">1-second '
        "samples of every point that has them.</p>"
        f"{singles}{folded}</section>"
    )


def render_html(model: ReportModel, every_chart: bool = False) -> str:
    """The whole report as one self-contained HTML document (inline CSS, SVG and a little JS).
    A big run's charts are drawn by the page (`lazycharts`) unless `every_chart` (the
    chart files of `--charts` and the Markdown that links them)."""
    anchors = _anchors(model.sections)
    big = not every_chart and lazycharts.is_big(model.sections, model.figures)
    lazy = lazycharts.LazyCharts() if big else None  # a big run's charts: drawn by the page
    body = [  # the order a customer reads: set-up, summary, seed tables, charts; then look-ups
        _title(model),
        _metadata(model),
        _notes(model.notes_box or model.notes),
        _summary(model, anchors),
        _verdicts(model),
        _tables(model),
        _overlays(model),
        figures_html(
            _seed_figures(model),
            lazy=None if lazy is None else lazy.figure,
            every_chart=every_chart,
        ),
        _sections(model, lazy, every_chart),
        # the histograms read after the curves they explain (the seed figures replace curves)
        figures_html(_histograms(model), "histograms", HISTOGRAMS),
        _distributions(model),
        _timelines(model),
        f'<section id="appendix"><h2>{appendix_title(model.audience)}</h2>',
        appendix.unprinted(model),
        appendix.provenance_section(model.provenance),
        appendix.all_notes(model),
        _appendix_tables(model),
        appendix.points_section(model),
        appendix.plan_section(model.plan_yaml, model.audience),
        appendix.jobs_section(model.job_files, model.job_series, model.audience),
        "</section>",
        f"<footer>Generated by arraybench {_e(model.arraybench_version)}.</footer>",
    ]
    block = "" if lazy is None else lazy.block()
    main = "\n".join(b for b in [*body, block] if b)
    script = lazycharts.SCRIPT if block else ""
    page = (
        f"{_head(model, bool(block))}<body>\n<main>\n{main}\n</main>\n"
        f"<script>{JS}{interact.SCRIPT}{pagedtable.SCRIPT}{script}</script>\n"
        "</body>\n</html>\n"
    )
    return name_charts(page)[0]  # every chart named as `report --charts` writes it
