"""The interference and metadata tests in the report: their tables and the base-load chart."""

from __future__ import annotations

from arraybench.analysis.metadata import MetadataRow, metadata_table
from arraybench.finding_kinds import INTERFERENCE, METADATA, InterferenceFinding
from arraybench.report.model import Internal, ReportModel, ReportTable, Timeline
from arraybench.report.sections.inputs import RunInputs
from arraybench.store.db import Finding
from arraybench.units import format_iops, format_latency, format_mbps

GRID_PATTERNS = ("random", "sequential")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:+.0f} %"


def interference_report(data: InterferenceFinding) -> tuple[ReportTable, Timeline]:
    rows = [
        [r["label"], format_iops(r["base_iops"]), format_latency(r["base_lat_mean_us"]),
         format_latency(r.get("base_p99_us")), _pct(r["base_iops_change_pct"]),
         _pct(r["base_lat_change_pct"]), format_mbps(r["bg_mbps"]),
         format_latency(r.get("bg_lat_mean_us"))]
        for r in data["rows"]
    ]  # fmt: skip
    table = ReportTable(
        title="Mixed workload: the base load beside growing background streams",
        columns=[
            "window",
            "base IOPS",
            "base mean latency",
            "base p99 (completion)",
            "IOPS vs alone",
            "latency vs alone",
            "background MB/s",
            "background mean latency",
        ],
        rows=rows,
        caption=(
            f"on {data.get('target', 'the first target')}: the base load tolerates "
            f"{data['tolerated_steps']} background step(s) before its mean latency rises more "
            f"than {data['max_latency_increase']:g} %"
        ),
    )
    chart = data["chart"]
    timeline = Timeline(
        title="Mixed workload: base load IOPS and latency over time",
        t_s=chart["t_s"],
        throughput_unit="IOPS",
        throughput=chart["base_iops"],
        lat_mean_us=chart["base_lat_us"],
        events=[(float(t), label) for t, label in chart["events"]],
        findings=[table.caption],
    )
    return table, timeline


def background_timeline(data: InterferenceFinding) -> list[Timeline]:
    """The large I/O itself over the whole test, the "background alone" phase included: its
    MB/s and its own latency (dbi's key observations)."""
    chart = data["chart"]
    if not any(v is not None for v in chart["bg_mbps"]):
        return []
    lat = chart.get("bg_lat_us") or [None] * len(chart["t_s"])
    return [Timeline(
        title="Mixed workload: the large I/O (background streams) MB/s and latency over time",
        t_s=chart["t_s"], throughput_unit="MB/s", throughput=chart["bg_mbps"],
        lat_mean_us=lat, events=[(float(t), label) for t, label in chart["events"]],
        findings=["after 'base stopped': the large I/O alone"],
    )]  # fmt: skip


# a phase shorter than this is a count over a few of fio's 1 ms ticks: its rate is quantised
# (2 ms and 3 ms give 50k and 33k for 100 files, nothing between) by up to 1 / elapsed
QUANTISED_MS = 100
# a customer's report: the caveat without the plan's key (report/audience.py)
INTERNAL = (Internal(r"; more files_per_thread \(or no --scale\) gives phases long enough to "
                     "measure"),)  # fmt: skip


def quantisation_caption(rows: list[MetadataRow]) -> str:
    """Said under the rates when some phases were too short for their rate to mean much."""
    short = [r for r in rows if 0 < r.elapsed_ms < QUANTISED_MS]
    if not short:
        return ""
    worst = min(r.elapsed_ms for r in short)
    return (f"{len(short)} of {len(rows)} rates are counts over less than {QUANTISED_MS} ms "
            f"(the shortest {worst} ms): fio times a phase in whole ms, so these rates are "
            f"quantised, up to ±{100 / worst:.0f} %; more files_per_thread (or no --scale) "
            "gives phases long enough to measure")  # fmt: skip


def metadata_report(findings: list[Finding]) -> list[ReportTable]:
    rows = [MetadataRow(**row) for data in METADATA.among(findings) for row in data["rows"]]
    if not rows:
        return []
    tables = []
    if any(r.tool == "mdtest" for r in rows):  # rates only, over iterations
        n = max(r.iterations for r in rows)
        wanted = [("ops_per_s", "operations per second", f"mdtest's SUMMARY rate: the mean "
                   f"over {n} iteration(s), all tasks together"),
                  ("ops_min", "slowest iteration's ops/s", "mdtest's Min"),
                  ("ops_max", "fastest iteration's ops/s", "mdtest's Max")]  # fmt: skip
        for metric, title, caption in wanted:
            header, *body = metadata_table(rows, metric)
            tables.append(ReportTable(f"Metadata test (mdtest): {title} by tasks", header, body,
                                      caption))  # fmt: skip
        return tables
    for metric, title in (("ops_per_s", "operations per second"),
                          ("lat_mean_us", "mean latency (µs)")):  # fmt: skip
        header, *body = metadata_table(rows, metric)
        caption = quantisation_caption(rows) if metric == "ops_per_s" else ""
        tables.append(ReportTable(f"Metadata test: {title} by threads", header, body, caption))
    return tables


def special_report(findings: list[Finding]) -> tuple[list[ReportTable], list[Timeline]]:
    tables: list[ReportTable] = []
    timelines: list[Timeline] = []
    for data in INTERFERENCE.among(findings):
        table, timeline = interference_report(data)
        tables.append(table)
        timelines += [timeline, *background_timeline(data)]
    tables += metadata_report([f for f in findings if f.kind == METADATA.name])
    return tables, timelines


def section(model: ReportModel, run: RunInputs) -> None:
    """The test kinds' tables and timelines (interference, metadata)."""
    tables, timelines = special_report(run.findings)
    model.tables += tables
    model.timelines += timelines
