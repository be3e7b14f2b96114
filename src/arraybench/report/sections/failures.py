"""Failure under load in the report: each event's impact and recovery, the event log, what
the paths and devices looked like before, during and after, and the integrity check."""

from __future__ import annotations

from datetime import UTC, datetime

from arraybench.finding_kinds import (
    EVENTS,
    INTEGRITY,
    EventImpactData,
    EventsFinding,
    IntegrityFinding,
)
from arraybench.report.model import ReportModel, ReportTable
from arraybench.report.sections.inputs import RunInputs
from arraybench.store.db import Finding, PointRecord
from arraybench.units import format_latency, format_throughput


def _clock(unix: float | None) -> str:
    if unix is None:
        return "–"
    return datetime.fromtimestamp(unix, UTC).strftime("%H:%M:%S.%f")[:-3]


def _s(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f} s"


RECOVERY = "Back within 5 %"  # the column of the impact table; the chart notes say it too
BANDED = "Back within the band"  # the same when a baseline's own spread widened a band
DEFAULT_BAND_PCT = 5.0
BAND_RULE = (
    "band: the larger of 5 % and the baseline's own spread (how far its seconds went from "
    "its mean, either way, at most 50 %), above the baseline as well as below it: a "
    "catch-up burst above the band is not back yet"
)
OVERSHOOT = "Overshoot"  # the column: the highest second until back, above the baseline


def recovery_text(impact: EventImpactData) -> str:
    """When the throughput was back within 5 % of the baseline, in the same words in the
    impact table (terminal, HTML, Markdown) and the charts' notes: after the start (a
    fail-over while the event lasts) and after the revert, or not before the point ended."""
    start, revert = impact.get("recovery_after_start_s"), impact.get("recovery_after_revert_s")
    reverted = impact.get("end_unix") is not None
    dip, band = impact.get("dip_pct"), impact.get("band_pct") or DEFAULT_BAND_PCT
    if dip is not None and dip <= band:  # its lowest second stayed within the band: a host
        return "no dip"  # the event spared reads so whether or not 3 s fitted before the end
    if start is None and revert is None:
        return "not before the point ended"
    parts = []
    if start == 0:
        parts.append("no dip")
    elif start is not None:
        parts.append(f"{start:.1f} s after the start")
    if revert is not None and not (start == 0 and revert == 0):
        parts.append(f"{revert:.1f} s after the revert")
    elif revert is None and reverted and start != 0:  # never left the band: nothing to
        parts.append("not after the revert")  # recover from (a host the event spared)
    if band > DEFAULT_BAND_PCT:
        parts[-1] += f" (within {band:.0f} %)"
    return "; ".join(parts)


def recovery_column(impacts: list[EventImpactData]) -> str:
    wide = any((i.get("band_pct") or 0) > DEFAULT_BAND_PCT for i in impacts)
    return BANDED if wide else RECOVERY


def _dip(impact: EventImpactData) -> str:
    return "–" if impact["dip_pct"] is None else f"-{impact['dip_pct']:.1f} %"


def impact_unit(impact: EventImpactData) -> str:
    """The unit of an impact's figures: its own metric (the runs measure the dip on IOPS, also
    on an MB/s point), not the point's."""
    return "MB/s" if impact.get("metric") == "mbps" else "IOPS"


def event_name(impact: EventImpactData) -> str:
    """`path A slow (throttle)`: the event's label and kind in one cell (a table of more
    than 8 columns is split on a page)."""
    return f"{impact['label']} ({impact['kind']})"


def overshoot_text(impact: EventImpactData) -> str:
    """`+150.0 %, 8 s above the band`: the highest second from the first one out of the band
    to the recovery (analysis/events.py); `none` when no second rose above the band; `–`
    for an event stored before the figure was (or without a baseline)."""
    pct, above = impact.get("overshoot_pct"), impact.get("overshoot_seconds")
    if pct is None:
        return "–"
    if not above:
        return "none"
    return f"+{pct:.1f} %, {above} s above the band"


