"""Open loop in the report: every rate-limited point's schedule against its completions
(analysis/openloop.py, docs/availability.md "Open loop"): a table of the longest stall, its
cause, the unserved demand, the drain and the latency from the intended start beside fio's,
and for each point that stalled a time chart of the I/Os due and completed, with the
backlog between them."""

from __future__ import annotations

from collections.abc import Iterator

from arraybench.finding_kinds import OPEN_LOOP, OpenLoopFinding, OpenLoopHostData
from arraybench.report.model import Figure, FigureSeries, ReportModel, ReportTable
from arraybench.report.sections.inputs import RunInputs
from arraybench.store.db import Finding, PointRecord
from arraybench.units import format_latency

GROUP = "Open loop: I/O due against completed"
CAPTION = (
    "Open loop: each rate-limited point's I/Os against the schedule they should have kept "
    "(rate x time). Stall: completions under a tenth of the intended rate while I/O was due "
    "(storage, or generator: fio's own processes stopped, the point flagged); unserved: I/Os "
    "due and not yet completed; drain: from the stall's end until the backlog was normal "
    "again; corrected latency: from each I/O's intended start, beside fio's own (from its "
    "submission). On many hosts, a row per host against its own schedule, from its "
    "1-second logs: stalls to the second, fio's latency per second its mean."
)


def _s(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f} s"


def _stall(data: OpenLoopFinding | OpenLoopHostData) -> str:
    if not data["stalls"]:
        return "none"
    longest = max(data["stalls"], key=lambda s: s["length_s"])
    stuck = " (stuck)" if data.get("stuck") else ""
    return f"{longest['length_s']:.1f} s at {longest['start_s']:.1f} s, {longest['cause']}{stuck}"


def _pair(data: OpenLoopFinding | OpenLoopHostData, name: str) -> str:
    corrected = data["corrected_latency_us"].get(name)
    fio = data["fio_latency_us"].get(name)
    return f"{format_latency(corrected)} ({format_latency(fio)})"


def _row(name: str, d: OpenLoopFinding | OpenLoopHostData) -> list[str]:
    return [
        name, f"{d['intended_iops']:,.0f} IOPS", _stall(d),
        f"{d['unserved_peak_ios']:,.0f} I/Os", _s(d["drain_s"]), _pair(d, "p50"),
        _pair(d, "p99"), _pair(d, "p99.9"), _pair(d, "max"),
    ]  # fmt: skip


def open_loop_line(d: OpenLoopFinding) -> str:
    """`show`'s line for a rate-limited point: the longest stall, the unserved peak, the
    drain and the p99 from the intended start beside fio's."""
    drain = "" if d["drain_s"] is None else f", drained in {d['drain_s']:.1f} s"
    return (f"open loop at {d['intended_iops']:,.0f} IOPS: longest stall {_stall(d)}, unserved "
            f"peak {d['unserved_peak_ios']:,.0f} I/Os{drain}; p99 from the intended start "
            f"{format_latency(d['corrected_latency_us'].get('p99'))}, fio's "
            f"{format_latency(d['fio_latency_us'].get('p99'))}")  # fmt: skip


def _open_loops(
    points: list[PointRecord], findings: list[Finding]
) -> Iterator[tuple[PointRecord, OpenLoopFinding]]:
    """Each stored point's `open_loop` finding, with its point, in the findings' order."""
    by_id = {p.id: p for p in points}
    for f in findings:
        point = by_id.get(f.point_id or 0)
        if point is not None and f.kind == OPEN_LOOP.name:
            yield point, OPEN_LOOP.of(f)


def open_loop_table(points: list[PointRecord], findings: list[Finding]) -> ReportTable | None:
    rows = []
    for point, d in _open_loops(points, findings):
        rows.append(_row(point.key, d))
        for host, h in d.get("hosts", {}).items():  # many hosts: each host's own schedule
            rows.append(_row(f"{point.key} on {host}", h))
    if not rows:
        return None
    columns = ["Point", "Intended", "Longest stall", "Unserved peak", "Drain",
               "p50 (fio's)", "p99 (fio's)", "p99.9 (fio's)", "Max (fio's)"]  # fmt: skip
    return ReportTable("Open loop: the schedule kept", columns, rows, CAPTION)


def backlog_figures(points: list[PointRecord], findings: list[Finding]) -> list[Figure]:
    """A time chart per point that stalled: due, completed and the backlog, in I/Os."""
    figures = []
    for point, d in _open_loops(points, findings):
        if not d["stalls"] or not d.get("series"):
            continue
        x = [row[0] for row in d["series"]]
        due = [row[1] for row in d["series"]]
        done = [row[2] for row in d["series"]]
        backlog: list[float | None] = [max(0.0, a - b) for a, b in zip(due, done, strict=True)]
        series = [FigureSeries("due", list(due), x=x), FigureSeries("completed", list(done), x=x),
                  FigureSeries("unserved (backlog)", backlog, x=x)]  # fmt: skip
        marks = [(s["start_s"], f"stall ({s['cause']})") for s in d["stalls"]]
        figures.append(Figure("time", f"{point.key}: I/O due and completed", "time from the "
                              "schedule's start (s)", "I/Os", [], series, caption=CAPTION,
                              group=GROUP, marks=marks))  # fmt: skip
    return figures


def section(model: ReportModel, run: RunInputs) -> None:
    table = open_loop_table(run.points, run.findings)
    if table is not None:
        model.tables.append(table)
    model.figures += backlog_figures(run.points, run.findings)
