"""Acceptance criteria: PASS when some measured point of the workload meets every bound.

The evidence is the point that proves it (the passing point with the highest throughput) or,
on FAIL, the nearest miss: the highest throughput among the points within the latency bounds,
else the point with the lowest latency. Partial points (a host failed) never prove anything.
A criterion with no measured point is NO DATA, which is not a pass.

Flagged points prove nothing when their flags leave the report's headline figures (the one
predicate, analysis.validity.leaves_headline, that analysis.headline applies too; the caller
passes the levels it found so): the verdict is judged on the others. When only flagged
points would pass, or every point of the workload is flagged, the verdict is NOT DECIDABLE
and says which flagged points would have decided. A plan with
`report.headline_includes_flagged` judges on every point (and names a deciding point's flags).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase

from arraybench.analysis.repeats import RepeatGroup, groups, median_point
from arraybench.analysis.statistics import bound_decidable, spread
from arraybench.plan.model import Expectation
from arraybench.records import PointRecord
from arraybench.units import format_latency, format_pct, format_throughput

PASS, FAIL, NO_DATA = "PASS", "FAIL", "NO DATA"
# a rate-limited point's open-loop figures as metrics (`total_<name>`), added by the caller
# from its `open_loop` finding (report/sections/verdicts.py)
STALL = "open_loop_stall_s"  # the longest stall, s
CORRECTED_P99 = "open_loop_corrected_p99_us"  # p99 from the intended start, µs
UNDECIDED = "NOT DECIDABLE"  # the bound inside the repeats' 95 % interval, or only flagged


@dataclass(frozen=True)
class Verdict:
    criterion: str
    verdict: str
    evidence: str
    point: str | None  # the key of the point that proves it (or the nearest miss)

    @property
    def passed(self) -> bool:
        return self.verdict == PASS


def _us(seconds: float) -> str:
    return format_latency(seconds * 1e6)


def describe(e: Expectation) -> str:
    if e.name:
        return e.name
    parts = []
    if e.min_iops:
        parts.append(f"≥ {format_throughput(e.min_iops, 'IOPS')}")
    if e.min_mbps:
        parts.append(f"≥ {format_throughput(e.min_mbps, 'MB/s')}")
    if e.max_lat_mean:
        parts.append(f"mean latency ≤ {_us(e.max_lat_mean)}")
    if e.max_lat_p99:
        parts.append(f"p99 ≤ {_us(e.max_lat_p99)}")
    if e.max_stall is not None:
        parts.append(f"longest stall ≤ {e.max_stall:g} s")
    if e.max_corrected_p99:
        parts.append(f"p99 from the intended start ≤ {_us(e.max_corrected_p99)}")
    hosts = f" on {e.hosts} hosts" if e.hosts else ""
    return f"{e.workload}{hosts}: " + " with ".join(parts)


def _latency_ok(e: Expectation, p: PointRecord) -> bool:
    mean, p99 = p.metric("total", "lat_mean_us"), p.metric("total", "lat_p99_us")
    if e.max_lat_mean and (mean is None or mean > e.max_lat_mean * 1e6):
        return False
    if e.max_lat_p99 and (p99 is None or p99 > e.max_lat_p99 * 1e6):
        return False
    return _open_loop_ok(e, p)


def _open_loop_ok(e: Expectation, p: PointRecord) -> bool:
    """The open-loop bounds, on the OPEN_LOOP_METRICS a caller added to the point (a point
    without them, not rate-limited, meets no such bound)."""
    stall, corrected = p.metric("total", STALL), p.metric("total", CORRECTED_P99)
    if e.max_stall is not None and (stall is None or stall > e.max_stall):
        return False
    return not (e.max_corrected_p99 and (corrected is None
                                         or corrected > e.max_corrected_p99 * 1e6))  # fmt: skip


def _throughput_ok(e: Expectation, p: PointRecord) -> bool:
    if e.min_iops and (p.metric("total", "iops") or 0.0) < e.min_iops:
        return False
    return not (e.min_mbps and (p.metric("total", "mbps") or 0.0) < e.min_mbps)


def _measured(p: PointRecord) -> str:
    iops, mbps = p.metric("total", "iops"), p.metric("total", "mbps")
    mean, p99 = p.metric("total", "lat_mean_us"), p.metric("total", "lat_p99_us")
    said = (
        f"{format_throughput(iops, 'IOPS')}, {format_throughput(mbps, 'MB/s')}, "
        f"mean {format_latency(mean)}, p99 {format_latency(p99)}"
    )
    stall, corrected = p.metric("total", STALL), p.metric("total", CORRECTED_P99)
    if stall is not None:
        said += (f"; open loop: longest stall {stall:g} s, p99 from the intended start "
                 f"{format_latency(corrected)}")  # fmt: skip
    return said


def _rank(e: Expectation, p: PointRecord) -> float:
    if e.min_iops:
        return p.metric("total", "iops") or 0.0
    if e.min_mbps:
        return p.metric("total", "mbps") or 0.0
    return -(p.metric("total", "lat_mean_us") or float("inf"))  # latency-only: lowest wins


def judge(
    e: Expectation, points: Sequence[PointRecord],
    flagged: Mapping[str, Sequence[str]] | None = None, include_flagged: bool = False,
) -> Verdict:  # fmt: skip
    """`flagged`: point key -> the kinds of its validity flags that leave the headline
    (validity.leaves_headline); those points decide nothing unless `include_flagged`."""
    mine = [
        p for p in points
        if fnmatchcase(p.workload, e.workload) and not p.partial
        and (e.hosts is None or (p.hosts or 1) == e.hosts)
    ]  # fmt: skip
    if not mine:
        return Verdict(describe(e), NO_DATA, "no complete measured point of this workload", None)
    flagged = flagged or {}
    if include_flagged:
        every = _judged(e, mine)
        kinds = flagged.get(every.point or "")
        if not kinds:
            return every
        said = f"{every.evidence} (flagged {', '.join(kinds)}: the plan keeps flagged points)"
        return replace(every, evidence=said)
    trusted = [p for p in mine if p.key not in flagged]
    v = _judged(e, trusted) if trusted else None
    if v is not None and v.verdict == PASS:
        return v
    if v is not None and not [p for p in mine if p.key in flagged and _passes(e, p)]:
        return v  # no point passes, flagged or not: a FAIL on the trusted points
    only = _judged(e, [p for p in mine if p.key in flagged])  # what flagged points would say
    kinds = ", ".join(dict.fromkeys(k for p in mine for k in flagged.get(p.key, ())))
    which = "every point of this workload is flagged" if v is None else "only flagged points pass"
    why = (f"not decidable: {which} ({kinds}); flagged {only.point}: {only.evidence}"
           f"{'' if v is None else f'; unflagged: {v.evidence}'} (fix what the flags say "
           "and re-run, or set report: {headline_includes_flagged: true})")  # fmt: skip
    return Verdict(describe(e), UNDECIDED, why, only.point)


def _passes(e: Expectation, p: PointRecord) -> bool:
    return _latency_ok(e, p) and _throughput_ok(e, p)


def _judged(e: Expectation, mine: Sequence[PointRecord]) -> Verdict:
    """PASS on the best passing point, else FAIL on the nearest miss (`mine` not empty)."""
    passing = [p for p in mine if _passes(e, p)]
    if passing:
        best = max(passing, key=lambda p: _rank(e, p))
        return Verdict(describe(e), PASS, _measured(best), best.key)
    within = [p for p in mine if _latency_ok(e, p)]
    if within:
        near = max(within, key=lambda p: _rank(e, p))
        why = "best within the latency bound"
    else:
        near = min(mine, key=lambda p: p.metric("total", "lat_mean_us") or float("inf"))
        why = "no point within the latency bound; lowest latency"
    return Verdict(describe(e), FAIL, f"{why}: {_measured(near)}", near.key)


def judge_all(
    expectations: Sequence[Expectation], points: Sequence[PointRecord],
    flagged: Mapping[str, Sequence[str]] | None = None, include_flagged: bool = False,
) -> list[Verdict]:  # fmt: skip
    """Each criterion on the levels' medians (repeats collapsed), with its margin against the
    noise of the level that decides it. `flagged`: level key (without `#N`) -> the kinds of
    its repetitions' validity flags."""
    levels = groups(points)
    medians = [median_point(g) for g in levels]
    by_key = {g.key: g for g in levels}
    return [with_noise(e, judge(e, medians, flagged, include_flagged), by_key)
            for e in expectations]  # fmt: skip


