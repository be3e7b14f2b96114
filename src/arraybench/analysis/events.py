"""The impact of an event (a path failure, a throttle, a controller reboot) on a point's
1-second throughput and latency.

More: docs/internals.md, `analysis/events.py`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from arraybench.events.records import Action, EventRecord, Outcome
from arraybench.finding_kinds import EventRecordData
from arraybench.records import Sample

Metric = Literal["iops", "mbps"]
MAX_BAND_PCT = 50.0  # a recovery band never wider than half the baseline


@dataclass(frozen=True)
class EventWindow:
    """An event as the analysis needs it: when it started and when it was reverted."""

    label: str
    kind: str
    start_unix: float
    end_unix: float | None  # None: lasted until the end of the point
    io_errors: int | None = None  # I/O errors fio (or the kernel) saw during it, if known
    index: int | None = None  # the event's position in the plan


@dataclass(frozen=True)
class EventImpact:
    label: str
    kind: str
    start_unix: float
    end_unix: float | None
    metric: Metric
    baseline: float | None  # mean throughput before the event (None: no sample there)
    baseline_seconds: int
    low: float | None  # lowest second during the event
    low_t: int | None  # its timestamp
    dip_pct: float | None  # (1 - low / baseline) x 100, >= 0
    recovery_after_revert_s: float | None
    recovery_after_start_s: float | None
    max_latency_us: float | None
    io_errors: int | None
    during_seconds: int = 0
    band_pct: float | None = None  # the recovery band used: max(recover_pct, spread)
    # how far the baseline's seconds went from their mean, either way, % of it
    baseline_spread_pct: float | None = None
    overshoot_pct: float | None = None  # the highest second until recovered, % above baseline
    overshoot_seconds: int | None = None  # seconds above the band's top until recovered

    @property
    def recovered(self) -> bool:
        return self.time_to_recover_s is not None

    @property
    def time_to_recover_s(self) -> float | None:
        """The recovery that counts: after the revert for a reverted event, else after the
        start (a `run` or a prompt: nothing is reverted)."""
        if self.end_unix is not None:
            return self.recovery_after_revert_s
        return self.recovery_after_start_s


def event_start(action: str, started_unix: float, ended_unix: float) -> float:
    """When an event took effect, from the record that starts it: a prompt at the operator's
    action (its end), an injector's apply and a `run` command when they started (a command
    acts while it runs: a controller reboot script's effect begins before it returns)."""
    return ended_unix if action == "prompt" else started_unix


def records_of(data: Sequence[EventRecordData]) -> list[EventRecord]:
    """A stored `events` finding's records as the timeline wrote them."""
    return [
        EventRecord(r["index"], r["kind"], r["label"], cast(Action, r["action"]),
                    cast(Outcome, r["outcome"]), r["planned_at_s"], r["started_unix"],
                    r["ended_unix"], r["detail"])
        for r in data
    ]  # fmt: skip


def windows_from_records(
    records: Sequence[EventRecord], io_errors: Mapping[int, int] | None = None
) -> list[EventWindow]:
    """Event windows from a timeline's records: the start is the apply (or command start, or
    the operator's action for a prompt), the end the revert's end. Events that never took
    effect (apply failed, prompt not confirmed, skipped) are left out; `run` commands count
    whatever their outcome (a failed command may have done part of its work)."""
    windows: list[EventWindow] = []
    by_index: dict[int, list[EventRecord]] = {}
    for record in records:
        by_index.setdefault(record.index, []).append(record)
    for index in sorted(by_index):
        steps = by_index[index]
        start = next((r for r in steps if r.starts_event), None)
        if start is None or (start.outcome != "ok" and start.action != "run"):
            continue
        start_time = event_start(start.action, start.started_unix, start.ended_unix)
        end = next(
            (r for r in steps if r.action == "revert" and r.started_unix >= start.started_unix),
            None,
        )
        windows.append(
            EventWindow(
                label=start.label,
                kind=start.kind,
                start_unix=start_time,
                end_unix=end.ended_unix if end is not None else None,
                io_errors=(io_errors or {}).get(index),
                index=index,
            )
        )
    return windows


def _throughput(sample: Sample, metric: Metric) -> float | None:
    if metric == "iops":
        parts = (sample.read_iops, sample.write_iops)
    else:
        parts = (sample.read_mbps, sample.write_mbps)
    known = [p for p in parts if p is not None]
    return sum(known) if known else None


def _latency(sample: Sample) -> float | None:
    known = [v for v in (sample.read_lat_us, sample.write_lat_us) if v is not None]
    return max(known) if known else None


@dataclass(frozen=True)
class _Band:
    """The recovery band around the baseline: [low, high], both edges included."""

    low: float
    high: float

    def holds(self, value: float) -> bool:
        return self.low <= value <= self.high


def _recovered_from(series: list[tuple[int, float]], k: int, band: _Band, hold: int) -> bool:
    """Sample k and the mean of the `hold` consecutive seconds from it are in the band."""
    window = series[k : k + hold]
    if len(window) < hold or not band.holds(series[k][1]):
        return False
    if window[-1][0] - window[0][0] != len(window) - 1:
        return False  # a gap in the data: not `hold` consecutive seconds
    return band.holds(sum(v for _, v in window) / len(window))


