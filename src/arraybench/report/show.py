"""What `arraybench show` says of a run: its points with their flags, events, integrity checks
and scenario impacts (rendered as text by console_text.py), or all of it as one JSON document.

The report's heavier modules load only when asked for: `show` starts fast
(benchmarks/startup.py)."""

from __future__ import annotations

import json
import typing
from dataclasses import asdict, dataclass, fields

from arraybench.analysis.kernelcheck import views_by_point
from arraybench.analysis.validity import KIND, flags_by_point
from arraybench.finding_kinds import (
    DATA_READ_BACK,
    DATA_REDUCTION,
    EVENTS,
    INTEGRITY,
    MONITOR,
    OPEN_LOOP,
    PROVENANCE,
)
from arraybench.point_identity import grid_parts
from arraybench.report.sections.datareduction import array_reduction
from arraybench.store.db import Finding, PointRecord, RunRecord, Store

if typing.TYPE_CHECKING:
    from arraybench.analysis.validity import Flag
    from arraybench.report.model import ReportTable


@dataclass(frozen=True)
class ShowFacts:
    run: RunRecord
    points: list[PointRecord]
    flags: dict[int, list[Flag]]  # point id -> why its figures may not be trusted
    events: list[tuple[PointRecord, list[str]]]  # the impact tables' gist, per point
    integrity: list[dict[str, typing.Any]]  # integrity_rows
    impacts: list[ReportTable]  # plan `scenarios:`: each workload's maximum per scenario


def show_facts(store: Store, run: RunRecord) -> ShowFacts:
    from arraybench.analysis.repeats import collapse
    from arraybench.report.sections.openloop import open_loop_line
    from arraybench.report.sections.scenarios import impact_tables, scenario_labels, scenario_order
    from arraybench.report.sections.timelines import event_lines

    points = store.points(run.id)
    by_id = {p.id: p for p in points}
    found = store.findings(run.id, EVENTS.name)
    events = [(by_id[f.point_id or 0], event_lines(EVENTS.of(f)))
              for f in found if (f.point_id or 0) in by_id]  # fmt: skip
    loops = store.findings(run.id, OPEN_LOOP.name)
    events += [(by_id[f.point_id or 0], [open_loop_line(OPEN_LOOP.of(f))])
               for f in loops if (f.point_id or 0) in by_id]  # fmt: skip
    impacts: list[ReportTable] = []
    # their labels and headlines need the plan model (pydantic): read only when the run has
    # scenarios; the same headlines as the report's (report/sections/headlines.py)
    if scenario_order(collapse(points)):
        from arraybench.report.sections.headlines import curve_levels, stored_headlines

        heads = stored_headlines(run, points, store.findings(run.id, KIND))
        impacts = impact_tables(curve_levels(points), scenario_labels(run), heads)
    flags = flags_by_point(store.findings(run.id, KIND))
    integrity = integrity_rows(points, store.findings(run.id, INTEGRITY.name))
    return ShowFacts(run, points, flags, events, integrity, impacts)


def integrity_rows(
    points: typing.Sequence[PointRecord], found: typing.Sequence[Finding]
) -> list[dict[str, typing.Any]]:
    """Each integrity check of the run (one per host on many hosts), with its bad blocks."""
    by_id = {p.id: p for p in points}
    rows: list[dict[str, typing.Any]] = []
    for f in found:
        point = by_id.get(f.point_id or 0)
        if point is None:
            continue
        counts = {k: f.data.get(k, 0) for k in ("checked", "lost", "corrupt", "unreadable")}
        rows.append({"seq": point.seq, "point": point.key, "host": f.data.get("host"),
                     "summary": f.data.get("summary", ""), **counts, "error": f.data.get("error"),
                     "problems": f.data.get("problems", [])})  # fmt: skip
    return rows


def _point_dicts(
    points: typing.Sequence[PointRecord], flags: dict[int, list[Flag]]
) -> list[dict[str, object]]:
    names = [f.name for f in fields(PointRecord) if f.name not in ("metrics", "identity")]
    graded = {i: [{**f.as_dict(), "grade": f.grade} for f in found] for i, found in flags.items()}
    return [{name: getattr(p, name) for name in names} | p.metrics
            | {"flags": graded.get(p.id, [])} for p in points]  # fmt: skip


def show_json(store: Store, run: RunRecord) -> dict[str, typing.Any]:
    """`show --format json`: the run, every point with its metrics, flags, spread and event
    impacts, the provenance, integrity checks and headlines."""
    from arraybench.analysis.repeats import point_spreads
    from arraybench.report.sections.headlines import headline_dict, stored_headlines

    points = store.points(run.id)
    dicts = _point_dicts(points, flags_by_point(store.findings(run.id, KIND)))
    spreads = point_spreads(points)
    events = {f.point_id: EVENTS.of(f) for f in store.findings(run.id, EVENTS.name)}
    loops = {f.point_id: OPEN_LOOP.of(f) for f in store.findings(run.id, OPEN_LOOP.name)}
    reduction = DATA_REDUCTION.among(store.findings(run.id, DATA_REDUCTION.name))
    data = {name: entry for found in reduction for name, entry in found["workloads"].items()}
    reported = array_reduction(store, run.id, points)
    backs = {
        (f["workload"], f["scenario"]): f["targets"]
        for f in DATA_READ_BACK.among(store.findings(run.id, DATA_READ_BACK.name))
    }
    for p, d in zip(points, dicts, strict=True):
        d |= asdict(spreads[p.id])
        if p.id in events:  # each event's impact, on the total and on each host
            d["events"] = {k: events[p.id].get(k) for k in ("impact", "host_impact")}
        if p.id in loops:  # a rate-limited point: its schedule against its completions
            d["open_loop"] = {k: v for k, v in loops[p.id].items() if k != "series"}
        shown: dict[str, object] = {}
        if p.workload in data:  # the data requested and the sample's ratios before the run
            shown = {k: data[p.workload][k] for k in ("requested", "achieved")}
        if (p.workload, p.scenario) in backs:  # what the workload left on its targets
            shown["on_target"] = backs[p.workload, p.scenario]
        if (parts := grid_parts(p.workload)) is not None:  # a data_grid's copy (docs/data.md)
            shown["grid"] = {"workload": parts[0], "value": parts[1]}
        if p.id in reported:  # the array's own ratio over the point's seconds
            shown["array_reported"] = {"reduction": round(reported[p.id], 3)}
        if shown:
            d["data"] = shown
    provenance = PROVENANCE.among(store.findings(run.id, PROVENANCE.name))
    integrity = integrity_rows(points, store.findings(run.id, INTEGRITY.name))
    heads = stored_headlines(run, points, store.findings(run.id, KIND))
    return {"run": asdict(run), "points": dicts, "provenance": provenance,
            "integrity": integrity, "headlines": {name: headline_dict(h)
            for name, h in heads.items()}}  # fmt: skip


def show_text(store: Store, run: RunRecord, fmt: str) -> str:
    """`show --format json` (show_json) or `csv`: the same CSV as `report -o x.csv`."""
    from arraybench.report.render.csv.points import points_csv
    from arraybench.report.sections.points import point_row

    if fmt == "json":
        return json.dumps(show_json(store, run), indent=2) + "\n"
    points = store.points(run.id)
    kernel = views_by_point(store.findings(run.id, MONITOR.name))
    return points_csv([point_row(p, kernel.get(p.id)) for p in points]) if points else ""
