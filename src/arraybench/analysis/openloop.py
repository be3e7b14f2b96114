"""An open-loop view of a rate-limited point: the schedule its I/Os should have kept against
when they completed (docs/availability.md, "Open loop: the schedule kept").

Input: fio's latency-histogram log rows, the completions of one job per row; the schedule,
lateness, corrected latency, due, completed, stalls, drain and cause are defined in
docs/internals.md ("analysis/openloop.py").
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

StallCause = Literal["storage", "generator"]
PERCENTILES: tuple[tuple[str, float], ...] = (("p50", 50.0), ("p99", 99.0), ("p99.9", 99.9))
MIN_SLOT_IOS = 20  # a slot holds at least this many intended I/Os, so a tenth is 2
MIN_STALL_SLOTS = 2
# the schedule's origin: the percentile of (completion - intended offset) it sits at; not the
# minimum, which one moment of fio running ahead (its catch-up burst) would set for the point
ORIGIN_PCT = 1.0
MAX_SERIES = 600
# I/Os placed one by one at most; beyond, every k-th of each job's is (k the smallest that
# fits) and the counts scaled back by k: 100k IOPS for 60 s is 6 M I/Os
MAX_IOS = 1_000_000  # points of the due/completed series kept for the chart


@dataclass(frozen=True)
class HistRow:
    """One histogram-log row: a job's completions since its previous row."""

    job: int
    t_ms: float  # Unix ms, the completion that wrote the row
    latencies_us: Sequence[tuple[float, int]]  # (fio latency µs, I/Os) ascending by latency


@dataclass(frozen=True)
class Stall:
    start_s: float  # from the schedule's origin
    length_s: float
    cause: StallCause
    unserved_peak_ios: float  # the backlog's peak during it and its drain
    drain_s: float | None  # from its end until the backlog was normal again; None: never


@dataclass(frozen=True)
class SeriesPoint:
    t_s: float  # from the schedule's origin
    due: float
    completed: float

    @property
    def backlog(self) -> float:
        return max(0.0, self.due - self.completed)


@dataclass(frozen=True)
class OpenLoop:
    intended_iops: float
    origin_unix: float
    ios: int
    unserved_peak_ios: float
    longest_stall_s: float
    drain_s: float | None  # the longest stall's
    stalls: list[Stall]
    corrected_latency_us: dict[str, float]
    fio_latency_us: dict[str, float]
    slot_s: float
    series: list[SeriesPoint] = field(default_factory=list)
    stuck_limit_s: float | None = None
    stuck: bool = False  # a stall longer than the stuck-I/O limit

    @property
    def generator_stalled(self) -> bool:
        return any(s.cause == "generator" for s in self.stalls)


def completion_times(
    rows: Sequence[HistRow], hist_ms: float, every: int = 1
) -> list[tuple[float, float]]:
    """(completion Unix s, fio latency µs) of every I/O of the rows (every `every`-th of
    each job's: a long fast point is thinned), ordered by time (module doc: how a row's
    completions are placed)."""
    out: list[tuple[float, float]] = []
    last: dict[int, float] = {}
    seen: dict[int, int] = {}
    for row in sorted(rows, key=lambda r: (r.job, r.t_ms)):
        lats = [lat for lat, n in row.latencies_us for _ in range(n)]
        prev = last.get(row.job, row.t_ms - hist_ms)
        last[row.job] = row.t_ms
        n = len(lats)
        if n == 0:
            continue
        span = row.t_ms - prev
        if span > 1.5 * hist_ms and n > 1:  # a stall inside: n - 1 early, the last at the stamp
            times = [prev + hist_ms * (i + 1) / (n - 1) for i in range(n - 1)] + [row.t_ms]
        else:
            times = [prev + span * (i + 1) / n for i in range(n)]
        first = seen.get(row.job, 0)
        seen[row.job] = first + n
        out += [(t / 1000.0, lat) for i, (t, lat) in enumerate(zip(times, lats, strict=True))
                if (first + i) % every == 0]  # fmt: skip
    out.sort(key=lambda c: c[0])
    return out


def _total_ios(rows: Sequence[HistRow]) -> int:
    return sum(n for row in rows for _, n in row.latencies_us)


def _origin(done: list[tuple[float, float]], rate: float) -> float:
    """The schedule's start: the ORIGIN_PCT-th percentile of c_k - k / R (module doc)."""
    offsets = sorted(t - k / rate for k, (t, _) in enumerate(done))
    return offsets[int(len(offsets) * ORIGIN_PCT / 100)]


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {}
    result = {}
    for name, pct in PERCENTILES:
        rank = min(len(ordered) - 1, max(0, int(pct / 100 * len(ordered) + 0.5) - 1))
        result[name] = ordered[rank]
    result["max"] = ordered[-1]
    return result


