"""Terminal text of the commands (`show`, `runs`, `hosts check`, `plan check`): tables as
TextTable records and lines as styled parts, for console.py to print. Nothing here prints;
the terminal's width comes in as an argument."""

from __future__ import annotations

import textwrap
import typing
from collections.abc import Sequence
from dataclasses import dataclass

import rich.box
from rich.cells import cell_len

from arraybench.units import format_latency, format_size, format_throughput

if typing.TYPE_CHECKING:
    from arraybench.plan.model import Plan
    from arraybench.report.show import ShowFacts
    from arraybench.run.checks import FioFound, HostsCheck
    from arraybench.run.outline import Outline, TargetFacts
    from arraybench.store.db import PointRecord, RunRecord

Line = tuple[tuple[str, str], ...]  # one terminal line: (text, style) pieces


@dataclass(frozen=True)
class TextTable:
    title: str
    columns: list[str]
    rows: list[list[str]]
    narrow: bool = False  # in the terminal's narrow box (console.narrow_box)
    justify: typing.Literal["left", "right"] = "left"  # every column's but the whole ones'
    whole: tuple[str, ...] = ()  # columns never wrapped (a point's key)
    after: str = ""  # a line under the table


SHOW_COLUMNS = ("#", "point", "workers", "qd", "throughput", "read", "write",
                "lat mean", "p50", "p99", "p99.9", "max")  # fmt: skip
NARROW_HEADERS = {"workers": "wk", "throughput": "total"}
NARROW_DROPPED = ("read", "write", "p50", "p99.9")
NARROW_BOX = 130  # under this width a wide table drops its vertical rules (console.narrow_box)
ALL_COLUMNS = 100  # under this width `show` keeps the columns that answer "how fast, how slow"
RICH_TABLE_MAX_ROWS = 1000  # rich lays out about 1,000 rows a second: more are drawn directly
SHOWN_PROBLEMS = 20  # blocks listed per host under `show` (JSON and the report list more)
SHOW_WIDTH = 100  # the lines under `show`'s table fit a 100-column terminal (or a narrower one)
HANGING_INDENT = "     "  # a long line's continuation, under its `#seq`


def _point_cells(p: PointRecord) -> list[str]:
    def lat(name: str) -> str:
        return format_latency(p.metric("total", name))

    if p.pattern == "metadata":  # ops/s of their kind; fio's read/write split means nothing
        total, read, write = format_throughput(p.throughput("total"), "ops/s"), "–", "–"
    else:
        total, read, write = (format_throughput(p.throughput(scope), p.unit)
                              for scope in ("total", "read", "write"))  # fmt: skip
    return [
        str(p.seq), p.key, str(p.workers), str(p.iodepth), total, read, write,
        lat("lat_mean_us"), lat("lat_p50_us"), lat("lat_p99_us"), lat("lat_p999_us"),
        lat("lat_max_us"),
    ]  # fmt: skip


def points_table(run_id: str, points: Sequence[PointRecord], width: int) -> TextTable | str:
    """`show`'s table; past RICH_TABLE_MAX_ROWS rows, the text of a table laid out in one pass."""
    title = f"points of {run_id}"
    rows = [_point_cells(p) for p in points]
    if len(rows) > RICH_TABLE_MAX_ROWS:
        return _plain(title, rows, width)
    narrow = width < NARROW_BOX
    # under 100 columns: the columns that answer "how fast, how slow" (--format csv has all)
    keep = [k for k, c in enumerate(SHOW_COLUMNS)
            if width >= ALL_COLUMNS or c not in NARROW_DROPPED]  # fmt: skip
    headers = [SHOW_COLUMNS[k] for k in keep]
    if narrow:
        headers = [NARROW_HEADERS.get(c, c) for c in headers]
    dropped = "read, write, p50, p99.9: in a wider terminal or with --format csv"
    return TextTable(title, headers, [[r[k] for k in keep] for r in rows], narrow, "right",
                     ("point",), dropped if len(keep) < len(SHOW_COLUMNS) else "")  # fmt: skip