def _bounds(e: Expectation) -> list[tuple[str, float, bool]]:
    """(metric column, bound in its unit, True when the figure must stay at or above it)."""
    found = [("iops", e.min_iops, True), ("mbps", e.min_mbps, True),
             ("lat_mean_us", e.max_lat_mean * 1e6 if e.max_lat_mean else None, False),
             ("lat_p99_us", e.max_lat_p99 * 1e6 if e.max_lat_p99 else None, False),
             (STALL, e.max_stall, False),
             (CORRECTED_P99, e.max_corrected_p99 * 1e6 if e.max_corrected_p99 else None,
              False)]  # fmt: skip
    return [(name, float(bound), above) for name, bound, above in found if bound]


def _fmt(name: str, value: float | None) -> str:
    if name in ("iops", "mbps"):
        return format_throughput(value, "IOPS" if name == "iops" else "MB/s")
    if name == STALL:
        return "–" if value is None else f"{value:g} s"
    return format_latency(value)


def with_noise(e: Expectation, v: Verdict, levels: dict[str, RepeatGroup]) -> Verdict:
    """PASS/FAIL with its margin (`by 12 % ±3 %`), or NOT DECIDABLE when a bound lies inside
    the 95 % interval (Student t) of the deciding level's repetitions."""
    group = levels.get(v.point or "")
    if v.verdict not in (PASS, FAIL) or group is None or group.repeats < 2:
        return v
    margins = []
    for name, bound, above in _bounds(e):
        values = [x for p in group.points if (x := p.metric("total", name)) is not None]
        if len(values) < 2:
            continue
        s = spread(values)
        if bound_decidable(values, bound) is False:
            why = (f"not decidable at this noise: repeat (bound {_fmt(name, bound)} inside the "
                   f"95 % interval {_fmt(name, s.low)} to {_fmt(name, s.high)} of "
                   f"{group.repeats} repeats)")  # fmt: skip
            return replace(v, verdict=UNDECIDED, evidence=f"{v.evidence}; {why}")
        margin = (s.median - bound) / bound * 100 * (1 if above else -1)
        margins.append(f"{name} by {format_pct(margin, signed=True)} "
                       f"±{format_pct(s.half_width_pct or 0.0)}")  # fmt: skip
    if not margins:
        return v
    return replace(v, evidence=f"{v.evidence}; {', '.join(margins)} (95 %, Student t)")
