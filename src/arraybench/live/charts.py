"""The live page's charts, drawn by the report's own chart code from a snapshot: the current
point's per-second IOPS (or MB/s) per host and in total with its events marked
(`report/charts/timechart.py`), and each finished series' curve over its load levels
(`report/charts/curve.py`), with the report's hover texts (`report/charts/interact.py`). The
report's code escapes every text it draws; the titles added here are escaped here."""

from __future__ import annotations

from html import escape

from arraybench.live.state import FinishedView, Snapshot
from arraybench.report.charts.curve import curve_chart
from arraybench.report.charts.timechart import ChartEvent, TimeSeries, time_chart
from arraybench.report.model import CurvePanel


def point_chart(snap: Snapshot) -> str:
    """The current point's seconds since its first, one line per host (and the total)."""
    point, rows = snap["point"], snap["series"]
    if point is None or not rows:
        return ""
    mbps = point["unit"] == "MB/s"
    t0 = point["started"]  # seconds since the point started: its events and ramp line up
    xs = [float(r[0] - t0) for r in rows]
    hosts = sorted({h for r in rows for h in r[3]})
    series = [TimeSeries("total", [r[2] if mbps else r[1] for r in rows], point["unit"])]
    if len(hosts) > 1:  # one host: its line is the total
        series += [TimeSeries(h, [None if mbps else r[3].get(h) for r in rows], point["unit"],
                              dashed=True) for h in hosts]  # fmt: skip
    mine = [e for e in snap["events"] if e["point"] == point["key"]]
    events = [ChartEvent(e["t"] - t0, f"{e['label']} {e['action']}") for e in mine]
    title = f"{point['key']}: {point['unit']} per second"
    return time_chart(title, xs, series, events=events, width=900, height=260)


def _panel(points: list[FinishedView]) -> CurvePanel:
    ordered = sorted(points, key=lambda p: p["outstanding"])
    unit = ordered[0]["unit"]
    return CurvePanel(
        mix_label=ordered[0]["workload"],
        x_label="outstanding I/Os (workers x iodepth)",
        x_values=[float(p["outstanding"]) for p in ordered],
        x_ticks=[p["level"] for p in ordered],
        throughput_unit=unit,
        throughput=[p["mbps"] if unit == "MB/s" else p["iops"] for p in ordered],
        lat_mean_us=[p["lat_mean_us"] for p in ordered],
        lat_p99_us=[p["lat_p99_us"] for p in ordered],
        optimal_index=None,
        max_index=None,
        min_latency_index=None,
    )


def finished_charts(snap: Snapshot) -> list[tuple[str, str]]:
    """(title, SVG) per finished series (scenario and workload), in the order they ran."""
    groups: dict[tuple[str, str], list[FinishedView]] = {}
    for p in snap["finished"]:
        groups.setdefault((p["scenario"], p["workload"]), []).append(p)
    found = []
    for (scenario, workload), points in groups.items():
        title = f"{scenario}/{workload}" if scenario else workload
        found.append((title, curve_chart(_panel(points), width=720, height=240)))
    return found


def charts_html(snap: Snapshot) -> str:
    """The charts' part of the page, replaced as a whole on each poll."""
    parts = []
    current = point_chart(snap)
    if current:
        parts.append(f'<section class="now"><h2>Current point</h2>{current}</section>')
    for title, svg in reversed(finished_charts(snap)):
        parts.append(f'<section class="done"><h2>{escape(title)}</h2>{svg}</section>')
    return "\n".join(parts) or '<p class="wait">waiting for the first second…</p>'