def _corrected(done: list[tuple[float, float]], origin: float, rate: float) -> list[float]:
    """Each I/O's corrected latency in µs (module doc), ranked within its completion time."""
    late = [max(0.0, (t - (origin + k / rate)) * 1e6) for k, (t, _) in enumerate(done)]
    return [max(lat, fio) for lat, (_, fio) in zip(late, done, strict=True)]


def _series(done: list[tuple[float, float]], origin: float, rate: float, slot: float
            ) -> list[SeriesPoint]:  # fmt: skip
    """due and completed at the end of each slot from the origin to the last completion."""
    end = done[-1][0]
    points: list[SeriesPoint] = []
    k = 0
    t = origin
    while t < end + slot:
        t += slot
        while k < len(done) and done[k][0] <= t:
            k += 1
        due = min(float(len(done)), (t - origin) * rate)
        points.append(SeriesPoint(round(t - origin, 6), due, float(k)))
    return points


def _in_stop(start: float, end: float, stops: Sequence[tuple[float, float]]) -> float:
    return sum(max(0.0, min(end, b) - max(start, a)) for a, b in stops)


def _stalls(series: list[SeriesPoint], rate: float, slot: float, origin: float,
            stops: Sequence[tuple[float, float]]) -> list[Stall]:  # fmt: skip
    floor = rate * slot / 10
    normal = statistics.median(p.backlog for p in series) + rate * slot
    stalled: list[int] = []
    prev_done, prev_backlog = 0.0, 0.0
    for i, p in enumerate(series):
        if p.completed - prev_done < floor and prev_backlog >= 1:
            stalled.append(i)
        prev_done, prev_backlog = p.completed, p.backlog
    runs: list[list[int]] = []
    for i in stalled:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    found: list[Stall] = []
    for run in (r for r in runs if len(r) >= MIN_STALL_SLOTS):
        start = series[run[0]].t_s - slot
        end = series[run[-1]].t_s
        back = next((p for p in series[run[-1] + 1 :] if p.backlog <= normal), None)
        peak_to = series.index(back) if back is not None else len(series)
        peak = max(p.backlog for p in series[run[0] : peak_to + 1])
        stopped = _in_stop(origin + start, origin + end, stops)
        cause: StallCause = "generator" if stopped >= (end - start) / 2 else "storage"
        drain = None if back is None else round(back.t_s - end, 3)
        found.append(Stall(round(start, 3), round(end - start, 3), cause, peak, drain))
    return found