def _first_recovered(
    series: list[tuple[int, float]], first: int, band: _Band, hold: int
) -> int | None:
    for k in range(first, len(series)):
        if _recovered_from(series, k, band, hold):
            return k
    return None


def _overshoot(
    series: list[tuple[int, float]], left: int | None, back: int | None, baseline: float,
    band: _Band,
) -> tuple[float, int]:  # fmt: skip
    """(% the highest second rose above the baseline, seconds above the band's top) from the
    first second out of the band to the recovery (`back`; None: to the end). Nothing left
    the band: (0, 0)."""
    stop = len(series) if back is None else back
    values = [v for _, v in series[left:stop]] if left is not None else []
    if not values:  # nothing left the band, or it was back before it left (`back` <= `left`)
        return 0.0, 0
    return max(0.0, (max(values) / baseline - 1) * 100), sum(1 for v in values if v > band.high)


def event_impact(
    samples: Sequence[Sample],
    events: Sequence[EventWindow],
    *,
    baseline_window_s: float = 10,
    recover_pct: float = 5,
    metric: Metric = "iops",
    hold_s: int = 3,
    stamp_slack_s: float = 0.5,
) -> list[EventImpact]:
    """One EventImpact per event, from a point's 1-second samples (see the module doc)."""
    if baseline_window_s <= 0:
        raise ValueError(f"baseline_window_s must be > 0, not {baseline_window_s}")
    if not 0 <= recover_pct < 100:
        raise ValueError(f"recover_pct must be in [0, 100), not {recover_pct}")
    if hold_s < 1:
        raise ValueError(f"hold_s must be >= 1, not {hold_s}")
    if not 0 <= stamp_slack_s < 1:
        raise ValueError(f"stamp_slack_s must be in [0, 1), not {stamp_slack_s}")
    ordered = sorted(samples, key=lambda s: s.t)
    series: list[tuple[int, float]] = []
    latency: dict[int, float] = {}
    for sample in ordered:
        value = _throughput(sample, metric)
        if value is not None:
            series.append((sample.t, value))
        lat = _latency(sample)
        if lat is not None:
            latency[sample.t] = lat
    return [
        _impact(
            series, latency, event, baseline_window_s, recover_pct, metric, hold_s, stamp_slack_s
        )
        for event in events
    ]


def _impact(
    series: list[tuple[int, float]],
    latency: dict[int, float],
    event: EventWindow,
    baseline_window_s: float,
    recover_pct: float,
    metric: Metric,
    hold: int,
    slack: float,
) -> EventImpact:
    start, end = event.start_unix, event.end_unix
    before = [v for t, v in series if start - baseline_window_s - slack < t <= start - slack]
    during_idx = [
        k for k, (t, _) in enumerate(series) if t > start and (end is None or t - 1 < end)
    ]
    baseline = sum(before) / len(before) if before else None
    low_t: int | None = None
    low: float | None = None
    if during_idx:
        k_low = min(during_idx, key=lambda k: series[k][1])
        low_t, low = series[k_low]
    lat_during = [latency[series[k][0]] for k in during_idx if series[k][0] in latency]
    dip = after_start = after_revert = spread = band = overshoot = above = None
    if baseline is not None and baseline > 0:
        if low is not None:
            dip = max(0.0, (1 - low / baseline) * 100)
        spread = max(0.0, (1 - min(before) / baseline) * 100, (max(before) / baseline - 1) * 100)
        band = max(recover_pct, min(spread, MAX_BAND_PCT))
        edges = _Band(baseline * (1 - band / 100), baseline * (1 + band / 100))
        later = [k for k, (t, _) in enumerate(series) if t > start]
        left = next((k for k in later if not edges.holds(series[k][1])), None)
        k_start = k_revert = None
        if left is None:
            after_start = 0.0 if later else None
        else:
            k_start = _first_recovered(series, left + 1, edges, hold)
            if k_start is not None:
                after_start = max(0.0, series[k_start][0] - 1 - start)
        if end is not None:
            first_after = next((k for k, (t, _) in enumerate(series) if t > end), None)
            if first_after is not None:
                k_revert = _first_recovered(series, first_after, edges, hold)
                if k_revert is not None:
                    after_revert = max(0.0, series[k_revert][0] - 1 - end)
        if later:
            back = k_revert if end is not None else k_start
            overshoot, above = _overshoot(series, left, back, baseline, edges)
    return EventImpact(
        label=event.label,
        kind=event.kind,
        start_unix=start,
        end_unix=end,
        metric=metric,
        baseline=baseline,
        baseline_seconds=len(before),
        low=low,
        low_t=low_t,
        dip_pct=dip,
        recovery_after_revert_s=after_revert,
        recovery_after_start_s=after_start,
        max_latency_us=max(lat_during) if lat_during else None,
        io_errors=event.io_errors,
        during_seconds=len(during_idx),
        band_pct=band,
        baseline_spread_pct=spread,
        overshoot_pct=overshoot,
        overshoot_seconds=above,
    )
