"""The spread of repeated points and the points' validity flags, as report tables and notes.

Every writer renders ReportTables and notes already: nothing here draws.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.findings import series as per_second
from arraybench.analysis.headline import LEFT_OUT, Headline, Step, deciding_step
from arraybench.analysis.noise import Level, optimal_confidence, samples_spread_pct
from arraybench.analysis.repeats import groups, level_wins
from arraybench.analysis.statistics import METHOD, Spread
from arraybench.analysis.validity import (
    INVALIDATING,
    KIND,
    REMARK,
    THRESHOLDS,
    flags_by_point,
    grade,
    leaves_headline,
)
from arraybench.report.model import REMARK_MARK, Internal, ReportModel, ReportTable
from arraybench.report.sections.inputs import RunInputs
from arraybench.store.db import Finding, PointRecord, Store
from arraybench.units import format_latency, format_pct, format_throughput

SPREAD_CAPTION = (f"median of the repeats ± half-width of the 95 % interval of the mean "
                  f"({METHOD}), in % of the mean")  # fmt: skip
RULES = "docs/validity.md"  # where each flag's grade and threshold is explained
GRADE_TEXT = {INVALIDATING: "invalidating", REMARK: f"remark {REMARK_MARK}"}
# what a customer's report says instead (report/audience.py): no plan key, no option
INTERNAL = (
    Internal(r" \(repeat: N in the plan, or run --repeat N, gives them one\)"),
    Internal(r"; the plan's report: \{headline_includes_flagged: true\} keeps flagged points in"),
)
NO_SPREAD = ("each point was measured once: its figures have no spread "
             "(repeat: N in the plan, or run --repeat N, gives them one)")  # fmt: skip


@dataclass(frozen=True)
class LevelFacts:
    """What the curves and the headline figures need to know of each level (its key without
    `#N`) beyond its median point: its spread over the repeats and its validity flags."""

    throughput: dict[str, Spread] = field(default_factory=dict)  # repeated levels only
    latency: dict[str, Spread] = field(default_factory=dict)
    repeats: dict[str, int] = field(default_factory=dict)
    # kinds of any repetition: `flagged` the invalidating ones (the level leaves the headline
    # figures), `remarks` the rest (kept in, marked)
    flagged: dict[str, list[str]] = field(default_factory=dict)
    remarks: dict[str, list[str]] = field(default_factory=dict)
    include_flagged: bool = False  # the plan's report.headline_includes_flagged
    # series name -> (level key -> repetitions in which it was the optimal point, repetitions)
    optimal_wins: dict[str, tuple[dict[str, int], int]] = field(default_factory=dict)


def level_facts(
    points: Sequence[PointRecord], findings: Sequence[Finding], include_flagged: bool = False
) -> LevelFacts:
    facts = LevelFacts(include_flagged=include_flagged)
    for g in groups(points):
        facts.repeats[g.key] = g.repeats
        if g.repeats > 1:
            facts.throughput[g.key] = g.throughput()
            if (lat := g.latency()) is not None:
                facts.latency[g.key] = lat
    by_id = flags_by_point([f for f in findings if f.kind == KIND])
    for p in points:
        for f in by_id.get(p.id, []):
            into = facts.flagged if leaves_headline([f]) else facts.remarks
            level = into.setdefault(p.identity.level_key, [])
            level += [f.kind] if f.kind not in level else []
    for w in level_wins(points, () if include_flagged else facts.flagged.keys()):
        facts.optimal_wins[w.series] = (dict(w.optimal), w.repetitions)
    return facts


def headline_notes(series: str, summary: Headline, labels: Mapping[str, str]) -> list[str]:
    """Which flagged points the series' headline figures left out, and why (`labels`: each
    point's key -> its label within the series)."""
    if summary.named_from_flagged:
        return [
            f"{series}: every point has an invalidating flag (see the validity flags in the "
            "appendix): its optimal point and maximum are named from flagged points"
        ]
    if not summary.left_out:
        return []
    said = "; ".join(f"{labels.get(p.point.key, p.point.key)} ({p.why})"  # series named already
                     for p in summary.left_out)  # fmt: skip
    return [f"{series}: {said} left out of the optimal point, maximum and summary: flagged, "
            "its figures may not be the storage's (see the validity flags in the appendix); "
            "the plan's report: {headline_includes_flagged: true} keeps flagged "
            "points in (docs/headline.md)"]  # fmt: skip


def confidence_note(series: str, levels: Sequence[tuple[str, float]], optimal: str | None,
                    facts: LevelFacts) -> list[str]:  # fmt: skip
    """How sure the optimal point the report names is: its repetitions' wins and its
    neighbours within noise (only for repeated levels: one measurement has no spread)."""
    if optimal is None:
        return []
    noise = [Level(key, value, facts.throughput[key].half_width_pct if key in facts.throughput
                   else None) for key, value in levels]  # fmt: skip
    won, of = facts.optimal_wins.get(series, ({}, 0))
    text = optimal_confidence(noise, optimal, won.get(optimal, 0) if of else None, of or None)
    # keys read `workload/w8-qd1`; the series is named already
    text = text.replace(f"{levels[0][0].split('/', 1)[0]}/", "") if levels else text
    return [f"{series}: {text}"] if text else []


