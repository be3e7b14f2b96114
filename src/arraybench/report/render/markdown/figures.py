"""The seed figures and the exported charts in the Markdown report.

Markdown has no charts of its own, so each figure (report/sections/seedfigures.py, the latency
histograms, compare's overlaid time series) is given as the table of the numbers it draws
(a long time series in brief: its samples, lowest, mean and highest value per line); and when
the report is written with `--charts DIR`, every chart of the HTML report is linked as an
image (its PNG, beside a link to its SVG) under the same stable name, relative to the
Markdown file, so the page shows the charts wherever the two folders travel together.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from arraybench.report.model import Figure, ReportModel
from arraybench.report.render.chartfiles.export import name_charts
from arraybench.report.render.html.page import format_value, render_html

MAX_ROWS = 60  # a figure's table rows in Markdown (an xy curve holds a few dozen points)

Escape = Callable[[object], str]
Table = Callable[..., str]


def _rows_table(fig: Figure, escape: Escape, table: Table) -> str:
    columns = [fig.x_label, *(f"{s.label} ({fig.unit})" for s in fig.series)]
    if fig.form == "heatmap":
        columns = [f"{fig.y_label or 'row'} \\ {fig.x_label}", *fig.x_ticks]
        rows = [[s.label, *(format_value(v) for v in s.values)] for s in fig.series]
        return table([escape(c) for c in columns], rows)
    if fig.form == "xy":
        xs = fig.series[0].x or [] if fig.series else []
        ticks = [format_value(x) for x in xs]
    else:
        ticks = list(fig.x_ticks)
    rows = [[tick, *(format_value(s.values[i] if i < len(s.values) else None)
                     for s in fig.series)] for i, tick in enumerate(ticks[:MAX_ROWS])]  # fmt: skip
    return table([escape(c) for c in columns], rows)


def _in_brief(fig: Figure, escape: Escape) -> str:
    """A time figure: per line its samples, lowest, mean and highest value."""
    lines = []
    for s in fig.series:
        known = [v for v in s.values if v is not None]
        if not known:
            continue
        lines.append(f"- {escape(s.label)}: {len(known)} samples; {escape(fig.unit)} lowest "
                     f"{format_value(min(known))}, mean {format_value(sum(known) / len(known))}, "
                     f"highest {format_value(max(known))}")  # fmt: skip
    return "\n".join(lines)


def figures_markdown(model: ReportModel, escape: Escape, table: Table) -> str:
    """## Figures: each figure's title, caption and numbers, under its group."""
    if not model.figures:
        return ""
    parts, group = ["## Figures"], None
    for fig in model.figures:
        if fig.group != group:
            group = fig.group
            parts.append(f"### {escape(group or 'Figures')}")
        parts.append(f"**{escape(fig.title)}**" + (f": {escape(fig.caption)}" if fig.caption
                                                    else ""))  # fmt: skip
        body = _in_brief(fig, escape) if fig.form == "time" else _rows_table(fig, escape, table)
        if fig.ceiling is not None:  # the chart's dashed line, said
            body += f"\n\nFabric ceiling: {escape(fig.ceiling[1])}."
        parts.append(body)
    return "\n\n".join(p for p in parts if p)


def charts_markdown(model: ReportModel, base: Path | None, escape: Escape) -> str:
    """## Charts: every chart written by `--charts DIR`, as an image linked relative to `base`
    (the Markdown file's folder); empty without `--charts`."""
    if not model.chart_dir:
        return ""
    _, charts = name_charts(render_html(model, every_chart=True))
    if not charts:
        return ""
    folder = Path(model.chart_dir)
    where = os.path.relpath(folder, base) if base is not None else str(folder)
    lines = [f"## Charts\n\nEvery chart as PNG and SVG in `{where}` (`--charts`):"]
    for chart in charts:
        png = Path(where, f"{chart.name}.png").as_posix()
        svg = Path(where, f"{chart.name}.svg").as_posix()
        lines.append(f"![{escape(chart.name)}]({png})  \n[{escape(chart.name)}.svg]({svg})")
    return "\n\n".join(lines)
