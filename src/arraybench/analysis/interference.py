"""Interference (mixed workload) test: the base load per background step, and the verdict.

Inputs are 1-second series on the Unix-second grid of fio's logs (`read_interference_logs`):
the base load's IOPS (summed over jobs and directions) and total latency (I/O-weighted), and
the background's MB/s (10^6 bytes/s, summed over every step's job). `t0` is the Unix second
the run started: fio stamps each 1-second sample at the END of its window, so a window
[start_s, end_s) of `step_windows` holds the samples of seconds t0 + start_s + 1 .. t0 + end_s.
The first and last of those seconds are transitions (a step starting or ending within them,
fio's jobs starting up to ~0.2 s apart) and are left out; a window of 2 seconds or less keeps
all of its seconds.

`run_start_second` finds t0 from the base load's first log sample. fio's JSON `timestamp`
(fio 3.33) is taken when the report is written, i.e. at the END of the run, so it is not t0.

More: docs/internals.md, `analysis/interference.py`."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from arraybench.engines.fio.interference import (
    BACKGROUND_ALONE,
    BASE_ALONE,
    BASE_PREFIX,
    BG_PREFIX,
    InterferenceSpec,
    step_windows,
)
from arraybench.engines.fio.logs import (
    hist_bin_value_ns,
    parse_hist_log,
    parse_interval_log,
    per_second,
    second_of,
)
from arraybench.engines.fio.parse import percentile_from_bins
from arraybench.engines.fio.results import IntervalSample
from arraybench.units import format_size

Kind = Literal["base", "step", "background"]
Histogram = Mapping[int, int]  # latency ns -> I/O count


@dataclass(frozen=True)
class StepRow:
    """The base load in one phase of the test, beside `streams` background streams."""

    label: str
    kind: Kind  # "base" (base alone), "step" (base + k streams), "background" (alone)
    streams: int  # background streams running
    start_s: float  # relative to the run start
    end_s: float
    base_iops: float
    base_lat_mean_us: float | None  # total latency, I/O-weighted; None: no base I/O
    bg_mbps: float  # MB/s = 10^6 bytes/s
    base_iops_change_pct: float | None  # against "base alone"
    base_lat_change_pct: float | None
    base_p99_us: float | None = None  # completion latency p99 from the histogram logs
    # the large I/O itself (dbi's key observation): its mean latency, I/O-weighted
    bg_lat_mean_us: float | None = None


# --------------------------------------------------------------------------- logs


def _job_logs(folder: Path, prefix_re: str, kind: str) -> list[Path]:
    """`<prefix>_<kind>.<job>.log` files, by fio job number (iops and lat lists then pair)."""
    pattern = re.compile(rf"^({prefix_re})_{kind}\.(\d+)\.log$")
    found = [(m, p) for p in folder.iterdir() if (m := pattern.match(p.name))]
    return [p for m, p in sorted(found, key=lambda mp: int(mp[0].group(2)))]


def _parse(paths: list[Path]) -> list[list[IntervalSample]]:
    return [parse_interval_log(p) for p in paths]


def read_interference_logs(
    folder: Path,
) -> tuple[dict[int, float], dict[int, float], dict[int, float]]:
    """(base IOPS, base latency µs, background MB/s) per Unix second from the per-job logs of
    `render_interference_jobfile` (base_*.N.log, bgK_*.N.log)."""
    base = re.escape(BASE_PREFIX)
    iops = _parse(_job_logs(folder, base, "iops"))
    lat = _parse(_job_logs(folder, base, "lat"))
    bw = _parse(_job_logs(folder, rf"{re.escape(BG_PREFIX)}\d+", "bw"))
    base_iops = dict(per_second(iops, "iops"))
    base_lat_us = {t: ns / 1000 for t, ns in per_second(lat, "lat", iops_by_job=iops)}
    bg_mbps = {t: kib * 1024 / 1e6 for t, kib in per_second(bw, "bw")}  # KiB/s -> MB/s
    return base_iops, base_lat_us, bg_mbps


def read_background_latency(folder: Path) -> dict[int, float]:
    """The background streams' (the large I/O's) mean latency in µs per Unix second,
    weighted by their I/Os, from bgK_lat.N.log and bgK_iops.N.log."""
    bg = rf"{re.escape(BG_PREFIX)}\d+"
    iops = _parse(_job_logs(folder, bg, "iops"))
    lat = _parse(_job_logs(folder, bg, "lat"))
    return {t: ns / 1000 for t, ns in per_second(lat, "lat", iops_by_job=iops)}


def read_background_iops(folder: Path) -> dict[int, float]:
    return dict(per_second(_parse(_job_logs(folder, rf"{re.escape(BG_PREFIX)}\d+", "iops")),
                           "iops"))  # fmt: skip


def read_base_histograms(folder: Path) -> dict[int, dict[int, int]]:
    """Unix second -> the base load's completion-latency histogram {ns: I/Os} of that second,
    merged over jobs and directions (base_clat_hist.N.log)."""
    merged: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    values: dict[int, list[int]] = {}  # bins per row -> bin values in ns
    for path in _job_logs(folder, re.escape(BASE_PREFIX), "clat_hist"):
        for time_ms, _ddir, _bs, bins in parse_hist_log(path):
            n = len(bins)
            if n not in values:
                values[n] = [round(hist_bin_value_ns(i, n)) for i in range(n)]
            second = merged[second_of(time_ms)]
            for value, count in zip(values[n], bins, strict=True):
                if count:
                    second[value] += count
    return {t: dict(h) for t, h in merged.items()}


def run_start_second(base_iops: Mapping[int, float]) -> int:
    """t0: the Unix second the run started, one before the base load's first 1-s sample."""
    if not base_iops:
        raise ValueError("no base load samples: did fio write base_iops.N.log?")
    return min(base_iops) - 1


