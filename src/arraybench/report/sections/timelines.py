"""Timelines of single points (1-second series) and the human lines of their findings."""

from __future__ import annotations

from itertools import accumulate
from typing import Any

from arraybench.analysis.events import event_start
from arraybench.analysis.findings import kernel_drop_pct
from arraybench.analysis.kernelcheck import KernelView, not_judged
from arraybench.analysis.validity import KERNEL_KINDS, flags_of
from arraybench.finding_kinds import (
    CLIFF,
    EVENTS,
    INTEGRITY,
    MONITOR,
    STEADY,
    VALIDITY,
    CliffFinding,
    EventsFinding,
    MonitorFinding,
    RoundsFinding,
    SteadyFinding,
)
from arraybench.report.build import series_name
from arraybench.report.model import ReportModel, Timeline
from arraybench.report.sections.arrayside import array_seconds, field_seconds
from arraybench.report.sections.controllercpu import say_missing, with_cpu
from arraybench.report.sections.failures import overshoot_text, recovery_column, recovery_text
from arraybench.report.sections.inputs import RunInputs
from arraybench.report.sections.warmup import with_warmup
from arraybench.store.db import Finding, PointRecord, Store
from arraybench.units import format_duration, format_pct, format_throughput

MAX_TIMELINES = 60
MAX_SERIES_TIMELINES = 60  # a ladder's chart is 30-50 KB: a 10,000-point report stays < 20 MB


def _sum(*values: float | None) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def cliff_lines(
    data: CliffFinding, unit: str, kernel_drop: float | None = None
) -> tuple[list[str], list[tuple[float, str]]]:
    """The write cliff's lines; `kernel_drop` (% the kernel's counters fell at the same time)
    marks it doubtful when the kernel saw less than half of fio's drop."""
    if not data.get("found"):
        return [f"no write cliff in {data.get('seconds', 0)} s of samples"], []
    level = lambda v: format_throughput(v, unit)  # noqa: E731
    line = (
        f"write cliff at {format_duration(data['time_s'])}: {level(data['level_before'])} → "
        f"{level(data['level_after'])} ({-data['drop_pct']:.0f} %), lowest second "
        f"{level(data['level_min'])}"
    )
    if data.get("gb_written_at_cliff") is not None:
        line += f", after {data['gb_written_at_cliff']:.2f} GB written"
    if kernel_drop is not None and kernel_drop < data["drop_pct"] / 2:
        fell = format_pct(kernel_drop)
        line = (f"doubtful: {line}; the kernel's counters of the device fell only {fell} "
                "then (other I/O on the device, not the array?)")  # fmt: skip
    lines = [line]
    events = [(float(data["time_s"]), "write cliff")]
    back, gc = data.get("recovery_time_s"), data.get("gc_bytes_per_s")
    if data.get("recovered") and back is not None:  # a recovered cliff has its time
        lines.append(f"recovered at {format_duration(back)} to "
                     f"{level(data['level_recovered'])}")  # fmt: skip
        events.append((float(back), "recovered"))
    if gc:
        lines.append(f"garbage-collection throughput ≈ {gc / 1e6:,.0f} MB/s "
                     "(sustained post-cliff write rate)")  # fmt: skip
    return lines, events


def steady_lines(data: SteadyFinding | RoundsFinding) -> list[str]:
    spread, slope = data.get("range_excursion"), data.get("slope_excursion")
    if data.get("average") is None or spread is None or slope is None:  # all or none are set
        return [f"steady state: fewer than {data.get('window')} samples to judge"]
    verdict = "steady" if data["steady"] else "NOT steady"
    # a point's own seconds: a long point is judged over its last fifth, in rounds
    rounds, samples = int(str(data.get("rounds") or 0)), int(str(data.get("samples") or 0))
    window = f"the last {data['window']} samples"
    if rounds and samples and data["window"] > rounds:
        window = (f"the last {data['window']} s ({data['window'] / samples:.0%} of the point, "
                  f"as {rounds} rounds of {data['window'] // rounds} s)")  # fmt: skip
    return [
        f"SNIA steady state over {window}: {verdict} (range "
        f"{spread * 100:.1f} % of the mean, limit 20 %; slope excursion "
        f"{slope * 100:.1f} %, limit 10 %)"
    ]


def event_marks(data: EventsFinding, t0: float) -> list[tuple[float, str]]:
    """Chart markers: each event's start and its revert, in seconds of the point's series."""
    marks = []
    for r in data.get("records", []):
        if r["action"] in ("apply", "prompt", "run") and r["outcome"] == "ok":
            # at its start, as its impact is measured (a `run` while its command runs)
            start = event_start(r["action"], r["started_unix"], r["ended_unix"])
            marks.append((start - t0, r["label"]))
        elif r["action"] == "revert":
            marks.append((r["ended_unix"] - t0, f"{r['label']} reverted"))
    return marks


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f} %"


