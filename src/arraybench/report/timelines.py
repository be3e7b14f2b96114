"""Timelines of single points (1-second series) and the human lines of their findings."""

from __future__ import annotations

from itertools import accumulate
from typing import Any

from arraybench.report.failures import RECOVERY, recovery_text
from arraybench.report.model import Timeline
from arraybench.store.db import Finding, PointRecord, Store
from arraybench.units import format_duration, format_throughput

MAX_TIMELINES = 60


def _sum(*values: float | None) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def cliff_lines(data: dict[str, Any], unit: str) -> tuple[list[str], list[tuple[float, str]]]:
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
    lines = [line]
    events = [(float(data["time_s"]), "write cliff")]
    if data.get("recovered"):
        lines.append(f"recovered at {format_duration(data['recovery_time_s'])} to "
                     f"{level(data['level_recovered'])}")  # fmt: skip
        events.append((float(data["recovery_time_s"]), "recovered"))
    if data.get("gc_bytes_per_s"):
        lines.append(f"garbage-collection throughput ≈ {data['gc_bytes_per_s'] / 1e6:,.0f} MB/s "
                     "(sustained post-cliff write rate)")  # fmt: skip
    return lines, events


def steady_lines(data: dict[str, Any]) -> list[str]:
    if data.get("average") is None:
        return [f"steady state: fewer than {data.get('window')} samples to judge"]
    verdict = "steady" if data["steady"] else "NOT steady"
    return [
        f"SNIA steady state over the last {data['window']} samples: {verdict} (range "
        f"{data['range_excursion'] * 100:.1f} % of the mean, limit 20 %; slope excursion "
        f"{data['slope_excursion'] * 100:.1f} %, limit 10 %)"
    ]


def event_marks(data: dict[str, Any], t0: int) -> list[tuple[float, str]]:
    """Chart markers: each event's start and its revert, in seconds of the point's series."""
    marks = []
    for r in data.get("records", []):
        if r["action"] in ("apply", "prompt", "run") and r["outcome"] == "ok":
            marks.append((r["ended_unix"] - t0, r["label"]))
        elif r["action"] == "revert":
            marks.append((r["ended_unix"] - t0, f"{r['label']} reverted"))
    return marks


def event_lines(data: dict[str, Any]) -> list[str]:
    lines = []
    for i in data.get("impact", []):
        dip = "–" if i["dip_pct"] is None else f"{i['dip_pct']:.1f} %"
        lines.append(f"{i['label']}: dip {dip} against the {i['baseline_seconds']} s before; "
                     f"{RECOVERY.lower()}: {recovery_text(i)}")  # fmt: skip
    if data.get("io_errors"):
        lines.append(f"fio counted {data['io_errors']} I/O errors during the point (and went on)")
    return lines


def timeline_of(store: Store, point: PointRecord, findings: list[Finding]) -> Timeline:
    samples = store.samples(point.id)
    t0 = samples[0].t if samples else 0
    mbps = point.unit == "MB/s"
    thr = [_sum(s.read_mbps, s.write_mbps) if mbps else _sum(s.read_iops, s.write_iops)
           for s in samples]  # fmt: skip
    lines: list[str] = []
    events: list[tuple[float, str]] = []
    gb = None
    for finding in findings:
        if finding.kind == "cliff":
            found, marks = cliff_lines(finding.data, point.unit)
            lines += found
            events += marks
            written = [(s.write_mbps or 0.0) / 1000 for s in samples]  # GB per 1-s sample
            gb = list(accumulate(written))
        elif finding.kind == "steady":
            lines += steady_lines(finding.data)
        elif finding.kind == "monitor":
            lines += finding.data.get("flags", [])
        elif finding.kind == "events":
            events += event_marks(finding.data, t0)
            lines += event_lines(finding.data)
    if point.ended_early:
        lines.append("ended early: fio's steady-state criterion was met")
    return Timeline(
        title=f"{point.key}: {point.unit} and latency over time",
        t_s=[float(s.t - t0) for s in samples],
        throughput_unit=point.unit,
        throughput=thr,
        lat_mean_us=[_weighted_lat(s) for s in samples],
        kernel=_kernel(store, point, samples, mbps),
        events=events,
        gb_written=gb,
        findings=lines,
    )


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
        or any(f.kind in ("cliff", "steady", "events", "integrity")
               for f in by_point.get(p.id, []))
    ]  # fmt: skip
    return [timeline_of(store, p, by_point.get(p.id, [])) for p in chosen[:MAX_TIMELINES]]