def _plain(title: str, rows: list[list[str]], width: int) -> str:
    """Too many rows for rich: boxed, or (narrow terminal) with the main columns and plain
    spacing, so that no line is wider than the terminal."""
    text = plain_table(title, SHOW_COLUMNS, rows)
    if max(cell_len(line) for line in text.splitlines()) > width:
        keep = [k for k, c in enumerate(SHOW_COLUMNS) if c not in NARROW_DROPPED]
        columns = [SHOW_COLUMNS[k] for k in keep]
        text = plain_table(title, columns, [[r[k] for k in keep] for r in rows], boxed=False)
    return text


def plain_table(
    title: str, columns: Sequence[str], rows: list[list[str]], boxed: bool = True
) -> str:
    """The points table in rich's heavy-head box, laid out in one pass (never cropped)."""
    widths = [max(cell_len(c), *(cell_len(r[k]) for r in rows)) for k, c in enumerate(columns)]

    def line(cells: Sequence[str], edge: str) -> str:
        text = []
        for k, (cell, width) in enumerate(zip(cells, widths, strict=True)):
            pad = " " * (width - cell_len(cell))
            text.append(cell + pad if k == 1 else pad + cell)  # the point key is left-aligned
        if not edge:
            return "  ".join(text) + "\n"
        return f"{edge} " + f" {edge} ".join(text) + f" {edge}\n"

    if not boxed:  # two spaces between columns, one rule under the header
        plain = [line(columns, "").strip("\n"), "  ".join("─" * w for w in widths)]
        plain += [line(r, "").strip("\n") for r in rows]
        return "\n".join([title, *(text.rstrip() for text in plain)]) + "\n"
    spans = [w + 2 for w in widths]
    head = rich.box.HEAVY_HEAD
    parts = [title + "\n", head.get_top(spans) + "\n", line(columns, head.head_vertical),
             head.get_row(spans, "head") + "\n"]  # fmt: skip
    parts += [line(r, head.mid_vertical) for r in rows]
    parts.append(head.get_bottom(spans) + "\n")
    return "".join(parts)


def hanging(
    text: str, width: int, head: tuple[str, str] | None = None, style: str = ""
) -> list[Line]:
    """One long line (after a styled `head`) as a hanging paragraph: its first line at the
    margin, the rest indented, none wider than the terminal or SHOW_WIDTH columns."""
    prefix = head[0] if head else ""
    width = max(40, min(width, SHOW_WIDTH))
    lines = textwrap.wrap(prefix + text, width, subsequent_indent=HANGING_INDENT,
                          break_on_hyphens=False)  # fmt: skip
    out: list[Line] = []
    for n, line in enumerate(lines or [prefix]):
        if head and n == 0:  # the head's own style, the rest of the line the text's
            out.append((head, (line[len(prefix) :], style)))
        else:
            out.append(((line, style),))
    return out


def show_lines(facts: ShowFacts, width: int) -> list[Line]:
    """The lines under `show`'s table: why a figure may not be trusted (JSON: `flags`), the
    events' impacts, the integrity checks."""
    lines: list[Line] = []
    for p in facts.points:
        for f in facts.flags.get(p.id, []):  # a remark keeps the point in the headline
            head = ("flagged:", "yellow") if f.grade == "invalidating" else ("remark:", "cyan")
            lines += hanging(f" #{p.seq} {p.key}: {f.kind}: {f.why}; {f.change}", width, head)
    for point, said in facts.events:
        for text in said:
            lines += hanging(f" #{point.seq} {point.key}: {text}", width)
    for row in facts.integrity:
        bad = row["error"] or row["lost"] or row["corrupt"] or row["unreadable"]
        line = f" #{row['seq']} {row['point']}: {row['summary']}"  # the summary names the check
        lines += hanging(line, width, style="red" if bad else "")
        for p in row["problems"][:SHOWN_PROBLEMS]:
            lines.append(((f"   offset {p['offset']:,}: {p['kind']} (acknowledged generation "
                           f"{p['expected_generation']})", ""),))  # fmt: skip
        if len(row["problems"]) > SHOWN_PROBLEMS:
            lines.append(((f"   ... {len(row['problems']) - SHOWN_PROBLEMS} more: "
                           "--format json or the report lists them", ""),))  # fmt: skip
    return lines


