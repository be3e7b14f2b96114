"""The HTML report's appendix: what a reader looks up after the charts (where the numbers
came from, every note, the points, the plan and the job files), and what the printout leaves
to the page."""

from __future__ import annotations

import math

from arraybench.report.model import PointRow, ReportModel
from arraybench.report.pointstable import (
    PointsLayout,
    PointsTable,
    heading_rows,
    id_cells,
    points_layout,
    value,
)
from arraybench.report.render.escape import for_html as _e
from arraybench.report.render.html import pagedtable
from arraybench.units import format_number as format_value

DASH = "–"
PRINTED_POINTS = 200  # above: the PDF leaves the points table out (30 rows a page)
LARGE_RUN_POINTS = 2000  # above: the HTML's points tables show totals (all columns in CSV/xlsx)


def unprinted(model: ReportModel) -> str:
    """On paper, what the printout leaves to the HTML report."""
    ladders = [t for t in model.timelines if t.series]
    if not ladders:
        return ""
    return (f'<p class="caption print-only">Not printed: the load ladders over time '
            f"({len(ladders)} charts, every level of a series one after the other): in the "
            "HTML report.</p>")  # fmt: skip


def all_notes(model: ReportModel) -> str:
    """Every note in full, when the box above the summary held only their counts."""
    if not model.notes_box or not model.notes:
        return ""
    items = "".join(f"<li>{_e(n)}</li>" for n in model.notes)
    return f'<section id="all-notes"><h3>Notes ({len(model.notes)})</h3><ul>{items}</ul></section>'


def provenance_section(provenance: list[tuple[str, str]]) -> str:
    if not provenance:
        return ""
    said = {"arraybench", "fio", "started", "finished"}  # in the set-up list above
    rows = "".join(
        f'<tr><th scope="row">{_e(key)}</th><td>{_e(value)}</td></tr>'
        for key, value in provenance
        if key not in said
    )
    return (
        '<section id="provenance"><h3>Where the numbers came from</h3>'
        '<p class="caption">Tools, hosts and targets, as recorded when the run started.</p>'
        f'<table class="provenance"><tbody>{rows}</tbody></table></section>'
    )


def _num(v: float | None) -> str:
    # no attribute: a 10,000-point report stays small; the table sorts by the number shown
    if v is None or not math.isfinite(v):
        return f"<td>{DASH}</td>"
    return f"<td>{format_value(v)}</td>"


def _shown(v: float | None) -> str | None:
    """A paged table's cell as `_num` shows it; None for a dash."""
    return None if v is None or not math.isfinite(v) else format_value(v)


def _span(name: str, n: int) -> str:
    return f' {name}="{n}"' if n > 1 else ""


def points_hint(audience: str) -> str:
    """How to use the points table: sorting on the page only (never printed), where every
    raw column is for the engineer only (a command)."""
    hint = '<span class="screen-only-inline">Click a column heading to sort. </span>'
    if audience == "engineer":
        hint += "All raw columns: <code>arraybench show RUN --format csv</code>."
    return hint


def _points_table(points: list[PointRow], layout: PointsLayout, table: PointsTable) -> str:
    groups = "".join(
        f'<th scope="colgroup" colspan="{len(g.columns)}" class="group">{_e(g.title)}</th>'
        for g in table.groups
    )
    rows_of_heads = heading_rows(table.groups)
    depth = len(rows_of_heads)
    ids = "".join(f'<th scope="col" rowspan="{depth}">{_e(c)}</th>' for c in layout.id_columns)
    second = ""
    for k, heads in enumerate(rows_of_heads):
        cells = "".join(
            f'<th scope="col"{_span("colspan", cs)}{_span("rowspan", rs)}>{_e(text)}</th>'
            for text, cs, rs in heads
        )
        second += f"<tr>{ids if k == 0 else ''}{cells}</tr>"
    top = f'<tr><th colspan="{len(layout.id_columns)}" class="group"></th>{groups}</tr>'
    columns = [(g, c) for g in table.groups for c in g.columns]
    if len(points) > pagedtable.PAGED_ROWS:  # drawn a page at a time from one data block
        row_heads = [id_cells(p, layout.id_columns) for p in points]
        row_cells = [[_shown(value(p, g, c)) for g, c in columns] for p in points]
        thead = f"<thead>{top}{second}</thead>"
        table_open = '<div class="points-wrap"><table class="points">'
        return pagedtable.paged_table(table_open, thead, row_heads, row_cells) + "</div>"
    rows = []
    for p in points:
        cells = "".join(f"<th>{_e(v)}</th>" for v in id_cells(p, layout.id_columns))
        values = [value(p, g, c) for g, c in columns]
        # a point with no figure in this group (a write point's read columns): not on paper
        none = ' class="none"' if all(v is None or not math.isfinite(v) for v in values) else ""
        rows.append(f"<tr{none}>{cells}{''.join(map(_num, values))}</tr>")
    body = "\n".join(rows)
    return (
        '<div class="points-wrap"><table class="points sortable">'
        f"<thead>{top}{second}</thead><tbody>\n{body}\n</tbody></table></div>"
    )