def _pct(value: float | None) -> str:
    return "?" if value is None else f"{value:+.0f} %"


def _said(step: Step, labels: Mapping[str, str]) -> str:
    """`w2 → w4: +18 % throughput for +69 % latency`"""
    return (f"{labels.get(step.start, step.start)} → {labels.get(step.to, step.to)}: "
            f"{_pct(step.gain_pct)} throughput for {_pct(step.lat_rise_pct)} latency")  # fmt: skip


def saturation_note(series: str, summary: Headline, labels: Mapping[str, str]) -> list[str]:
    """The maximum on the ladder's top level, still rising: it may not be the device's."""
    step = summary.unsaturated
    if step is None or summary.maximum is None:
        return []
    top = labels.get(step.to, step.to)
    return [f"{series}: its maximum is at the ladder's top level ({top}), still rising there "
            f"({_said(step, labels)}): the device may not be saturated; a higher level (more "
            "workers or a deeper queue) would show whether it gives more "
            "(docs/headline.md)"]  # fmt: skip


class SecondsNoise(Mapping[str, float | None]):
    """Point key -> the 95 % half-width (%) of its throughput from its own 1-second samples
    (analysis.noise.samples_spread_pct), read from the store only for the keys asked (a note
    needs two levels of a series, not every point's seconds)."""

    def __init__(self, store: Store, points: Sequence[PointRecord]) -> None:
        self._store, self._points = store, {p.key: p for p in points}
        self._known: dict[str, float | None] = {}

    def __getitem__(self, key: str) -> float | None:
        if key not in self._known:
            p = self._points[key]  # KeyError: Mapping.get says None
            _, iops, bytes_per_s = per_second(self._store.samples(p.id))
            self._known[key] = samples_spread_pct(iops if p.unit == "IOPS" else bytes_per_s)
        return self._known[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._points)

    def __len__(self) -> int:
        return len(self._points)


def decision_note(
    series: str, summary: Headline, curve: Sequence[CurvePoint], labels: Mapping[str, str],
    seconds: Mapping[str, float | None],
) -> list[str]:  # fmt: skip
    """When the optimal point rests on one fragile step (the step after it healthy again, or
    its two levels within their noise): which step decided and what a repeat would settle.
    `curve`: the series' points; `seconds`: key -> the 95 % half-width (%) of its throughput
    from its own 1-second samples, for levels measured once."""
    taking = [p for p in curve if not p.flagged] if summary.rule == LEFT_OUT else list(curve)
    repeated = any(p.noise_pct is not None for p in taking)
    noise = {p.key: p.noise_pct for p in taking} if repeated else dict(seconds)
    found = deciding_step(taking, summary.optimal, noise)
    if found is None or summary.optimal is None:
        return []
    opt = labels.get(summary.optimal.key, summary.optimal.key)
    failed = labels.get(found.ending.to, found.ending.to)
    once = "" if repeated else " measured once"
    text = (
        f"{series}: the optimal point {opt} rests on one step{once}, "
        f"{_said(found.ending, labels)}, which ended the healthy range"
    )
    if found.after is not None:
        text += f"; the step after it was healthy again ({_said(found.after, labels)})"
    if found.within_noise:
        basis = "over the repeats" if repeated else "from each level's 1-second samples"
        text += (
            f"; {opt} and {failed} are within each other's noise (95 % intervals of the "
            f"throughput {basis} overlap): the rule's decision is within the noise"
        )
    settle = ("more repeats of these levels (repeat: N)" if repeated else
              "repeating the levels (repeat: 3 in the plan, or run --repeat 3)")  # fmt: skip
    return [f"{text}. {settle[0].upper()}{settle[1:]} would settle whether {failed} ends the "
            "healthy range or is one noisy measurement (docs/headline.md)"]  # fmt: skip


def with_spread(value: str, pct: float | None) -> str:
    """`304 kIOPS ±2.1 %`; the value alone when it has no spread."""
    return f"{value} ±{format_pct(pct)}" if pct is not None else value