# --------------------------------------------------------------------------- table


def window_seconds(t0: int, start_s: float, end_s: float) -> list[int]:
    """Unix seconds whose samples measure [start_s, end_s), without the two transitions."""
    seconds = list(range(t0 + math.floor(start_s) + 1, t0 + math.floor(end_s) + 1))
    return seconds[1:-1] if len(seconds) > 2 else seconds


def _mean_rate(series: Mapping[int, float], seconds: Iterable[int]) -> float:
    values = [series[s] for s in seconds if s in series]
    return sum(values) / len(values) if values else 0.0


def _weighted_latency(
    lat: Mapping[int, float], iops: Mapping[int, float], seconds: Iterable[int]
) -> float | None:
    pairs = [(lat[s], iops.get(s, 0.0)) for s in seconds if s in lat]
    weight = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / weight if weight > 0 else None


def _p99_us(hist: Mapping[int, Histogram], seconds: Iterable[int]) -> float | None:
    merged: dict[int, int] = defaultdict(int)
    for s in seconds:
        for value, count in hist.get(s, {}).items():
            merged[value] += count
    p99 = percentile_from_bins(dict(merged), 99.0)
    return None if p99 is None else p99 / 1000


def _change_pct(value: float | None, reference: float | None) -> float | None:
    if value is None or not reference:
        return None
    return (value / reference - 1) * 100


def _kind_and_streams(spec: InterferenceSpec, label: str, index: int) -> tuple[Kind, int]:
    if label == BASE_ALONE:
        return "base", 0
    if label == BACKGROUND_ALONE:
        return "background", spec.steps
    return "step", index


