"""compare: several runs' per-second throughput on one time axis (fio-plot's overlay of
several runs' logs), one chart per workload the runs share.

Each run's points of the workload are taken one after another on its wall clock, as the run's
own "every level over time" chart draws them (a gap between two points breaks the line), and
its time zero is the run's first logged second of that workload (`--align start`) or the
first event applied during it (`--align event`: a failover or a path down lines up across
runs, whatever ran before it; every kind at its start, where its impact is measured from).
A run with no event in that workload is left out of the chart, and the chart says so. Beside
the charts, each event's impact in each run side by side (report/sections/compare_events.py).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from arraybench.analysis.events import records_of, windows_from_records
from arraybench.errors import ArraybenchError
from arraybench.finding_kinds import EVENTS, OPEN_LOOP
from arraybench.report.model import Figure, FigureSeries
from arraybench.store.db import PointRecord, Store

ALIGNS = ("start", "event")
MAX_CHARTS = 20  # each reads every sample of its runs' points
GROUP = "Time series, runs overlaid"


@dataclass(frozen=True)
class RunPoints:
    """One compared scenario: its label and its points (compare.Scenario's, read only)."""

    label: str
    run_id: str
    points: Sequence[PointRecord]


def _key(p: PointRecord) -> str:
    # as compare's curves: the workload (at a device count)
    return f"{p.workload} ({p.devices} dev)" if p.devices else p.workload


def _by_workload(points: Sequence[PointRecord]) -> OrderedDict[str, list[PointRecord]]:
    found: OrderedDict[str, list[PointRecord]] = OrderedDict()
    for p in sorted(points, key=lambda p: p.seq):
        if p.pattern in ("random", "sequential"):
            found.setdefault(_key(p), []).append(p)
    return found


def _seconds(store: Store, points: list[PointRecord]) -> dict[int, float]:
    """Unix second -> the throughput summed over directions, in the points' unit."""
    out: dict[int, float] = {}
    for p in points:
        mbps = p.unit == "MB/s"
        for s in store.samples(p.id):
            parts = (s.read_mbps, s.write_mbps) if mbps else (s.read_iops, s.write_iops)
            known = [v for v in parts if v is not None]
            if known:
                out[int(s.t)] = sum(known)
    return out


def _first_event(store: Store, run_id: str, points: list[PointRecord]) -> tuple[float, str] | None:
    """(Unix s, label) of the first event that took effect during one of `points`, at its
    start as its impact is measured (analysis/events.py windows_from_records): a `run` when
    its command started, not when it returned, so its dip lies after t = 0."""
    ids = {p.id for p in points}
    found = []
    for events in (EVENTS.of(f) for f in store.findings(run_id, EVENTS.name) if f.point_id in ids):
        windows = windows_from_records(records_of(events.get("records", [])))
        found += [(w.start_unix, w.label) for w in windows]
    return min(found) if found else None


def _chart(store: Store, key: str, runs: list[RunPoints], align: str) -> Figure | None:
    lines: list[tuple[str, dict[float, float]]] = []
    left_out, zeros = [], []
    unit = ""
    for run in runs:
        points = _by_workload(run.points).get(key, [])
        seconds = _seconds(store, points)
        if not seconds:
            continue
        unit = unit or points[0].unit
        zero: float = min(seconds)
        if align == "event":
            event = _first_event(store, run.run_id, points)
            if event is None:
                left_out.append(run.label)
                continue
            zero = float(round(event[0]))  # on the whole seconds fio stamps: within 0.5 s
            zeros.append(f"{run.label}: {event[1]}")
        lines.append((run.label, {t - zero: v for t, v in seconds.items()}))
    if len(lines) < 2:
        return None
    x = sorted({t for _, at in lines for t in at})
    series = [FigureSeries(label, [at.get(t) for t in x], x=x) for label, at in lines]
    if align == "event":
        x_label = "seconds since each run's first event (s)"
        caption = ("t = 0 at the start of each run's first event, to the nearest second ("
                   + "; ".join(zeros) + ")")  # fmt: skip
        if left_out:
            caption += f"; left out, no event in this workload: {', '.join(left_out)}"
    else:
        x_label = "seconds since each run's first logged second of the workload (s)"
        caption = "t = 0 at each run's first logged second of this workload (after its ramp)"
    caption += "; every level one after another, a gap between points breaks the line"
    marks = [(0.0, "event")] if align == "event" else []
    return Figure("time", f"{key}: {unit} over time, runs overlaid", x_label, unit, [], series,
                  caption=caption, group=GROUP, marks=marks)  # fmt: skip


def run_overlays(store: Store, runs: list[RunPoints], align: str = "start") -> list[Figure]:
    """One chart per workload held by two or more of `runs`: their throughput per second."""
    if align not in ALIGNS:
        raise ArraybenchError(f"--align {align}: unknown", f"use one of: {', '.join(ALIGNS)}")
    keys: list[str] = []
    for run in runs:
        keys += [k for k in _by_workload(run.points) if k not in keys]
    charts = [_chart(store, key, runs, align) for key in keys[:MAX_CHARTS]]
    drawn = [c for c in charts if c is not None]
    if align == "event" and not drawn and keys:
        raise ArraybenchError(
            "--align event: no workload has an event in two or more of the compared runs",
            "align at each run's start (--align start, the default)",
        )
    return drawn


def _backlog(store: Store, run: RunPoints, key: str, align: str) -> dict[float, float] | None:
    """The unserved I/Os over time of the run's first point of `key` with open-loop figures,
    t = 0 at its schedule's start or (align event) at its first event; None: none."""
    points = _by_workload(run.points).get(key, [])
    ids = {p.id for p in points}
    found = [f for f in store.findings(run.run_id, OPEN_LOOP.name) if f.point_id in ids]
    for finding in sorted(found, key=lambda f: f.point_id or 0):
        data = OPEN_LOOP.of(finding)
        zero = data["origin_unix"]
        if align == "event":
            point = [p for p in points if p.id == finding.point_id]
            event = _first_event(store, run.run_id, point)
            if event is None:
                continue
            zero = event[0]
        start = data["origin_unix"] - zero
        return {round(start + t, 3): max(0.0, due - done) for t, due, done in data["series"]}
    return None


def backlog_overlays(store: Store, runs: list[RunPoints], align: str = "start") -> list[Figure]:
    """One chart per workload whose rate-limited points have open-loop figures in two or more
    of `runs`: each run's unserved I/Os over time (analysis/openloop.py), on the same axis
    as the throughput overlays."""
    keys: list[str] = []
    for run in runs:
        keys += [k for k in _by_workload(run.points) if k not in keys]
    figures = []
    for key in keys[:MAX_CHARTS]:
        lines = [(run.label, b) for run in runs if (b := _backlog(store, run, key, align))]
        if len(lines) < 2:
            continue
        series = [FigureSeries(label, list(at.values()), x=list(at)) for label, at in lines]
        zero = "its first event" if align == "event" else "its schedule's start"
        figures.append(Figure(
            "time", f"{key}: unserved I/Os (backlog), runs overlaid",
            f"seconds since each run's {'first event' if align == 'event' else 'start'} (s)",
            "I/Os", [], series, group=GROUP,
            caption=(f"Each run's first open-loop point of this workload: the I/Os due by its "
                     f"schedule (rate x time) and not yet completed; t = 0 at {zero}"),
            marks=[(0.0, "event")] if align == "event" else [],
        ))  # fmt: skip
    return figures