def spread_tables(
    points: Sequence[PointRecord], facts: LevelFacts | None = None
) -> list[ReportTable]:
    """The spread of each repeated level, and which level won per repetition (flagged levels,
    left out of the headline figures, win nothing unless the plan keeps them)."""
    facts = facts or LevelFacts()
    repeated = [g for g in groups(points) if g.repeats > 1]
    if not repeated:
        return []
    rows = []
    for g in repeated:
        tp, lat = g.throughput(), g.latency()
        unit = g.points[0].unit
        latency = with_spread(format_latency(lat.median), lat.half_width_pct) if lat else "–"
        rows.append([g.key, str(g.repeats),
                     with_spread(format_throughput(tp.median, unit), tp.half_width_pct),
                     latency])  # fmt: skip
    tables = [ReportTable("Spread over repeats", ["Point", "Repeats", "Throughput",
                          "Mean latency"], rows, SPREAD_CAPTION)]  # fmt: skip
    wins = level_wins(points, () if facts.include_flagged else facts.flagged.keys())
    if wins:
        labels = {p.identity.level_key: p.identity.level_label for p in points}

        def said(counts: list[tuple[str, int]], n: int) -> str:  # the level, not its series
            return ", ".join(f"{labels.get(key, key)}: {won} of {n}"
                             for key, won in counts) or "–"  # fmt: skip

        rows = [[w.series, str(w.repetitions), said(w.maximum, w.repetitions),
                 said(w.optimal, w.repetitions)] for w in wins]  # fmt: skip
        tables.append(ReportTable("Which level won, per repetition", ["Series", "Repeats",
                                  "Maximum", "Optimal point"], rows,
                                  "how often each level was the maximum and the optimal "
                                  "point of its repetition's curve"))  # fmt: skip
    return tables


def repeat_notes(points: Sequence[PointRecord]) -> list[str]:
    if not points or any(g.repeats > 1 for g in groups(points)):
        return []
    return [NO_SPREAD]


FLAGS_TITLE = "Validity flags"


def flag_table(points: Sequence[PointRecord], findings: Sequence[Finding]) -> list[ReportTable]:
    """Every validity flag of the run: the point, what is wrong, its grade (invalidating: the
    point leaves the headline figures; remark: it stays, marked), what to change. On paper the
    remarks are given by kind (a busy shared host can remark on every point)."""
    flags = flags_by_point([f for f in findings if f.kind == KIND])
    rows = [[p.key, f.kind, GRADE_TEXT[f.grade], f.why, f.change]
            for p in sorted(points, key=lambda p: p.seq) for f in flags.get(p.id, [])]  # fmt: skip
    if not rows:
        return []
    out = {r[0] for r in rows if r[2] == GRADE_TEXT[INVALIDATING]}
    caption = (f"{len({r[0] for r in rows})} of {len(points)} points flagged, {len(out)} "
               "invalidating (such a point leaves the headline figures while its series has "
               f"others), the rest with remarks only ({REMARK_MARK}: kept in); each grade and "
               f"threshold: {RULES}")  # fmt: skip
    columns = ["Point", "Flag", "Grade", "Why", "What to change"]
    invalid = [r for r in rows if r[2] == GRADE_TEXT[INVALIDATING]]
    remarks = [r for r in rows if r[2] != GRADE_TEXT[INVALIDATING]]
    tables = [ReportTable(FLAGS_TITLE, columns, rows, caption, medium="screen" if remarks else "")]
    if remarks:  # paper: the invalidating flags whole, the remarks by kind
        tables.append(ReportTable(FLAGS_TITLE, columns, invalid, caption, medium="print"))
        tables.append(remarks_by_kind(remarks))
    return tables


def thresholds_table(findings: Sequence[Finding]) -> list[ReportTable]:
    """Each flag kind the run has: its grade, its threshold and the evidence behind it."""
    flags = flags_by_point([f for f in findings if f.kind == KIND])
    kinds = dict.fromkeys(f.kind for found in flags.values() for f in found)
    rows = [[k, GRADE_TEXT[grade(k)], *THRESHOLDS.get(k, ("–", "–"))] for k in kinds]
    if not rows:
        return []
    return [ReportTable("How the flags are graded", ["Flag", "Grade", "Threshold", "Evidence"],
                        rows, f"the measurements: {RULES}")]  # fmt: skip


def remarks_by_kind(rows: Sequence[Sequence[str]]) -> ReportTable:
    """The remark rows of the flags table, one per kind: how many points, the first's words."""
    kinds: dict[str, list[Sequence[str]]] = {}
    for r in rows:
        kinds.setdefault(r[1], []).append(r)
    table = [[kind, f"{len(found)}", f"{found[0][0]}: {found[0][3]}", found[0][4]]
             for kind, found in kinds.items()]  # fmt: skip
    return ReportTable(f"Remarks ({REMARK_MARK}), by kind", ["Flag", "Points", "For example",
                       "What to change"], table, "every remark, point by point: the HTML report",
                       medium="print")  # fmt: skip


def section(model: ReportModel, run: RunInputs) -> None:
    """Which level won (here) and each point's spread, every flag, the thresholds (appendix)."""
    spread = spread_tables(run.points, run.facts)
    model.tables += spread[1:]
    model.appendix += (spread[:1] + flag_table(run.points, run.findings)
                       + thresholds_table(run.findings))  # fmt: skip
    model.notes += repeat_notes(run.points)