def _thinned(series: list[SeriesPoint]) -> list[SeriesPoint]:
    step = max(1, -(-len(series) // MAX_SERIES))
    return series[::step]


def open_loop(
    rows: Sequence[HistRow],
    intended_iops: float,
    hist_ms: float,
    *,
    generator_stops: Sequence[tuple[float, float]] = (),
    stuck_limit_s: float | None = None,
) -> OpenLoop | None:
    """The open-loop figures of a point (module doc); None without a completion."""
    if intended_iops <= 0:
        raise ValueError(f"intended_iops must be > 0, not {intended_iops}")
    if hist_ms <= 0:
        raise ValueError(f"hist_ms must be > 0, not {hist_ms}")
    schedule = _schedule(rows, float(intended_iops), hist_ms, generator_stops)
    return None if schedule is None else schedule.figures(stuck_limit_s)


@dataclass(frozen=True)
class _Schedule:
    """One load generator's (a host's) completions against its schedule."""

    done: list[tuple[float, float]]  # (completion Unix s, fio latency µs)
    rate: float
    origin: float
    slot: float
    series: list[SeriesPoint]
    stalls: list[Stall]
    corrected: list[float]
    every: int = 1  # every k-th I/O placed (MAX_IOS): the counts are scaled by it

    @property
    def ios(self) -> int:
        return len(self.done) * self.every

    def due(self, t: float) -> float:
        return min(float(self.ios), max(0.0, (t - self.origin) * self.rate))

    def completed(self, t: float) -> float:
        return float(bisect.bisect_right(self.done, (t, math.inf)) * self.every)

    def figures(self, stuck_limit_s: float | None) -> OpenLoop:
        longest = max(self.stalls, key=lambda s: s.length_s, default=None)
        length = longest.length_s if longest else 0.0
        return OpenLoop(
            intended_iops=self.rate,
            origin_unix=self.origin,
            ios=self.ios,
            unserved_peak_ios=round(max(p.backlog for p in self.series), 1),
            longest_stall_s=length,
            drain_s=longest.drain_s if longest else None,
            stalls=self.stalls,
            corrected_latency_us=_percentiles(self.corrected),
            fio_latency_us=_percentiles([fio for _, fio in self.done]),
            slot_s=self.slot,
            series=_thinned(self.series),
            stuck_limit_s=stuck_limit_s,
            stuck=stuck_limit_s is not None and length > stuck_limit_s,
        )


def _schedule(rows: Sequence[HistRow], rate: float, hist_ms: float,
              stops: Sequence[tuple[float, float]]) -> _Schedule | None:  # fmt: skip
    """The schedule's figures; with more than MAX_IOS I/Os, on every k-th I/O at R / k,
    the counts (due, completed, backlog) scaled back by k."""
    every = max(1, -(-_total_ios(rows) // MAX_IOS))
    done = completion_times(rows, hist_ms, every)
    if not done:
        return None
    kept = rate / every
    origin = _origin(done, kept)
    slot = max(hist_ms / 1000.0, MIN_SLOT_IOS / kept)
    series = _series(done, origin, kept, slot)
    stalls = _stalls(series, kept, slot, origin, stops)
    if every > 1:
        series = [SeriesPoint(p.t_s, p.due * every, p.completed * every) for p in series]
        stalls = [replace(st, unserved_peak_ios=st.unserved_peak_ios * every) for st in stalls]
    corrected = _corrected(done, origin, kept)
    return _Schedule(done, rate, origin, slot, series, stalls, corrected, every)


@dataclass(frozen=True)
class HostsOpenLoop:
    """A many-host point: each host's own figures, and the total's."""

    total: OpenLoop
    hosts: dict[str, OpenLoop]
    stall_hosts: list[str]  # the host of each of the total's stalls, in its order


def open_loop_hosts(
    rows: Mapping[str, Sequence[HistRow]],
    intended_iops: Mapping[str, float],
    hist_ms: float,
    *,
    generator_stops: Mapping[str, Sequence[tuple[float, float]]] | None = None,
    stuck_limit_s: float | None = None,
) -> HostsOpenLoop | None:
    """Each host against its own schedule (hosts do not fail together), and the total: its
    due and completed the sums of the hosts' (so its unserved demand is the sum of theirs),
    its latencies every host's I/Os, its stalls every host's (a stall is a host's: a total
    where one host of two stopped still completes half its rate)."""
    stops = generator_stops or {}
    schedules = {
        name: found for name in sorted(rows)
        if (found := _schedule(rows[name], float(intended_iops[name]), hist_ms,
                               stops.get(name, ()))) is not None
    }  # fmt: skip
    if not schedules:
        return None
    hosts = {name: s.figures(stuck_limit_s) for name, s in schedules.items()}
    slot = min(s.slot for s in schedules.values())
    start = min(s.origin for s in schedules.values())
    end = max(s.done[-1][0] for s in schedules.values())
    series: list[SeriesPoint] = []
    t = start
    while t < end + slot:
        t += slot
        due = sum(s.due(t) for s in schedules.values())
        done = sum(s.completed(t) for s in schedules.values())
        series.append(SeriesPoint(round(t - start, 6), due, done))
    shift = {name: s.origin - start for name, s in schedules.items()}
    stalls = sorted(((replace(st, start_s=round(st.start_s + shift[name], 3)), name)
                     for name, s in schedules.items() for st in s.stalls),
                    key=lambda pair: pair[0].start_s)  # fmt: skip
    longest = max((st for st, _ in stalls), key=lambda st: st.length_s, default=None)
    length = longest.length_s if longest else 0.0
    total = OpenLoop(
        intended_iops=sum(s.rate for s in schedules.values()),
        origin_unix=start,
        ios=sum(s.ios for s in schedules.values()),
        unserved_peak_ios=round(max(p.backlog for p in series), 1),
        longest_stall_s=length,
        drain_s=longest.drain_s if longest else None,
        stalls=[st for st, _ in stalls],
        corrected_latency_us=_percentiles([c for s in schedules.values() for c in s.corrected]),
        fio_latency_us=_percentiles([f for s in schedules.values() for _, f in s.done]),
        slot_s=slot,
        series=_thinned(series),
        stuck_limit_s=stuck_limit_s,
        stuck=stuck_limit_s is not None and length > stuck_limit_s,
    )
    return HostsOpenLoop(total, hosts, [name for _, name in stalls])
