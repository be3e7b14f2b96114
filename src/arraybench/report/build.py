"""Store rows -> ReportModel: series, their summaries, the table cells and chart panels."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Mapping
from pathlib import Path

from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.fabric import ABOVE_CEILING
from arraybench.analysis.headline import Headline
from arraybench.run.reportable import job_file_texts
from arraybench.store.db import METRIC_COLUMNS, PointRecord, RunRecord
from arraybench.units import format_latency, format_pct, format_throughput


def throughput_of(point: PointRecord) -> float:
    return point.throughput()


def level_axis(points: list[PointRecord]) -> tuple[str, list[float], list[str]]:
    """The x axis of a series: workers when only they vary, iodepth when only it varies."""
    workers = {p.workers for p in points}
    depths = {p.iodepth for p in points}
    if len(depths) == 1:
        return (
            f"workers per host (iodepth {points[0].iodepth})",
            [float(p.workers) for p in points],
            [str(p.workers) for p in points],
        )
    if len(workers) == 1:
        return (
            f"iodepth ({points[0].workers} workers per host)",
            [float(p.iodepth) for p in points],
            [str(p.iodepth) for p in points],
        )
    return (
        "outstanding I/Os (workers x iodepth)",
        [float(p.workers * p.iodepth) for p in points],
        [f"{p.workers}x{p.iodepth}" for p in points],
    )


def order_points(points: list[PointRecord]) -> list[PointRecord]:
    return sorted(points, key=lambda p: (p.workers * p.iodepth, p.workers, p.seq))


def curve_points(
    points: list[PointRecord], flagged: Collection[str] = (),
    noise: Mapping[str, float | None] | None = None,
) -> list[CurvePoint]:  # fmt: skip
    """`flagged`: the keys of points whose validity flags leave the headline; `noise`: key ->
    the 95 % half-width (%) of its throughput over its repeats."""
    _, xs, _ = level_axis(points)
    return [
        CurvePoint(
            level=x,
            throughput=throughput_of(p),
            lat_mean_us=p.metric("total", "lat_mean_us"),
            lat_p99_us=p.metric("total", "lat_p99_us"),
            key=p.key,
            flagged=p.key in flagged,
            noise_pct=(noise or {}).get(p.key),
            level_name=p.identity.level_label,
        )
        for x, p in zip(xs, points, strict=True)
    ]


def campaign_scenario(point: PointRecord) -> str | None:
    """The plan scenario a campaign measured the point in (its key starts `C3/`); None for
    points without one and for imported points (whose workload names carry theirs)."""
    return point.identity.scenario


def _in_scenario(point: PointRecord, name: str) -> str:
    scenario = campaign_scenario(point)
    return f"{scenario} · {name}" if scenario else name


def series_name(point: PointRecord) -> str:
    """A curve: one workload (at one device count, on one set of hosts, in one scenario)."""
    name = f"{point.workload} ({point.devices} dev)" if point.devices else point.workload
    return _in_scenario(point, f"{name} ({point.hosts} hosts)" if point.hosts else name)


def family_of(point: PointRecord, *, scenario: bool = True) -> str:
    """The summary row a series belongs to (without `scenario`: the same row in every
    scenario, as the scenario tables need it)."""
    family = point.family
    if point.devices:
        family += f", {point.devices} device{'s' if point.devices > 1 else ''}"
    if point.hosts:
        family += f", {point.hosts} host{'s' if point.hosts > 1 else ''}"
    return _in_scenario(point, family) if scenario else family


def series_of(points: list[PointRecord]) -> OrderedDict[str, list[PointRecord]]:
    """Series name -> its points ordered by load, in campaign order."""
    series: OrderedDict[str, list[PointRecord]] = OrderedDict()
    for point in sorted(points, key=lambda p: p.seq):
        series.setdefault(series_name(point), []).append(point)
    return OrderedDict((name, order_points(pts)) for name, pts in series.items())


def bound_text(run: RunRecord) -> str:
    us = run.latency_bound_us
    value = f"{us / 1000:g} ms" if us >= 1000 else f"{us:g} µs"
    return f"{value} {run.latency_stat}"


def mix_sort_key(mix: str) -> tuple[int, str]:
    """Read, Write, then the mixes from most to least read (the reports' column order)."""
    if mix == "Read":
        return (-2, mix)
    if mix == "Write":
        return (-1, mix)
    reads = mix.removeprefix("R/W ").split("/")[0]
    return (100 - int(reads), mix) if reads.isdigit() else (100, mix)


def cell_texts(
    summary: Headline, unit: str, run: RunRecord, ceiling: float | None = None,
    spreads: Mapping[str, float] | None = None, levels: int | None = None,
) -> tuple[str, str, str]:  # fmt: skip
    """`spreads`: level key -> the throughput's 95 % half-width in % (repeated levels);
    `levels`: how many load levels the series has, when known."""

    def pm(point: CurvePoint | None) -> str:  # `±2.1 %` after a repeated level's median
        pct = (spreads or {}).get(point.key) if point else None
        return f" ±{format_pct(pct)}" if pct is not None else ""

    def at(point: CurvePoint | None) -> str:
        if point is None:
            return "–"
        return (f"{format_throughput(point.throughput, unit)}{pm(point)} @ "
                f"{format_latency(point.lat_mean_us)}")  # fmt: skip

    mx, mn = summary.maximum, summary.min_latency
    said = []
    if summary.unsaturated is not None:  # on the ladder's top, still rising (docs/headline.md)
        said.append("top level, may not be saturated")
    if mx and ceiling:  # beyond the links (analysis.fabric.ABOVE_CEILING): said, not just a %
        beyond = mx.throughput > ABOVE_CEILING * ceiling
        said.append(f"{mx.throughput / ceiling:.0%} of theoretical"
                    f"{': more than the fabric carries' if beyond else ''}")  # fmt: skip
    share = f" ({'; '.join(said)})" if said else ""
    if _one_point(summary):  # one number once, not three times (a single load level)
        texts = (at(summary.optimal), share, bound_text(run), unit)
        return _one_point_texts(summary, *texts, levels)
    extremes = (
        f"{format_throughput(mx.throughput if mx else None, unit)}{pm(mx)} max{share}, "
        f"{format_latency(mn.lat_mean_us if mn else None)} min"
    )
    bounded = summary.bounded
    bounded_text = (
        f"{format_throughput(bounded.throughput, unit)} ≤ {bound_text(run)}"
        if bounded
        else f"none ≤ {bound_text(run)}"
    )
    first = summary.at_first
    if first is not None and first is not summary.maximum:
        bounded_text += f"; {format_throughput(first.throughput, unit)} at the lowest level"
    return at(summary.optimal), extremes, bounded_text


def _one_point(summary: Headline) -> bool:
    """The optimal point is also the maximum and the minimum latency."""
    opt, mx, mn = summary.optimal, summary.maximum, summary.min_latency
    return bool(opt and mx and mn and opt.key == mx.key == mn.key)


def _one_point_texts(
    summary: Headline, at: str, share: str, bound: str, unit: str, levels: int | None
) -> tuple[str, str, str]:
    """A cell whose optimal point is its maximum and minimum latency: its figures once, then
    what they are (the series' one load level, or every role at once) and the bound met or
    not, without repeating the numbers."""
    opt, first = summary.optimal, summary.at_first
    single = levels == 1  # unknown (compare): every role at once, true of one level too
    extremes = ("one load level" if single else "also the maximum and the minimum latency") + share
    bounded = summary.bounded
    if bounded is not None and opt is not None and bounded.key == opt.key:
        return at, extremes, f"within the bound ({bound})"
    said = f"none ≤ {bound}"
    if first is not None and opt is not None and first.key != opt.key:  # another level's
        said += f"; {format_throughput(first.throughput, unit)} at the lowest level"
    return at, extremes, said


MAX_JOB_FILES = 500  # above this many points the report holds one job file per series


def job_file_points(points: list[PointRecord]) -> list[PointRecord]:
    """The points whose job files go into the report: all of them, or in a run of more than
    MAX_JOB_FILES points the first measured of each series (its other points differ in their
    load level only). Every point's job file stays in its folder either way."""
    if len(points) <= MAX_JOB_FILES:
        return points
    first: dict[str, PointRecord] = {}
    for point in sorted(points, key=lambda p: p.seq):
        first.setdefault(series_name(point), point)
    return list(first.values())


def job_files(
    points: list[PointRecord], stored: Mapping[int, Mapping[str, str]] | None = None
) -> dict[str, str]:
    """Point key (`key [host]` on many hosts) -> its job file's text; `stored`: point id ->
    the job files the run stored (Store.job_files), else read from the point's folder (a
    store made before they were stored)."""
    files: dict[str, str] = {}
    for point in job_file_points(points):
        texts = (stored or {}).get(point.id) or job_file_texts(Path(point.folder))
        for name, text in texts.items():
            host = Path(name).stem.removeprefix("point").removeprefix("-")
            files[f"{point.key} [{host}]" if host else point.key] = text
    return files


def job_series(points: list[PointRecord], files: Mapping[str, str]) -> dict[str, str]:
    """Each of `files`' names (job_files': `key` or `key [host]`) -> the series of its point
    (the appendix prints a series' first job file whole, the others as the lines they change)."""
    series = {p.key: p.identity.series_key for p in points}
    return {name: series[key] for name in files if (key := name.split(" [", 1)[0]) in series}


HOST_COLUMNS = ["kernel_iops", "kernel_mbps", "cpu_busy_pct"]


def point_columns() -> list[str]:
    return [*METRIC_COLUMNS, *HOST_COLUMNS, "kernel_vs_fio_pct"]