def event_lines(data: EventsFinding) -> list[str]:
    lines = []
    impacts = data.get("impact", [])
    said = recovery_column(impacts).lower()
    for i in impacts:
        dip = "–" if i["dip_pct"] is None else f"{i['dip_pct']:.1f} %"
        over = f"; overshoot {overshoot_text(i)}" if i.get("overshoot_seconds") else ""
        lines.append(f"{i['label']}: dip {dip} against the {i['baseline_seconds']} s before; "
                     f"{said}: {recovery_text(i)}{over}")  # fmt: skip
        per_host = [(h, f) for h, found in data.get("host_impact", {}).items() for f in found
                    if f.get("start_unix") == i["start_unix"]]  # fmt: skip
        if per_host:
            lines.append("  per host: " + ", ".join(f"{h} dip {_pct(f['dip_pct'])}"
                                                    for h, f in per_host))  # fmt: skip
    if data.get("io_errors"):
        lines.append(f"fio counted {data['io_errors']} I/O errors during the point (and went on)")
    return lines


def point_start(findings: list[Finding]) -> float | None:
    """The point's start (Unix s, ramp included) from its events journal: an `at` event was
    started at start + at. None without such an event."""
    for events in EVENTS.among(findings):
        for r in events.get("records", []):
            at = r.get("planned_at_s")
            if at is not None and r["action"] in ("apply", "run"):
                return float(r["started_unix"]) - float(at)
    return None


def time_zero(samples: list[Any], findings: list[Finding]) -> tuple[float, str]:
    """Time zero of a point's chart and the x axis title that says what it is: the point's
    start when the events journal gives it (events then sit at their `at:`), else the first
    logged second, which comes after the ramp."""
    first = samples[0].t if samples else 0
    start = point_start(findings)
    if start is None:
        return first, "seconds since the first logged second, after the ramp (s)"
    ramp = max(first - start, 0.0)
    return start, f"seconds since the point started; the first {ramp:.0f} s ramp is not logged (s)"


def timeline_of(store: Store, point: PointRecord, findings: list[Finding]) -> Timeline:
    samples = store.samples(point.id)
    t0, x_label = time_zero(samples, findings)
    mbps = point.unit == "MB/s"
    thr = [_sum(s.read_mbps, s.write_mbps) if mbps else _sum(s.read_iops, s.write_iops)
           for s in samples]  # fmt: skip
    lines: list[str] = []
    events: list[tuple[float, str]] = []
    gb = None
    kernel = _kernel(store, point, samples, mbps)
    array = array_seconds(store, point.run_id, mbps)
    t_rel = [float(s.t - samples[0].t) for s in samples]
    for finding in findings:
        if finding.kind == CLIFF.name:
            cliff = CLIFF.of(finding)
            at = cliff.get("time_s")
            fell = kernel_drop_pct(t_rel, kernel, float(at)) if kernel and at is not None else None
            found, marks = cliff_lines(cliff, point.unit, fell)
            lines += found
            shift = float(samples[0].t - t0) if samples else 0.0  # cliff times: from 1st sample
            events += [(at_s + shift, label) for at_s, label in marks]
            written = [(s.write_mbps or 0.0) / 1000 for s in samples]  # GB per 1-s sample
            gb = list[float | None](accumulate(written))
        elif finding.kind == STEADY.name:
            lines += steady_lines(STEADY.of(finding))
        elif finding.kind == MONITOR.name:
            lines += MONITOR.of(finding).get("flags", [])
            lines += kernel_lines(MONITOR.of(finding))
        elif finding.kind == VALIDITY.name:  # fio against the kernel, as the flag says it
            lines += [f.why for f in flags_of(VALIDITY.of(finding)) if f.kind in KERNEL_KINDS]
        elif finding.kind == EVENTS.name:
            events += event_marks(EVENTS.of(finding), t0)
            lines += event_lines(EVENTS.of(finding))
    if point.ended_early:
        lines.append("ended early: fio's steady-state criterion was met")
    timeline = Timeline(
        title=f"{point.key}: {point.unit} and latency over time",
        t_s=[float(s.t - t0) for s in samples],
        throughput_unit=point.unit,
        throughput=thr,
        lat_mean_us=[_weighted_lat(s) for s in samples],
        kernel=kernel,
        array=[array.get(s.t) for s in samples] if array else None,
        events=events,
        gb_written=gb,
        findings=lines,
        x_label=x_label,
    )
    if not samples:
        return timeline
    drawn = with_warmup(timeline, findings, samples[0].t, t0)
    zero = samples[0].t - drawn.t_s[-len(samples)]  # Unix time of t = 0 (warm-up or not)
    return with_cpu(drawn, field_seconds(store, point.run_id, "cpu_pct"), zero)


