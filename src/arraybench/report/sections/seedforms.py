"""Figure builders for CSCS (003) and HUS VM (001), in their reports' own forms.

- CSCS: workloads measured at one load level each are bars, not one-dot curves: per family
  (IOPS: random 4 KiB, Bandwidth: sequential 1 MiB) one bar chart of its operations, one bar
  per set-up (plan `scenarios:`, else the run's scenario label); the metadata test as bars of
  operations per second (create, stat, delete) against threads.
- HUS VM group 2: per plan `chart` (one mix, engine and depth), three line charts against
  numjobs, IOPS, MB/s and mean latency, one line per block size (a log2 axis when the levels
  are powers of 2); group 1 (the write cliff): MB/s against time beside its IOPS timeline.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

from arraybench.analysis.metadata import OP_LABELS, MetadataRow
from arraybench.finding_kinds import CLIFF, METADATA
from arraybench.records import Finding, PointRecord
from arraybench.report.build import mix_sort_key, series_of
from arraybench.report.model import Figure, FigureSeries, Timeline
from arraybench.report.sections.special import quantisation_caption
from arraybench.units import format_size

GRID = ("random", "sequential")
THROUGHPUTS = (("IOPS", "iops"), ("MB/s", "mbps"))


def is_pow2_ladder(levels: list[int]) -> bool:
    return len(levels) >= 3 and all(v > 0 and v & (v - 1) == 0 for v in levels)


def single_level_bars(points: list[PointRecord], setup: str) -> tuple[list[Figure], set[str]]:
    """CSCS: every series of one level -> per family of two or more bars (operations x
    set-ups), its IOPS or MB/s per operation, one bar per set-up (plan scenario); and the
    families drawn (a lone bar says nothing the summary does not: AERODISK's one-level
    workloads stay as they are)."""
    grid = [p for p in points if p.pattern in GRID]
    series = series_of(grid)
    levels = [len({(p.workers, p.iodepth) for p in pts}) for pts in series.values()]
    if not series or any(n != 1 for n in levels):
        return [], set()
    families: OrderedDict[str, list[PointRecord]] = OrderedDict()
    for pts in series.values():
        families.setdefault(pts[0].family, []).append(pts[0])
    figures, drawn = [], set()
    for family, firsts in families.items():
        mixes = sorted({p.mix for p in firsts}, key=mix_sort_key)
        setups = list(dict.fromkeys(p.scenario or setup for p in firsts))
        if len(mixes) * len(setups) < 2:
            continue
        drawn.add(family)
        level = f"{firsts[0].workers} workers x iodepth {firsts[0].iodepth}"
        for unit, metric in THROUGHPUTS:
            if unit != firsts[0].unit:  # the IOPS tests in IOPS, the bandwidth tests in MB/s
                continue
            bars = []
            for name in setups:
                at = {p.mix: p for p in firsts if (p.scenario or setup) == name}
                bars.append(FigureSeries(name, [at[m].metric("total", metric) if m in at
                                                else None for m in mixes]))  # fmt: skip
            figures.append(Figure(
                "bars", f"{family}: {unit} per operation", "operation", unit, mixes, bars,
                caption=f"one load level ({level}); one bar per set-up",
                group="Per operation and set-up",
            ))  # fmt: skip
    return figures, drawn


def metadata_bars(findings: list[Finding]) -> list[Figure]:
    """CSCS's mdtest charts (its paper's figures 7-12): operations per second against the
    number of tasks (threads on fio), one bar per operation, and as lines one figure per
    operation (create, stat, read, remove), directories and files its lines. Mean latency
    beside them where the tool measured it (fio; mdtest reports rates only)."""
    # mdtest's tree rows stay in the tables: CSCS's figures are of the operations asked
    rows = [row for data in METADATA.among(findings) for row in data["rows"]
            if not row["op"].startswith("tree-")]  # fmt: skip
    if not rows:
        return []
    mdtest = any(r.get("tool") == "mdtest" for r in rows)
    who, x_label = ("tasks", "tasks per node") if mdtest else ("threads", "threads")
    threads = sorted({r["threads"] for r in rows})
    ops = list(dict.fromkeys(r["op"] for r in rows))
    by = {(r["op"], r["threads"]): r for r in rows}

    def value(op: str, t: int, metric: str) -> float | None:
        row = by.get((op, t))
        figure = row.get(metric) if row is not None else None
        return float(figure) if isinstance(figure, (int, float)) else None

    def series(names: list[str], metric: str) -> list[FigureSeries]:
        return [FigureSeries(OP_LABELS.get(op, op), [value(op, t, metric) for t in threads])
                for op in names]  # fmt: skip

    ticks = [str(t) for t in threads]
    tool = "mdtest's SUMMARY rate, the mean over its iterations" if mdtest else "fio's phases"
    # the table's caveat travels with the chart drawn from the same rates (it is exported and
    # pasted alone): quantised counts of a few ms must not read as measured rates (its advice,
    # plan keys, stays with the table)
    caveat = quantisation_caption([MetadataRow(**r) for r in rows]).split("; more ")[0]
    caption = f"operations per second, all {who} together ({tool})"
    figures = [
        Figure("bars", f"Metadata test: operations per second by {who}", x_label, "ops/s",
               ticks, series(ops, "ops_per_s"),
               caption=f"{caption}; {caveat}" if caveat else caption, group="Metadata test"),
    ]  # fmt: skip
    # one figure per operation, directories and files its two lines (CSCS's figures 7-12:
    # one per operation): a stat runs at 100 times a create, one axis would flatten creates
    for what, names in (("create", ("dir-create", "create")), ("stat", ("dir-stat", "stat")),
                        ("read", ("read",)), ("remove", ("dir-delete", "delete"))):  # fmt: skip
        present = [op for op in names if op in ops]
        if present:
            figures.append(Figure("lines", f"Metadata test: {what} operations per second by "
                                  f"{who}", x_label, "ops/s", ticks, series(present, "ops_per_s"),
                                  log_x=is_pow2_ladder(threads),
                                  caption=f"{what}: one line per object kind (directories, files)",
                                  group="Metadata test"))  # fmt: skip
    if any(r.get("lat_mean_us") is not None for r in rows):
        latency = series(ops, "lat_mean_us")
        figures.append(Figure("bars", f"Metadata test: mean latency by {who}", x_label, "µs",
                              ticks, latency, group="Metadata test"))  # fmt: skip
    return figures


def chart_triples(points: list[PointRecord], keys: Mapping[str, str]) -> list[Figure]:
    """HUS VM group 2: per plan chart, IOPS, MB/s and mean latency against numjobs, one line
    per block size."""
    charts: OrderedDict[str, list[list[PointRecord]]] = OrderedDict()
    for pts in series_of([p for p in points if p.pattern in GRID]).values():
        key = keys.get(pts[0].workload)
        if key:
            charts.setdefault(key, []).append(pts)
    figures = []
    for title, curves in charts.items():
        levels = sorted({p.workers for pts in curves for p in pts})
        depth = curves[0][0].iodepth
        log = is_pow2_ladder(levels)
        x_label = f"numjobs (iodepth {depth})"
        several = len({pts[0].hosts or 1 for pts in curves}) > 1  # group 3: a host ladder
        for unit, metric in (*THROUGHPUTS, ("µs", "lat_mean_us")):
            lines = []
            for pts in curves:
                at = {p.workers: p for p in pts}
                n = pts[0].hosts or 1
                lines.append(
                    FigureSeries(
                        format_size(pts[0].bs) + (f", {n} host{'s' * (n > 1)}" if several else ""),
                        [at[w].metric("total", metric) if w in at else None for w in levels],
                    )
                )
            what = "mean latency" if unit == "µs" else unit
            ticks = [str(w) for w in levels]
            figures.append(Figure("lines", f"{title}: {what}", x_label, unit, ticks, lines,
                                  log_x=log, group=title))  # fmt: skip
    return figures


def cliff_mbps(points: list[PointRecord], findings: list[Finding],
               timelines: list[Timeline]) -> list[Figure]:  # fmt: skip
    """HUS VM group 1: the write-cliff point's MB/s against time (its IOPS x block size)."""
    cliff_ids = {f.point_id for f in findings if f.kind == CLIFF.name}
    figures = []
    for p in points:
        if p.id not in cliff_ids:
            continue
        t = next((t for t in timelines if t.title.startswith(f"{p.key}:")), None)
        if t is None or t.throughput_unit != "IOPS" or not t.t_s:
            continue
        mbps = [None if v is None else v * p.bs / 1e6 for v in t.throughput]
        figures.append(Figure("time", f"{p.key}: MB/s over time", t.x_label, "MB/s", [],
                              [FigureSeries("MB/s", mbps, x=list(t.t_s))],
                              caption=f"{format_size(p.bs)} writes: IOPS x block size",
                              group="Write cliff: MB/s over time"))  # fmt: skip
    return figures