def impact_table(key: str, unit: str, data: EventsFinding) -> ReportTable:
    rows = []
    impacts = data.get("impact", [])
    for i in impacts:
        rows.append([
            event_name(i), _clock(i["start_unix"]),
            format_throughput(i["baseline"], impact_unit(i)),
            format_throughput(i["low"], impact_unit(i)), _dip(i),
            recovery_text(i), overshoot_text(i), format_latency(i["max_latency_us"]),
        ])  # fmt: skip
    hosts = f" on all {len(data['hosts'])} hosts together" if data.get("hosts") else ""
    caption = (
        f"Baseline: mean of the seconds before the event; {BAND_RULE}; recovery: back within "
        f"the band for 3 s. fio I/O errors during the point: {data.get('io_errors', 0)}."
    )
    columns = ["Event", "At (UTC)", "Before", "Lowest second", "Dip", recovery_column(impacts),
               OVERSHOOT, "Max latency"]  # fmt: skip
    return ReportTable(f"{key}: impact of each event{hosts}", columns, rows, caption)


def host_impact_table(key: str, unit: str, data: EventsFinding) -> ReportTable:
    """A many-host point: each event's impact on each host's own seconds."""
    rows = []
    impacts = [i for found in data.get("host_impact", {}).values() for i in found]
    errors = data.get("host_io_errors", {})
    for host, found in data.get("host_impact", {}).items():
        for i in found:
            rows.append([
                i["label"], host, format_throughput(i["baseline"], impact_unit(i)),
                format_throughput(i["low"], impact_unit(i)), _dip(i), recovery_text(i),
                format_latency(i["max_latency_us"]), str(errors.get(host, "–")),
            ])  # fmt: skip
    rows.sort(key=lambda r: (r[0], r[1]))
    columns = ["Event", "Host", "Before", "Lowest second", "Dip", recovery_column(impacts),
               "Max latency", "I/O errors"]  # fmt: skip
    caption = (f"Each host's own per-second throughput (fio's interval logs, aligned on the "
               f"wall clock); {BAND_RULE}; I/O errors: fio's count for the point.")  # fmt: skip
    return ReportTable(f"{key}: impact of each event on each host", columns, rows, caption)


def log_table(key: str, data: EventsFinding) -> ReportTable:
    rows = [
        [r["label"], r["action"], r["outcome"], _clock(r["started_unix"]),
         _s(r["ended_unix"] - r["started_unix"]), (r["detail"] or "")[:160]]
        for r in data.get("records", [])
    ]  # fmt: skip
    return ReportTable(f"{key}: event log", ["Event", "Step", "Outcome", "At (UTC)", "Took",
                                            "Detail"], rows)  # fmt: skip


def paths_table(key: str, data: EventsFinding) -> ReportTable:
    rows = [[moment, entry["line"]] for moment, entries in data.get("paths", {}).items()
            for entry in entries]  # fmt: skip
    return ReportTable(f"{key}: paths and devices", ["When", "State"], rows,
                       "Visibility, device-mapper multipath paths and SCSI states of each "
                       "target, before, during each event and after.")  # fmt: skip


def integrity_table(key: str, data: IntegrityFinding) -> ReportTable:
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
        if f.kind == EVENTS.name:
            events = EVENTS.of(f)
            tables.append(impact_table(point.key, point.unit, events))
            if events.get("host_impact"):
                tables.append(host_impact_table(point.key, point.unit, events))
            tables.append(log_table(point.key, events))
            if events.get("paths"):
                tables.append(paths_table(point.key, events))
        elif f.kind == INTEGRITY.name and INTEGRITY.of(f).get("problems"):  # clean: the verdict
            tables.append(integrity_table(point.key, INTEGRITY.of(f)))  # says so
    return tables


def section(model: ReportModel, run: RunInputs) -> None:
    model.tables += failure_tables(run.points, run.findings)
