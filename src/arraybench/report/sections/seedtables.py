"""The table forms of the public reports in `seeds/`, built from stored points (measured or
imported): the devices x parallelism grid (dbi's main table) and the maximum recorded per mix
with its latency and the minimum latency (HUS VM: "147,000 IOPS at 1.7 ms (8 KiB qd32)")."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence

from arraybench.analysis.headline import Headline
from arraybench.plan.expand import effective_load
from arraybench.report.build import level_axis, mix_sort_key, order_points, series_of
from arraybench.report.model import ReportModel, ReportTable
from arraybench.report.sections.inputs import RunInputs
from arraybench.report.sections.rounds import window_means
from arraybench.store.db import PointRecord
from arraybench.units import format_latency, format_size, format_throughput


def _at(p: PointRecord) -> str:
    lat = format_latency(p.metric("total", "lat_mean_us"))
    return f"{format_throughput(p.throughput(), p.unit)} @ {lat}"


def _level(p: PointRecord, x_label: str) -> str:
    if x_label.startswith("workers"):
        return str(p.workers)
    if x_label.startswith("iodepth"):
        return str(p.iodepth)
    return f"{p.workers}x{p.iodepth}"


def per_target_workloads(run: RunInputs) -> set[str]:
    """Workloads whose `workers` count jobs on EACH device: a plan's `spread: per_target`, or an
    import whose jobs were divided by the device count the file name gives (importer/grid.py)."""
    names = {p.workload for p in run.once if p.labels.get("spread") == "per_target"}
    if run.plan is not None:
        names |= {w.name for w in run.plan.workloads
                  if effective_load(run.plan.load, w.load).spread == "per_target"}  # fmt: skip
    return names


def _grid_axis(x_label: str, per_target: bool) -> str:
    """`workers per host (iodepth 1)` -> `threads per device (iodepth 1)` where the workers
    are per device: the columns are what each device was given, not the host's total."""
    if per_target and x_label.startswith("workers per host"):
        return "threads per device" + x_label[len("workers per host") :]
    return x_label


def devices_grids(points: list[PointRecord], per_target: Collection[str] = ()) -> list[ReportTable]:
    """Per workload measured (or imported) at several device counts: one row per device count,
    one column per load level, each cell throughput @ mean latency. `per_target`: the workloads
    whose levels are threads per device (per_target_workloads)."""
    by_workload: OrderedDict[str, list[PointRecord]] = OrderedDict()
    for p in sorted(points, key=lambda p: p.seq):
        if p.devices:
            by_workload.setdefault(p.workload, []).append(p)
    tables = []
    for workload, pts in by_workload.items():
        counts = sorted({p.devices or 0 for p in pts})
        if len(counts) < 2:
            continue
        x_label, _, _ = level_axis(order_points(pts))
        axis = _grid_axis(x_label, workload in per_target)
        levels: list[str] = []
        cells: dict[tuple[int, str], PointRecord] = {}
        for p in order_points(pts):
            tick = _level(p, x_label)
            if tick not in levels:
                levels.append(tick)
            cells[(p.devices or 0, tick)] = p
        rows = [
            [str(n), *(_at(cells[(n, t)]) if (n, t) in cells else "–" for t in levels)]
            for n in counts
        ]
        tables.append(ReportTable(
            f"{workload}: devices x {axis}", ["devices", *levels], rows,
            f"throughput @ mean latency; rows: number of devices, columns: {axis}",
        ))  # fmt: skip
    return tables


def maximum_recorded(
    points: list[PointRecord], headlines: Mapping[str, Headline],
    tests: Sequence[PointRecord] = (),
) -> list[ReportTable]:  # fmt: skip
    """Per mix (and unit): the highest of its series' headline maxima, its latency and
    where; the lowest of their headline minimum latencies and where (report/sections/headlines.py:
    the points a series' headline leaves out are left out here too). `tests`: SNIA tests as
    their window table states them (report/sections/rounds.py window_means), one record each."""
    by_key = {p.key: p for p in points}
    tops: dict[tuple[str, str], list[PointRecord]] = {}
    lows: dict[tuple[str, str], list[PointRecord]] = {}
    left_out = 0
    for name, pts in series_of(points).items():
        if (h := headlines.get(name)) is None:
            continue
        group = (pts[0].mix, pts[0].unit)
        left_out += len(h.left_out)
        tops.setdefault(group, []).extend([by_key[h.maximum.key]] if h.maximum else [])
        lows.setdefault(group, []).extend([by_key[h.min_latency.key]] if h.min_latency else [])
    for p in tests:
        tops.setdefault((p.mix, p.unit), []).append(p)
        if p.metric("total", "lat_mean_us") is not None:
            lows.setdefault((p.mix, p.unit), []).append(p)
    rows = []
    for mix, unit in sorted(tops, key=lambda k: (mix_sort_key(k[0]), k[1])):
        if not (maxima := tops[(mix, unit)]):
            continue
        top = max(maxima, key=lambda p: p.throughput())  # the first series on a tie
        found = lows.get((mix, unit), [])
        low = min(found, key=lambda p: p.metric("total", "lat_mean_us") or 0.0) if found else None
        rows.append([
            mix, _at(top), _where(top),
            format_latency(low.metric("total", "lat_mean_us")) if low else "–",
            _where(low) if low else "–",
        ])  # fmt: skip
    if not rows:
        return []
    return [ReportTable(
        "Maximum recorded", ["mix", "max throughput @ mean latency", "where",
                             "min mean latency", "where"], rows,
        "over every workload and load level of the run, per mix and unit: the highest "
        "series maximum and the lowest series minimum latency of the summary"
        + ("; SNIA tests as their steady-state window's mean" if tests else "")
        + (f"; {left_out} flagged point(s) left out" if left_out else ""),
    )]  # fmt: skip


def _where(p: PointRecord) -> str:
    """`8 KiB random backend, libaio qd32 x 4 workers`"""
    devices = f", {p.devices} devices" if p.devices else ""
    region = f" {p.region}" if p.region else ""  # frontend / backend (In&Out)
    return (f"{format_size(p.bs)} {p.pattern}{region}, {p.ioengine} qd{p.iodepth} x "
            f"{p.workers} worker{'s' if p.workers != 1 else ''}{devices}")  # fmt: skip


def section(model: ReportModel, run: RunInputs) -> None:
    """The maximum recorded per mix (SNIA rounds: each test's window mean) and dbi's grids."""
    recorded = window_means(run.points, run.findings)
    model.tables += maximum_recorded(run.once, run.headlines, recorded) + devices_grids(
        run.once, per_target_workloads(run)
    )