def _heat(title: str, rows: Mapping[str, Mapping[int, float]], cols: list[int], unit: str,
          x_label: str, y_label: str, group: str) -> Figure:  # fmt: skip
    series = [FigureSeries(name, [at.get(c) for c in cols]) for name, at in rows.items()]
    return Figure("heatmap", title, x_label, unit, [str(c) for c in cols], series,
                  group=group, y_label=y_label)  # fmt: skip


def heat_maps(points: list[PointRecord]) -> list[Figure]:
    """Any two-dimensional sweep as a heat map of its throughput: iodepth x workers per series
    (fio-plot's 3-D bars, readable), devices x threads per workload (dbi's grid)."""
    figures = []
    for name, pts in series_of([p for p in points if p.pattern in GRID]).items():
        depths, workers = sorted({p.iodepth for p in pts}), sorted({p.workers for p in pts})
        if len(depths) < 2 or len(workers) < 2:
            continue
        rows = {f"qd {d}": {p.workers: p.throughput() for p in pts if p.iodepth == d}
                for d in depths}  # fmt: skip
        figures.append(_heat(f"{name}: {pts[0].unit} by iodepth and workers", rows, workers,
                             pts[0].unit, "workers per host", "iodepth", "Heat maps"))  # fmt: skip
    by_workload: OrderedDict[str, list[PointRecord]] = OrderedDict()
    for p in points:
        if p.pattern in GRID and p.devices and not p.hosts:
            by_workload.setdefault(p.workload, []).append(p)
    for workload, pts in by_workload.items():
        counts = sorted({p.devices or 0 for p in pts})
        threads = sorted({p.workers for p in pts})
        if len(counts) < 2 or len(threads) < 2 or len({p.iodepth for p in pts}) != 1:
            continue
        rows = {f"{d} dev": {p.workers: p.throughput() for p in pts if p.devices == d}
                for d in counts}  # fmt: skip
        figures.append(_heat(f"{workload}: {pts[0].unit} by devices and threads per device", rows,
                             threads, pts[0].unit, "threads per device", "devices",
                             "Heat maps"))  # fmt: skip
    return figures
