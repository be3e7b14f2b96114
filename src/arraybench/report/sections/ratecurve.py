"""The response-time curve (plan `curve:`, vdbench's iorate=curve): per workload a table of
its rates (planned, achieved, the read share, latency, reached or not) and a chart of latency
against the IOPS achieved, the rates it missed marked. A rate is reached when its total and
its read share are both within the tolerance (over the rate or off the mix is a miss too)."""

from __future__ import annotations

from arraybench.finding_kinds import CURVE, CurveFinding
from arraybench.records import Finding
from arraybench.report.model import Figure, FigureSeries, ReportTable
from arraybench.units import format_iops, format_latency


def _reached(d: CurveFinding) -> str:
    if d["reached"]:
        return "yes"
    tolerance = f"(tolerance {d['tolerance_pct']:g} %)"
    if "misses" in d:  # how it missed: the total, the mix, or both
        return f"NO: {'; '.join(d['misses'])} {tolerance}"
    share = d["achieved_iops"] / d["planned_iops"] * 100 if d["planned_iops"] else 0.0
    return f"NO: {share:.0f} % of the planned rate {tolerance}"


def _reads(d: CurveFinding) -> str:
    """The read share achieved ("–": a step stored before it was kept)."""
    got = d.get("achieved_read_pct")
    return "–" if got is None else f"{got:.1f} %"


def _reads_heading(rows: list[CurveFinding]) -> str:
    """The column's heading with the workload's planned mix (one per workload)."""
    planned = next((d["planned_read_pct"] for d in rows if "planned_read_pct" in d), None)
    return "Reads" if planned is None else f"Reads (planned {planned:g} %)"


def curve_report(findings: list[Finding]) -> tuple[list[ReportTable], list[Figure]]:
    by_workload: dict[str, list[CurveFinding]] = {}
    for d in CURVE.among(findings):
        by_workload.setdefault(d["workload"], []).append(d)
    tables, figures = [], []
    for workload, rows in by_workload.items():
        rows.sort(key=lambda d: d["percent"])
        top = rows[0]
        title = f"Response-time curve: {workload}"
        caption = (f"{workload} at its maximum's load level ({top['max_key']}, "
                   f"{format_iops(top['max_iops'])}), rate-limited to each % of that maximum; "
                   "a rate whose total or read share missed the plan by more than the "
                   "tolerance is marked")  # fmt: skip
        table_rows = [[f"{d['percent']} %", format_iops(d["planned_iops"]),
                       format_iops(d["achieved_iops"]), _reads(d), format_latency(d["lat_mean_us"]),
                       format_latency(d["lat_p99_us"]), _reached(d)] for d in rows]  # fmt: skip
        columns = ["Rate", "Planned", "Achieved", _reads_heading(rows), "Mean latency",
                   "p99 latency", "Reached"]  # fmt: skip
        tables.append(ReportTable(title, columns, table_rows, caption))
        drawn = sorted(rows, key=lambda d: d["achieved_iops"])  # along the x axis, as SPC-1
        missed = [not d["reached"] for d in drawn]
        x = [d["achieved_iops"] for d in drawn]
        figures.append(Figure(
            "xy", title, "IOPS achieved", "µs", [f"{d['percent']} %" for d in drawn],
            [FigureSeries("mean latency", [d["lat_mean_us"] for d in drawn], missed, x),
             FigureSeries("p99 latency", [d["lat_p99_us"] for d in drawn], missed, x)],
            caption=caption + " (red cross).", group="Response-time curves",
        ))  # fmt: skip
    return tables, figures