def step_table(
    spec: InterferenceSpec,
    base_iops: Mapping[int, float],
    base_lat_us: Mapping[int, float],
    bg_mbps: Mapping[int, float],
    t0: int,
    base_hist: Mapping[int, Histogram] | None = None,
    bg: tuple[Mapping[int, float], Mapping[int, float]] | None = None,
) -> list[StepRow]:
    """One row per phase of `step_windows` (base alone, each step, background alone); changes
    are against the "base alone" row. `base_hist` (read_base_histograms) adds p99; `bg`
    (the background's latency and IOPS per second) the large I/O's own mean latency."""
    rows: list[StepRow] = []
    for index, (label, start, end) in enumerate(step_windows(spec)):
        seconds = window_seconds(t0, start, end)
        kind, streams = _kind_and_streams(spec, label, index)
        iops = _mean_rate(base_iops, seconds)
        lat = _weighted_latency(base_lat_us, base_iops, seconds)
        ref = rows[0] if rows else None
        rows.append(
            StepRow(
                label=label,
                kind=kind,
                streams=streams,
                start_s=start,
                end_s=end,
                base_iops=iops,
                base_lat_mean_us=lat,
                bg_mbps=_mean_rate(bg_mbps, seconds),
                base_iops_change_pct=_change_pct(iops, ref.base_iops if ref else iops),
                base_lat_change_pct=_change_pct(lat, ref.base_lat_mean_us if ref else lat),
                base_p99_us=None if base_hist is None else _p99_us(base_hist, seconds),
                bg_lat_mean_us=None if bg is None else _weighted_latency(bg[0], bg[1], seconds),
            )
        )
    return rows


def verdict(
    rows: Sequence[StepRow],
    max_latency_increase_pct: float = 20.0,
    max_iops_drop_pct: float | None = None,
) -> int:
    """How many background streams the base load tolerates: the number of steps, in order,
    before the first whose base mean latency rises more than `max_latency_increase_pct` over
    "base alone" (or, if given, whose base IOPS drop more than `max_iops_drop_pct`). A step
    without a base latency counts as not tolerated."""
    tolerated = 0
    for row in sorted((r for r in rows if r.kind == "step"), key=lambda r: r.streams):
        lat_change = row.base_lat_change_pct
        if lat_change is None or lat_change > max_latency_increase_pct:
            break
        iops_change = row.base_iops_change_pct
        if max_iops_drop_pct is not None and (
            iops_change is None or -iops_change > max_iops_drop_pct
        ):
            break
        tolerated = row.streams
    return tolerated


# --------------------------------------------------------------------------- chart


@dataclass(frozen=True)
class InterferenceChart:
    """Series for `report.charts.timechart.time_chart`: x in seconds since the run start (each
    sample at the end of its second), None where a load has no sample; `events` are
    (t_s, label) for ChartEvent: each step joining and the base load stopping."""

    t_s: list[float]
    base_iops: list[float | None]
    base_lat_us: list[float | None]
    bg_mbps: list[float | None]
    events: list[tuple[float, str]]
    bg_lat_us: list[float | None] | None = None  # the large I/O's own latency


def chart_data(
    spec: InterferenceSpec,
    base_iops: Mapping[int, float],
    base_lat_us: Mapping[int, float],
    bg_mbps: Mapping[int, float],
    t0: int,
    bg_lat_us: Mapping[int, float] | None = None,
) -> InterferenceChart:
    """Base throughput and latency and background MB/s over time, with the step events."""
    known = set(base_iops) | set(base_lat_us) | set(bg_mbps)
    seconds = list(range(min(known), max(known) + 1)) if known else []
    size = format_size(spec.bg_bs)
    events = [(k * spec.interval_s, f"{k} x {size}") for k in range(1, spec.steps + 1)]
    events.append((spec.base_stop, "base stopped"))
    return InterferenceChart(
        t_s=[float(s - t0) for s in seconds],
        base_iops=[base_iops.get(s) for s in seconds],
        base_lat_us=[base_lat_us.get(s) for s in seconds],
        bg_mbps=[bg_mbps.get(s) for s in seconds],
        events=events,
        bg_lat_us=None if bg_lat_us is None else [bg_lat_us.get(s) for s in seconds],
    )