def series_timeline(store: Store, name: str, points: list[PointRecord]) -> Timeline | None:
    """A load ladder's points one after the other on the wall clock, each level marked where
    it starts; seconds between points (ramp, pause) break the line. None without samples."""
    mbps = points[0].unit == "MB/s"
    t_s: list[float] = []
    thr: list[float | None] = []
    lat: list[float | None] = []
    events: list[tuple[float, str]] = []
    t0: float | None = None
    array = array_seconds(store, points[0].run_id, mbps)
    arr: list[float | None] = []  # the array's view, beside thr
    for point in sorted(points, key=lambda p: p.seq):
        samples = store.samples(point.id)
        if not samples:
            continue
        t0 = samples[0].t if t0 is None else t0
        if t_s:  # a gap between two points: no line across it
            t_s.append((t_s[-1] + samples[0].t - t0) / 2)
            thr.append(None)
            lat.append(None)
            arr.append(None)
        events.append((float(samples[0].t - t0), point.identity.label))
        for sample in samples:
            t_s.append(float(sample.t - t0))
            values = (
                (sample.read_mbps, sample.write_mbps)
                if mbps
                else (sample.read_iops, sample.write_iops)
            )
            thr.append(_sum(*values))
            lat.append(_weighted_lat(sample))
            arr.append(array.get(sample.t))
    if len([v for v in thr if v is not None]) < 2:
        return None
    timeline = Timeline(
        title=f"{name}: every level over time", t_s=t_s, throughput_unit=points[0].unit,
        throughput=thr, lat_mean_us=lat, events=events, series=name,
        array=arr if any(v is not None for v in arr) else None,
        x_label="seconds since the series' first logged second (each level after its ramp) (s)",
    )  # fmt: skip
    cpu = field_seconds(store, points[0].run_id, "cpu_pct")
    return with_cpu(timeline, cpu, float(t0)) if t0 is not None else timeline


def _weighted_lat(s: Any) -> float | None:
    parts = [(s.read_lat_us, s.read_iops), (s.write_lat_us, s.write_iops)]
    known = [(lat, n or 0.0) for lat, n in parts if lat is not None]
    weight = sum(n for _, n in known)
    return sum(lat * n for lat, n in known) / weight if weight else None


def _kernel(
    store: Store, point: PointRecord, samples: list[Any], mbps: bool
) -> list[float | None] | None:
    per_t = store.host_totals(point.id, mbps)
    if not per_t:
        return None
    return [per_t.get(s.t) for s in samples]


def timelines(store: Store, run_id: str, points: list[PointRecord]) -> list[Timeline]:
    """Points that are a whole series on their own, or that carry a cliff/steady finding."""
    by_point: dict[int, list[Finding]] = {}
    for finding in store.findings(run_id):
        if finding.point_id is not None:
            by_point.setdefault(finding.point_id, []).append(finding)
    series_size: dict[tuple[str, int | None], int] = {}
    for p in points:
        series_size[(p.workload, p.devices)] = series_size.get((p.workload, p.devices), 0) + 1
    chosen = [
        p for p in points
        if series_size[(p.workload, p.devices)] == 1
        or any(f.kind in (CLIFF.name, STEADY.name, EVENTS.name, INTEGRITY.name)
               for f in by_point.get(p.id, []))
    ]  # fmt: skip
    singles = [timeline_of(store, p, by_point.get(p.id, [])) for p in chosen[:MAX_TIMELINES]]
    ladders: dict[str, list[PointRecord]] = {}
    for p in points:
        if p not in chosen:
            ladders.setdefault(series_name(p), []).append(p)
    drawn = [series_timeline(store, name, pts) for name, pts in
             list(ladders.items())[:MAX_SERIES_TIMELINES]]  # fmt: skip
    return singles + [t for t in drawn if t is not None]


def untimed_note(points: list[PointRecord]) -> list[str]:
    """What the report leaves out of its time series, said once."""
    chosen = {series_name(p) for p in points}
    if len(chosen) <= MAX_SERIES_TIMELINES:
        return []
    return [
        f"time series: the first {MAX_SERIES_TIMELINES} of {len(chosen)} series are drawn "
        "(report size); every point's 1-second samples stay in the store and its folder"
    ]


def untimed_section(model: ReportModel, run: RunInputs) -> None:
    """Which curves have no per-second timeline (a note, before the other sections' notes)."""
    model.notes += untimed_note(run.once)


def section(model: ReportModel, run: RunInputs) -> None:
    """Single points' 1-second timelines, after the rounds' and the test kinds'."""
    drawn = timelines(run.store, run.run.id, run.once)
    expected = run.plan is not None and run.plan.report.controller_cpu == "expected"
    model.timelines += say_missing(drawn) if expected else drawn


def kernel_lines(data: MonitorFinding) -> list[str]:
    """The point's fio-against-kernel comparison when it was not judged, and why."""
    if "check" not in data:
        return []
    view = KernelView.of(data["check"])
    why = not_judged(view)
    if why is None:
        return []
    pct = view.bytes_pct
    figure = "" if pct is None else f" (kernel vs fio {pct:+.1f} % of the bytes)"
    return [f"fio against the kernel not judged{figure}: {why}"]
