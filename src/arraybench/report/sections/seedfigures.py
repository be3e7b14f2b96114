"""The seed reports' own figure forms, built from the stored points and findings of a run:
each a `Figure` (report/model.py) drawn by report/charts/figures.py in HTML and PDF and as a native
chart in Excel (report/render/xlsx/figures.py). One function per form; `seed_figures` gathers them.

- dbi (002): per workload run on a device ladder, one chart of throughput and one of mean
  latency against threads per device, one line per device count (its workbook's form); the
  per-(workload, device count) chart sections they replace are left out.
- CSCS (bars per operation and set-up, metadata bars) and HUS VM (IOPS, MB/s and latency
  against numjobs per block size; the write cliff's MB/s over time): report/sections/seedforms.py.
- the response-time curve (plan `curve:`): report/sections/ratecurve.py.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from arraybench.records import Finding, PointRecord
from arraybench.report.build import family_of
from arraybench.report.model import Figure, FigureSeries, ReportModel, ReportTable
from arraybench.report.sections.inputs import RunInputs
from arraybench.report.sections.overlays import chart_keys, with_marks
from arraybench.report.sections.ratecurve import curve_report
from arraybench.report.sections.seedforms import (
    chart_triples,
    cliff_mbps,
    heat_maps,
    is_pow2_ladder,
    metadata_bars,
    single_level_bars,
)
from arraybench.report.sections.summary import ceiling_for, fabric_of
from arraybench.units import format_quantity


def _ladders(points: list[PointRecord]) -> dict[str, dict[int, list[PointRecord]]]:
    """Workload -> device count -> its points, for workloads measured at several counts
    (one iodepth, on no host ladder: dbi's grid)."""
    found: dict[str, dict[int, list[PointRecord]]] = defaultdict(lambda: defaultdict(list))
    for p in points:
        if p.devices and not p.hosts and p.pattern in ("random", "sequential"):
            found[p.workload][p.devices].append(p)
    return {w: dict(by) for w, by in found.items()
            if len(by) > 1 and len({p.iodepth for ps in by.values() for p in ps}) == 1}  # fmt: skip


def device_figures(
    points: list[PointRecord], fabric: dict[str, Any] | None = None
) -> tuple[list[Figure], set[str]]:
    """dbi's form: per workload, throughput and mean latency against threads per device, one
    line per device count; and the section titles (families) these charts replace. With the
    plan's `fabric:`, the throughput chart carries its payload ceiling (every device count
    shares the host's links, so one line serves them all)."""
    figures, replaced = [], set()
    for workload, by_devices in _ladders(points).items():
        levels = sorted({p.workers for ps in by_devices.values() for p in ps})
        first = next(iter(by_devices.values()))[0]
        unit = first.unit
        x_label = f"threads per device (iodepth {first.iodepth})"
        tput, lat = [], []
        for devices in sorted(by_devices):
            at = {p.workers: p for p in by_devices[devices]}
            label = f"{devices} device{'s' if devices > 1 else ''}"
            tput.append(FigureSeries(label, [at[w].throughput() if w in at else None
                                             for w in levels]))  # fmt: skip
            lat.append(FigureSeries(label, [at[w].metric("total", "lat_mean_us") if w in at
                                            else None for w in levels]))  # fmt: skip
            replaced |= {family_of(p) for p in by_devices[devices]}
        ticks = [str(w) for w in levels]
        log = is_pow2_ladder(levels)
        group = f"{workload}: one line per device count"
        caption = (f"{workload} ({first.family}, {first.mix}): {len(by_devices)} device counts "
                   f"x {len(levels)} thread levels per device")  # fmt: skip
        top = ceiling_for(fabric, first)
        ceiling = None
        if top:
            value = top.in_unit(unit)
            ceiling = (value, f"theoretical {format_quantity(value, unit)} ({top.label})")
        figures += [
            Figure("lines", f"{workload}: {unit} by device count", x_label, unit, ticks, tput,
                   log_x=log, caption=caption, group=group, ceiling=ceiling),
            Figure("lines", f"{workload}: mean latency by device count", x_label, "µs", ticks,
                   lat, log_x=log, group=group),
        ]  # fmt: skip
    return figures, replaced


def seed_figures(
    model: ReportModel, points: list[PointRecord], findings: list[Finding],
    keys: dict[str, str], fabric: dict[str, Any] | None = None,
) -> tuple[list[ReportTable], list[Figure], set[str]]:  # fmt: skip
    """Every seed figure this run's points and findings make, the tables beside them and the
    titles of the chart sections and overlays they replace; `fabric`: the plan's."""
    figures, replaced = device_figures(points, fabric)
    # a run without a scenario label the user set: its bars' one set-up still needs a name
    bars, barred = single_level_bars(points, model.scenario or "this set-up")
    # one-dot curves (and one-tick overlays) of what the bars draw say less than the bars
    replaced |= {s.title for s in model.sections if s.title in barred}
    replaced |= {o.title for o in model.overlays if len(o.x_ticks) == 1 and bars}
    triples = chart_triples(points, keys)
    drawn = {f.group for f in triples}
    replaced |= drawn | {family_of(p) for p in points if keys.get(p.workload) in drawn}
    figures += bars + metadata_bars(findings) + triples
    figures += cliff_mbps(points, findings, model.timelines) + heat_maps(points)
    tables, curves = curve_report(findings)
    return tables, figures + curves, replaced


def add_seed_figures(
    model: ReportModel, points: list[PointRecord], findings: list[Finding],
    keys: dict[str, str], fabric: dict[str, Any] | None = None,
) -> None:  # fmt: skip
    """`keys`: workload -> its plan `chart` key (overlays.chart_keys); `fabric`: the plan's."""
    tables, figures, replaced = seed_figures(model, points, findings, keys, fabric)
    model.tables += tables
    model.figures += figures
    sections = [s for s in model.sections if s.title not in replaced]
    overlays = [o for o in model.overlays if o.title not in replaced]
    if len(sections) < len(model.sections) or len(overlays) < len(model.overlays):
        model.notes.append("curves drawn in the methodology's own form under Figures (one line "
                           "per device count or block size, bars for single load levels) are "
                           "not repeated as curve charts; their optimal point and maximum are "
                           "in the summary")  # fmt: skip
    model.sections = sections
    model.overlays = [with_marks(o) for o in overlays]  # each line's optimal point and max


def section(model: ReportModel, run: RunInputs) -> None:
    """The seed reports' own figure forms, replacing the curves they draw."""
    add_seed_figures(model, run.once, run.findings, chart_keys(run.plan), fabric_of(run.plan))
