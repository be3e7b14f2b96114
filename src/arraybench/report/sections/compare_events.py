"""compare: each event's impact in each compared run side by side, the figures a failure study
is about (the dip, the time to recover, the overshoot of the catch-up after it), where the
max / optimal table's point means say little: a point with a 5 s stall in 60 s moves its mean
by 8 %, whatever the stall's depth or length.

The figures are those each run stored with its point (analysis/events.py event_impact, run at
measurement time) and its own report prints (report/sections/failures.py, the same words):
nothing is measured again here, so a run's report and the comparison state the same numbers.
Events are matched across runs by the point's level and the event's label; rows of one event
at one level follow each other, one per run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from arraybench.finding_kinds import EVENTS, EventImpactData
from arraybench.report.model import ReportTable
from arraybench.report.sections.failures import (
    BAND_RULE,
    OVERSHOOT,
    event_name,
    impact_unit,
    overshoot_text,
    recovery_column,
    recovery_text,
)
from arraybench.store.db import PointRecord, Store
from arraybench.units import format_latency, format_throughput

TITLE = "{key}: each event's impact, runs side by side"


class Compared(Protocol):
    """One compared run (runseries.RunPoints): its label, run and points."""

    @property
    def label(self) -> str: ...
    @property
    def run_id(self) -> str: ...
    @property
    def points(self) -> Sequence[PointRecord]: ...


def _key(p: PointRecord) -> str:
    # as compare's curves: the workload (at a device count)
    return f"{p.workload} ({p.devices} dev)" if p.devices else p.workload


def _impacts(store: Store, run: Compared) -> dict[int, list[EventImpactData]]:
    """Point id -> its events' impact on the point's total, as stored with it."""
    ids = {p.id for p in run.points}
    return {f.point_id: EVENTS.of(f).get("impact", [])
            for f in store.findings(run.run_id, EVENTS.name) if f.point_id in ids}  # fmt: skip


def _row(level: str, label: str, i: EventImpactData) -> list[str]:
    dip = "–" if i["dip_pct"] is None else f"-{i['dip_pct']:.1f} %"
    before = format_throughput(i["baseline"], impact_unit(i))
    return [level, event_name(i), label, before, dip,
            recovery_text(i), overshoot_text(i), format_latency(i["max_latency_us"])]  # fmt: skip


def event_tables(store: Store, runs: Sequence[Compared]) -> list[ReportTable]:
    """One table per workload with events in any compared run: a row per event, level and
    run, the runs of one event and level next to each other."""
    found: dict[str, dict[tuple[str, str], list[tuple[int, list[str]]]]] = {}
    impacts: dict[str, list[EventImpactData]] = {}
    for order, run in enumerate(runs):
        stored = _impacts(store, run)
        for p in sorted(run.points, key=lambda p: p.seq):
            for i in stored.get(p.id, []):
                level = p.identity.label
                group = found.setdefault(_key(p), {}).setdefault((level, i["label"]), [])
                group.append((order, _row(level, run.label, i)))
                impacts.setdefault(_key(p), []).append(i)
    tables = []
    for key, events in found.items():
        rows = [row for group in events.values() for _, row in sorted(group, key=lambda r: r[0])]
        columns = ["Level", "Event", "Run", "Before", "Dip", recovery_column(impacts[key]),
                   OVERSHOOT, "Max latency"]  # fmt: skip
        caption = (
            "Each run's own figures, as its report states them (on the point's total, all "
            "hosts together): Before, the mean of the seconds before the event; Dip, its "
            f"lowest second against it; recovery, back within the band for 3 s; {BAND_RULE}; "
            "Overshoot, the highest second from the first one out of the band to the recovery "
            "(a run or a prompt is never reverted: its recovery counts from its start); "
            "docs/availability.md"
        )
        tables.append(ReportTable(TITLE.format(key=key), columns, rows, caption, key_columns=3))
    return tables