def points_section(model: ReportModel) -> str:
    layout = points_layout(model.points, totals_only=len(model.points) > LARGE_RUN_POINTS)
    fixed = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in layout.fixed)
    fixed = f'<dl class="fixed">{fixed}</dl>' if fixed else ""
    absent = (
        f'<p class="caption">No {" or ".join(a.lower() for a in layout.absent)} I/O in these '
        "points: those columns are left out.</p>"
        if layout.absent and layout.tables
        else ""
    )
    if layout.totals_only:
        absent = (
            f'<p class="caption">{len(model.points):,} points: the totals are shown here; the '
            "read and write columns of every point are in the CSV and the Excel report.</p>"
        )
    if len(model.points) > pagedtable.PAGED_ROWS:
        absent += (
            f'<p class="caption screen-only">Shown {pagedtable.PAGE_ROWS} rows a page (the '
            "buttons under each table); sorting sorts every row.</p>"
        )
    tables = "".join(_points_table(model.points, layout, t) for t in layout.tables)
    if len(model.points) > PRINTED_POINTS:  # pages of rows: the PDF says where they are
        absent += (
            f'<p class="caption print-only">{len(model.points):,} points: their table is in the '
            "HTML report, the CSV and the Excel report (left out of this printout).</p>"
        )
        tables = f'<div class="screen-only">{tables}</div>'
    return (
        f'<section id="points"><h3>Points ({len(model.points)})</h3>{fixed}'
        '<p class="caption">Every measured point; level = workers per host x iodepth. '
        f'{points_hint(model.audience)}</p><p class="caption print-only">Printed: each '
        f"group's table without the points that have no figure in it.</p>{absent}{tables}"
        "</section>"
    )


def plan_section(plan_yaml: str, audience: str = "engineer") -> str:
    if audience != "engineer":  # a customer's report holds no plan keys
        return ""
    text = _e(plan_yaml) if plan_yaml.strip() else DASH
    return f'<section id="plan"><h3>Plan</h3><pre class="plan">{text}</pre></section>'


def jobs_section(
    job_files: dict[str, str], job_series: dict[str, str], audience: str = "engineer"
) -> str:
    """Every job file; on paper the first whole and, for each other series, the lines its
    first job file changes (the rest of a series differs in its load level only), so that a
    long plan does not print pages of the same options. None in a customer's report."""
    if audience != "engineer":
        return ""
    seen: set[str] = set()
    items, firsts = [], []
    for key, text in job_files.items():
        series = job_series.get(key, key)
        if series not in seen:
            firsts.append((key, text))
        seen.add(series)
        items.append(f"<details><summary>{_e(key)}</summary><pre>{_e(text)}</pre></details>")
    head = f'<section id="jobs"><h3>Job files ({len(job_files)})</h3>'
    if len(firsts) == len(job_files) == len(items) and len(firsts) <= 1:
        return f"{head}{''.join(items) or DASH}</section>"
    return (f'{head}<div class="screen-only">{"".join(items)}</div>'
            f"{_printed_jobs(firsts, len(job_files))}</section>")  # fmt: skip


def _printed_jobs(firsts: list[tuple[str, str]], total: int) -> str:
    (key, text), rest = firsts[0], firsts[1:]
    known = set(text.splitlines())
    changes = [f"{k}: " + "  ".join(line for line in t.splitlines()
                                    if line not in known and not line.startswith(";"))
               for k, t in rest]  # fmt: skip
    said = (f"Printed: {key}'s job file, then the options the first job file of each other "
            f"series changes ({len(firsts)} series, {total} job files: every one in the HTML "
            "report and in its point's folder).")  # fmt: skip
    return (
        f'<div class="print-only"><p class="caption">{_e(said)}</p><pre>{_e(text)}</pre>'
        f'<pre class="changes">{_e(chr(10).join(changes))}</pre></div>'
    )