def points_text(run: RunRecord, done: int) -> str:
    """done/total, the total as known: a complete run needed what it ran (SNIA rounds steady
    early, adaptive levels skipped); runs of older versions did not count special tests."""
    total = done if run.status == "complete" else max(done, run.total_points)
    return f"{done}/{total}"


def runs_table(rows: Sequence[tuple[RunRecord, int]], results: str, width: int) -> TextTable:
    table = [[run.id, run.plan_name, run.scenario,
              f"{run.status} (damaged)" if run.damaged else run.status,
              points_text(run, done), run.started[:16].replace("T", " ")]
             for run, done in rows]  # fmt: skip
    columns = ["run id", "plan", "scenario", "status", "points", "started"]
    return TextTable(f"runs in {results}", columns, table, narrow=width < NARROW_BOX)


def fio_found_lines(fio: FioFound) -> list[str]:
    """plan check: the fio chosen, each feature the plan asks of it (`ok` or `missing:`, the
    release it needs and the one found), each host's fio."""
    where = f"{fio.binary} " if fio.binary else ""
    lines = [f"fio: {where}({fio.version}); another one: --fio PATH or $ARRAYBENCH_FIO"]
    for use in fio.features:  # wrapped as the outline above: 100 columns
        said = f"  {'ok' if use.present else 'missing:'} {use.line()}"
        lines += textwrap.wrap(said, 100, subsequent_indent="    ", break_on_hyphens=False)
    return lines + [f"  host {host}: {version}" for host, version in fio.hosts]


def hosts_table(check: HostsCheck) -> TextTable:
    rows = []
    for spec, c in check.hosts:
        offset = "–" if c.clock_offset_ms is None else (
            f"{c.clock_offset_ms:+.1f} ms ± {c.clock_uncertainty_ms or 0:.1f}")  # fmt: skip
        rows.append([c.name, spec.endpoint, "yes" if c.reachable else "NO",
                     c.fio_version or "–", offset, str(len(c.problems))])  # fmt: skip
    columns = ["host", "address", "reachable", "fio", "clock offset", "problems"]
    return TextTable(f"hosts of {check.plan_name}", columns, rows)


def _wrapped(text: str, indent: int, width: int) -> list[str]:
    pad = " " * indent
    return textwrap.wrap(text, width, initial_indent=pad, subsequent_indent=pad + "  ",
                         break_on_hyphens=False) or [pad]  # fmt: skip


def _target_text(path: str, facts: TargetFacts) -> str:
    kind = facts.kinds.get(path, "on the hosts")
    if path in facts.layout:
        return f"{path} (new file: {format_size(facts.layout[path])} written at start)"
    if path in facts.blocks:
        return f"{path} (block device, {format_size(facts.blocks[path])})"
    return f"{path} ({kind})"


def outline_lines(plan: Plan, outline: Outline, facts: TargetFacts, width: int) -> list[str]:
    """plan check: the targets' verdict, then every phase the run will execute with its time."""
    targets = [_target_text(t.path, facts) for t in plan.targets]
    lines = _wrapped(f"plan {plan.name} is valid; targets: {', '.join(targets) or 'on the hosts'}",
                     0, width)  # fmt: skip
    lines += _wrapped(f"the run executes {len(outline.phases)} phases, {outline.span.text()}:",
                      0, width)  # fmt: skip
    for phase in outline.phases:
        lines.append(f"  {phase.kind:<13}{phase.span.text()}")
        for text in (phase.title, *phase.details):
            lines += _wrapped(text, 15, width)
    for note in (*facts.warnings, *outline.notes):
        lines += _wrapped(f"note: {note}", 0, width)
    return lines
