"""The points table for people: grouped headings with units, fixed parameters said once.

The raw columns (`read_iops`, `total_lat_p999_us`, ...) stay in CSV and JSON. For a reader the
same numbers are laid out as in the public array reports: what all points share (targets,
engine, block size) in one line above the table, then per direction a group of IOPS, MB/s
and latency (mean, p99, p99.9, max), and the host's own view (kernel counters, CPU). Each
table holds at most `MAX_TABLE_COLUMNS` value columns so it fits an A4 page: a run's groups
are split into several tables that repeat the point's name, never cut at the page edge.
"""

from __future__ import annotations

from dataclasses import dataclass

from arraybench.report.model import PointRow

MAX_TABLE_COLUMNS = 6  # one direction a table: IOPS, MB/s and four latencies fit A4
LATENCY = "latency (µs)"


@dataclass(frozen=True)
class Column:
    key: str  # the raw name in PointRow.values
    heading: str  # "IOPS", "p99.9"
    unit: str  # "IOPS", "MB/s", "µs", "%"
    under: str = ""  # a shared heading above several columns: "latency (µs)"


@dataclass(frozen=True)
class ColumnGroup:
    title: str  # "Read", "Write", "Total", "Host"
    columns: list[Column]
    scope: str = ""  # "read", "write", "total": its values mean nothing when it did no I/O


@dataclass(frozen=True)
class PointsTable:
    groups: list[ColumnGroup]  # one or two groups: one table on the page


@dataclass(frozen=True)
class PointsLayout:
    fixed: list[tuple[str, str]]  # ("Targets", "/dev/sdb"), said once above the tables
    id_columns: list[str]  # "Series", "Level", and any parameter that varies
    tables: list[PointsTable]
    absent: list[str]  # groups left out because no point has a value there ("Write")
    totals_only: bool = False  # a large run: Read and Write left to the CSV and Excel


def _scope(scope: str, title: str) -> ColumnGroup:
    lat = [("lat_mean_us", "mean"), ("lat_p99_us", "p99"), ("lat_p999_us", "p99.9"),
           ("lat_max_us", "max")]  # fmt: skip
    columns = [Column(f"{scope}_iops", "IOPS", "IOPS"), Column(f"{scope}_mbps", "MB/s", "MB/s")]
    columns += [Column(f"{scope}_{name}", title, "µs", LATENCY) for name, title in lat]
    return ColumnGroup(title, columns, scope)


GROUPS = [
    _scope("read", "Read"),
    _scope("write", "Write"),
    _scope("total", "Total"),
    ColumnGroup(
        "Host (kernel counters of the target devices, CPU)",
        [
            Column("kernel_iops", "kernel IOPS", "IOPS"),
            Column("kernel_mbps", "kernel MB/s", "MB/s"),
            Column("kernel_vs_fio_pct", "kernel vs fio", "%"),
            Column("array_vs_fio_pct", "array vs fio", "%"),  # `arraybench attach`
            Column("cpu_busy_pct", "CPU busy", "%"),
        ],
    ),
]


def heading(column: Column) -> str:
    """A column heading on one line, with its unit: `IOPS`, `p99 latency (µs)`, `CPU busy (%)`."""
    if column.under == LATENCY:
        return f"{column.heading} latency (µs)"
    if column.heading.endswith(column.unit):
        return column.heading
    return f"{column.heading} ({column.unit})"


def heading_rows(groups: list[ColumnGroup]) -> list[list[tuple[str, int, int]]]:
    """The heading rows under the group titles, as (text, colspan, rowspan): `IOPS`, `MB/s`,
    `latency (µs)` over `mean`, `p99`, `p99.9`, `max`. One row when nothing is shared."""
    columns = [c for g in groups for c in g.columns]
    if not any(c.under for c in columns):
        return [[(heading(c), 1, 1) for c in columns]]
    upper: list[tuple[str, int, int]] = []
    lower: list[tuple[str, int, int]] = []
    for i, c in enumerate(columns):
        if not c.under:
            upper.append((heading(c), 1, 2))
            continue
        lower.append((c.heading, 1, 1))
        if i == 0 or columns[i - 1].under != c.under:  # groups start with IOPS: never shared
            span = 1
            while i + span < len(columns) and columns[i + span].under == c.under:
                span += 1
            upper.append((c.under, span, 1))
    return [upper, lower]


def value(p: PointRow, group: ColumnGroup, column: Column) -> float | None:
    """A cell's number; None (a dash) in a direction the point did no I/O in, not 0 IOPS and
    an empty latency."""
    if group.scope and p.values.get(f"{group.scope}_ios") == 0:
        return None
    return p.values.get(column.key)


def _has_values(points: list[PointRow], group: ColumnGroup) -> bool:
    return any(value(p, group, c) for p in points for c in group.columns)


def _fixed_and_ids(points: list[PointRow]) -> tuple[list[tuple[str, str]], list[str]]:
    params = (("Targets", lambda p: p.targets), ("Engine", lambda p: p.engine),
              ("Block size", lambda p: p.block_size))  # fmt: skip
    fixed, ids = [], ["Series", "Level"]
    for name, get in params:
        seen = {get(p) for p in points}
        if len(seen) == 1:
            value = seen.pop()
            if value:
                fixed.append((name, value))
        elif len(seen) > 1:
            ids.append(name)
    return fixed, ids


def id_cells(p: PointRow, id_columns: list[str]) -> list[str]:
    values = {"Series": p.series, "Level": p.level, "Targets": p.targets, "Engine": p.engine,
              "Block size": p.block_size}  # fmt: skip
    return [values[c] for c in id_columns]


def points_layout(points: list[PointRow], *, totals_only: bool = False) -> PointsLayout:
    fixed, ids = _fixed_and_ids(points)
    groups = GROUPS[2:] if totals_only else GROUPS
    present = [g for g in groups if _has_values(points, g)]
    absent = [] if totals_only else [g.title for g in GROUPS[:3] if g not in present]
    tables: list[PointsTable] = []
    for group in present:
        last = tables[-1].groups if tables else None
        if (
            last is not None
            and sum(len(g.columns) for g in last) + len(group.columns) <= MAX_TABLE_COLUMNS
        ):
            last.append(group)
        else:
            tables.append(PointsTable([group]))
    return PointsLayout(fixed, ids, tables, absent, totals_only)


_NAMES = {"ios": ("I/Os", ""), "bytes": ("bytes", ""), "iops": ("IOPS", ""), "mbps": ("MB/s", ""),
          "lat_mean_us": ("mean latency", "µs"), "lat_p50_us": ("p50 latency", "µs"),
          "lat_p99_us": ("p99 latency", "µs"), "lat_p999_us": ("p99.9 latency", "µs"),
          "lat_max_us": ("max latency", "µs")}  # fmt: skip
_HOST = {"kernel_iops": "kernel IOPS", "kernel_mbps": "kernel MB/s", "cpu_busy_pct": "CPU busy (%)",
         "kernel_vs_fio_pct": "kernel vs fio (%)",
         "array_vs_fio_pct": "array vs fio (%)"}  # fmt: skip


def column_title(raw: str) -> str:
    """A raw column name for people: `read_lat_p999_us` -> `Read p99.9 latency (µs)`."""
    if raw in _HOST:
        return _HOST[raw]
    scope, _, name = raw.partition("_")
    if name in _NAMES and scope in ("read", "write", "total"):
        text, unit = _NAMES[name]
        return f"{scope.title()} {text}" + (f" ({unit})" if unit else "")
    return raw
