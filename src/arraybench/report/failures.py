"""Failure under load in the report: each event's impact and recovery, the event log, what
the paths and devices looked like before, during and after, and the integrity check."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from arraybench.report.model import ReportTable
from arraybench.store.db import Finding, PointRecord
from arraybench.units import format_latency, format_throughput


def _clock(unix: float | None) -> str:
    if unix is None:
        return "–"
    return datetime.fromtimestamp(unix, UTC).strftime("%H:%M:%S.%f")[:-3]


def _s(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f} s"


RECOVERY = "Back within 5 %"  # the column of the impact table; the chart notes say it too


def recovery_text(impact: dict[str, Any]) -> str:
    """When the throughput was back within 5 % of the baseline, in the same words in the
    impact table (terminal, HTML, Markdown) and the charts' notes: after the start (a
    fail-over while the event lasts) and after the revert, or not before the point ended."""
    start, revert = impact.get("recovery_after_start_s"), impact.get("recovery_after_revert_s")
    reverted = impact.get("end_unix") is not None
    if start is None and revert is None:
        return "not before the point ended"
    parts = []
    if start == 0:
        parts.append("no dip")
    elif start is not None:
        parts.append(f"{start:.1f} s after the start")
    if revert is not None and not (start == 0 and revert == 0):
        parts.append(f"{revert:.1f} s after the revert")
    elif revert is None and reverted:
        parts.append("not after the revert")
    return "; ".join(parts)


def impact_table(key: str, unit: str, data: dict[str, Any]) -> ReportTable:
    rows = []
    for i in data.get("impact", []):
        dip = "–" if i["dip_pct"] is None else f"-{i['dip_pct']:.1f} %"
        rows.append([
            i["label"], i["kind"], _clock(i["start_unix"]),
            format_throughput(i["baseline"], unit), format_throughput(i["low"], unit), dip,
            recovery_text(i), format_latency(i["max_latency_us"]),
        ])  # fmt: skip
    caption = (
        f"Baseline: mean of the seconds before the event; recovery: back within 5 % of it for "
        f"3 s. fio I/O errors during the point: {data.get('io_errors', 0)}."
    )
    columns = ["Event", "Kind", "At (UTC)", "Before", "Lowest second", "Dip", RECOVERY,
               "Max latency"]  # fmt: skip
    return ReportTable(f"{key}: impact of each event", columns, rows, caption)


def log_table(key: str, data: dict[str, Any]) -> ReportTable:
    rows = [
        [r["label"], r["action"], r["outcome"], _clock(r["started_unix"]),
         _s(r["ended_unix"] - r["started_unix"]), (r["detail"] or "")[:160]]
        for r in data.get("records", [])
    ]  # fmt: skip
    return ReportTable(f"{key}: event log", ["Event", "Step", "Outcome", "At (UTC)", "Took",
                                            "Detail"], rows)  # fmt: skip


def paths_table(key: str, data: dict[str, Any]) -> ReportTable:
    rows = [[moment, entry["line"]] for moment, entries in data.get("paths", {}).items()
            for entry in entries]  # fmt: skip
    return ReportTable(f"{key}: paths and devices", ["When", "State"], rows,
                       "Visibility, device-mapper multipath paths and SCSI states of each "
                       "target, before, during each event and after.")  # fmt: skip


def integrity_table(key: str, data: dict[str, Any]) -> ReportTable:
    rows = [
        [f"{p['offset']:,}", p["kind"], str(p["expected_generation"]),
         "–" if p["found_generation"] is None else str(p["found_generation"]),
         _clock(p["written_at_ns"] / 1e9), p["detail"]]
        for p in data.get("problems", [])
    ]  # fmt: skip
    omitted = data.get("problems_omitted", 0)
    caption = str(data.get("summary", "")) + (f"; {omitted} more not listed" if omitted else "")
    title = f"{key}: integrity" + (f" on host {data['host']}" if data.get("host") else "")
    return ReportTable(title, ["Offset (bytes)", "Problem", "Expected generation",
                                             "Found", "Written at (UTC)", "Detail"], rows,
                       caption)  # fmt: skip


def failure_tables(points: list[PointRecord], findings: list[Finding]) -> list[ReportTable]:
    by_id = {p.id: p for p in points}
    tables = []
    for f in findings:
        point = by_id.get(f.point_id or 0)
        if point is None:
            continue
        if f.kind == "events":
            tables += [impact_table(point.key, point.unit, f.data), log_table(point.key, f.data)]
            if f.data.get("paths"):
                tables.append(paths_table(point.key, f.data))
        elif f.kind == "integrity" and f.data.get("problems"):  # clean: the verdict says so
            tables.append(integrity_table(point.key, f.data))
    return tables
