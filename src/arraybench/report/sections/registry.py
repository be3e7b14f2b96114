"""The run report's sections, in the order they are drawn: the one place that order is
written. Each entry takes the model built so far and the run's inputs (RunInputs, gathered
once) and appends its parts to the model: summary cells and panels, tables, timelines,
overlays, figures, notes, appendix tables. Within every part of the model the entries'
order is the reading order (the tables: the scenarios' first, then the seed reports'
tables, the rounds', ...; the notes: the summary's, then which curves are untimed, ...).
Some entries look at what came before them: the seed figures replace the curves they
draw, the array view adds a column to the points, the notes box counts every note."""

from __future__ import annotations

from collections.abc import Callable

from arraybench.report.model import Internal, ReportModel
from arraybench.report.sections import (
    adaptive,
    appendix,
    arrayside,
    conformance,
    controllercpu,
    datagrid,
    datareduction,
    distribution,
    failures,
    histograms,
    openloop,
    overlays,
    points,
    provenance,
    regions,
    rounds,
    runnotes,
    scaling,
    scenarios,
    seedfigures,
    seedtables,
    setupblock,
    special,
    spread,
    summary,
    timelines,
    verdicts,
)
from arraybench.report.sections.inputs import RunInputs

Section = Callable[[ReportModel, RunInputs], None]

SECTIONS: list[Section] = [
    setupblock.section,  # the set-up block's rows from the plan: customer, system, fabric
    summary.section,  # the summary table and the workload panels; headline notes
    points.section,  # the points table's rows (every stored point)
    scenarios.section,  # plan scenarios: impact tables (first), scenario overlays
    seedtables.section,  # maximum recorded per mix, devices x parallelism grids
    timelines.untimed_section,  # a note: the curves without per-second timelines
    regions.section,  # a note: a frontend region that is the whole target
    rounds.section,  # SNIA rounds: steady-state timelines, their notes, rounds tables
    special.section,  # test kinds (interference, metadata): tables and timelines
    timelines.section,  # single points' 1-second timelines
    distribution.section,  # latency percentiles per series
    overlays.section,  # the plan's `chart` groups
    scaling.section,  # scaling over hosts: tables, overlay, start-spread note
    adaptive.section,  # notes: what each adaptive series tried
    failures.section,  # failure under load: events, paths, integrity
    openloop.section,  # rate-limited points: stalls, unserved demand, corrected latency
    spread.section,  # which level won; per-point spreads, flags, thresholds (appendix)
    arrayside.section,  # `arraybench attach`: the array's view beside fio's
    datareduction.section,  # data: requested, achieved, read back, the array's ratio
    datagrid.section,  # data_grid: each data value's throughput and latency per level
    seedfigures.section,  # the seed reports' figure forms (replacing curves they draw)
    histograms.section,  # latency bars per series
    verdicts.section,  # acceptance criteria and integrity verdicts
    conformance.section,  # the claimed methodology's rules: kept, broken, not applicable
    provenance.section,  # versions, controller, times, folder, recorded provenance
    runnotes.section,  # partial points, purge, preconditioning, fio against the kernel
    appendix.section,  # the notes box, last: it counts every note above
]

# what each section declares internal to the engineer's report: a customer's leaves it out or
# reads the section's own customer words instead (report/audience.py)
INTERNAL: list[Internal] = [
    *summary.INTERNAL,
    *spread.INTERNAL,
    *appendix.INTERNAL,
    *controllercpu.INTERNAL,
    *special.INTERNAL,
    *regions.INTERNAL,
    *conformance.INTERNAL,
]
