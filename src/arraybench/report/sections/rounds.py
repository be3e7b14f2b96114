"""SNIA rounds in the report: the steady-state window plot and the matrix over the window."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import replace

from arraybench.finding_kinds import ROUNDS, RoundsFinding
from arraybench.plan.expand import mix_label
from arraybench.report.build import mix_sort_key
from arraybench.report.model import ReportModel, ReportTable, Timeline
from arraybench.report.sections.inputs import RunInputs
from arraybench.store.db import Finding, PointRecord
from arraybench.units import format_latency, format_throughput


def round_of(point: PointRecord) -> int | None:
    return point.identity.round


def window_rounds(verdict: RoundsFinding) -> list[int]:
    """1-based rounds of the measurement window: the steady one, or the last `window`."""
    count = len(verdict["values"])
    start, end = verdict.get("window_start"), verdict.get("window_end")
    if verdict.get("steady") and start is not None and end is not None:  # both or neither
        return list(range(start + 1, end + 1))
    return list(range(max(1, count - verdict["window"] + 1), count + 1))


def steady_timeline(verdict: RoundsFinding) -> Timeline:
    values = verdict["values"]
    rounds = window_rounds(verdict)
    spread, slope = verdict.get("range_excursion"), verdict.get("slope_excursion")
    if verdict.get("steady") and spread is not None and slope is not None:  # steady: all set
        line = (
            f"steady state reached in round {verdict['round']} (window rounds {rounds[0]}-"
            f"{rounds[-1]}): average {verdict['average']:,.0f}, range "
            f"{spread * 100:.1f} % (≤ 20 %), slope excursion "
            f"{slope * 100:.1f} % (≤ 10 %)"
        )
    else:
        line = f"NOT steady after {verdict['round']} round(s): the figures use the last window"
    return Timeline(
        guides=window_guides(values, rounds),
        title=f"SNIA steady state: {verdict['track']} per round",
        t_s=[float(i) for i in range(1, len(values) + 1)],
        throughput_unit="IOPS",
        throughput=list(values),
        lat_mean_us=[None] * len(values),
        events=[(float(rounds[0]), "window"), (float(rounds[-1]), "")],
        findings=[line],
        x_label="round",
    )


def window_guides(values: list[float], rounds: list[int]) -> list[tuple[str, list[float | None]]]:
    """The SNIA window drawn over the rounds: its average, the ±10 % band around it (a range
    within 20 % of the average) and the least-squares slope line, over the window only."""
    window = [(r, values[r - 1]) for r in rounds if 0 < r <= len(values)]
    if len(window) < 2:
        return []
    average = statistics.fmean(v for _, v in window)
    fit = statistics.linear_regression([float(r) for r, _ in window], [v for _, v in window])
    inside = {r for r, _ in window}

    def over(f: Callable[[int], float]) -> list[float | None]:
        return [f(r) if r in inside else None for r in range(1, len(values) + 1)]

    return [
        ("window average", over(lambda r: average)),
        ("band: average +10 %", over(lambda r: average * 1.1)),
        ("band: average -10 %", over(lambda r: average * 0.9)),
        ("slope", over(lambda r: fit.intercept + fit.slope * r)),
    ]


def _cell(points: list[PointRecord]) -> str:
    unit = points[0].unit
    value = statistics.fmean(p.throughput() for p in points)
    lats = [p.metric("total", "lat_mean_us") for p in points]
    known = [x for x in lats if x is not None]
    lat = statistics.fmean(known) if known else None
    return f"{format_throughput(value, unit)} @ {format_latency(lat)}"


def matrix_tables(points: list[PointRecord], verdict: RoundsFinding) -> list[ReportTable]:
    """Per group of repeated workloads: rows = group (block size), columns = mix."""
    rounds = set(window_rounds(verdict))
    chosen = [p for p in points if round_of(p) in rounds]
    cells: dict[str, dict[str, list[PointRecord]]] = {}
    for p in chosen:
        cells.setdefault(p.family, {}).setdefault(mix_label(p.read_pct), []).append(p)
    columns = sorted({m for row in cells.values() for m in row}, key=mix_sort_key)
    rows = [[family, *(_cell(row[m]) if m in row else "–" for m in columns)]
            for family, row in cells.items()]  # fmt: skip
    first, last = min(rounds), max(rounds)
    return [ReportTable(
        title="SNIA measurement window: mean of each test over the window rounds",
        columns=["test", *columns],
        rows=rows,
        caption=f"rounds {first}-{last}; throughput and mean latency averaged over the window",
    )]  # fmt: skip


def rounds_report(
    points: list[PointRecord], findings: list[Finding]
) -> tuple[list[Timeline], list[ReportTable]]:
    verdicts = ROUNDS.among(findings)
    if not verdicts:
        return [], []
    last = max(verdicts, key=lambda v: v["round"])
    repeated = [p for p in points if round_of(p) is not None]
    return [steady_timeline(last)], matrix_tables(repeated, last)


def window_means(points: list[PointRecord], findings: list[Finding]) -> list[PointRecord]:
    """Each SNIA test as the window table states it: one record per workload whose metrics
    are the means over the window rounds, keyed without the round. What "Maximum recorded"
    reads beside the other points, so that both tables name one figure per test."""
    verdicts = ROUNDS.among(findings)
    if not verdicts:
        return []
    rounds = set(window_rounds(max(verdicts, key=lambda v: v["round"])))
    tests: dict[str, list[PointRecord]] = {}
    for p in points:
        if round_of(p) in rounds:
            tests.setdefault(replace(p.identity, round=None, repetition=1).key, []).append(p)
    out = []
    for key, pts in tests.items():
        names = {name for p in pts for name in p.metrics}
        metrics = {name: _mean([p.metrics.get(name) for p in pts]) for name in names}
        out.append(replace(pts[0], key=key, metrics=metrics))
    return out


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def section(model: ReportModel, run: RunInputs) -> None:
    """SNIA rounds: the steady-state timelines, their findings as notes, the rounds tables."""
    steady, tables = rounds_report(run.points, run.findings)
    model.timelines += steady
    model.notes += [line for t in steady for line in t.findings]
    model.tables += tables
