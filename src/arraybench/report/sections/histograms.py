"""Latency histogram bars per series, from the point's merged json+ bins (fio-plot's and
vdbench's histogram view).

Which points: a series is a load ladder, and a histogram of every level is a wall of bars
nobody reads. An engineer sizes for the optimal point (the knee of the curve) and wants to
see how the tail grows toward the maximum, so each series gets one chart with two sets of
bars: its optimal point and its maximum (the series' headline, report/sections/headlines.py: the
summary's own points); one set when they are the same point or the
series has one level. The bars are the share of the point's I/Os (every job and direction, as
its percentiles) in each latency bucket, buckets 1-2-5 per decade, empty ends trimmed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import pairwise

from arraybench.analysis.headline import Headline
from arraybench.records import PointRecord
from arraybench.report.build import series_of
from arraybench.report.model import Figure, FigureSeries, ReportModel
from arraybench.report.sections.inputs import RunInputs

MAX_SERIES = 20  # a store made before the bins were stored reads two fio.json files each
UNIT = "% of I/Os"
GROUP = "Latency histograms"
# the bins are fio's `lat` (submission to completion: arraybench's job files set
# lat_percentiles=1, engines/fio/parse.py takes lat's bins then) or, for results imported from
# runs without it, `clat` (completion latency, the seeds' figure): the label names which
X_LABEL = "total latency (fio lat: submission to completion)"
CLAT_LABEL = "completion latency (fio clat)"


def latency_label(points: list[PointRecord]) -> str:
    """The axis name of these points' bins: completion latency when every one of them is an
    import whose fio reported clat's distribution only (importer/storing.py labels them)."""
    if points and all(p.labels.get("latency") == "clat" for p in points):
        return CLAT_LABEL
    return X_LABEL


# bucket edges in ns: 1, 2, 5 per decade from 1 µs to 100 s
EDGES = [m * 10**e for e in range(3, 11) for m in (1, 2, 5)] + [10**11]


def _us_text(ns: int) -> str:
    us = ns / 1000
    if us >= 1e6:
        return f"{us / 1e6:g} s"
    if us >= 1000:
        return f"{us / 1000:g} ms"
    return f"{us:g} µs"


def bucket_labels() -> list[str]:
    """ "< 1 µs", "1–2 µs", ..., one per bucket of `shares`."""
    labels = [f"< {_us_text(EDGES[0])}"]
    for lo, hi in pairwise(EDGES):
        lo_text, hi_text = _us_text(lo), _us_text(hi)
        same = lo_text.split()[1] == hi_text.split()[1]
        labels.append(f"{lo_text.split()[0] if same else lo_text}–{hi_text}")
    return [*labels, f"≥ {_us_text(EDGES[-1])}"]


def shares(bins: dict[int, int]) -> list[float]:
    """% of the I/Os per bucket (len(EDGES) + 1 buckets: below the first edge, between each
    two, from the last)."""
    counts = [0] * (len(EDGES) + 1)
    for ns, n in bins.items():
        i = 0
        while i < len(EDGES) and ns >= EDGES[i]:
            i += 1
        counts[i] += n
    total = sum(counts) or 1
    return [100.0 * c / total for c in counts]


def _chosen(pts: list[PointRecord], summary: Headline | None) -> list[PointRecord]:
    """The series' optimal point and maximum (one point when they coincide)."""
    if len(pts) == 1 or summary is None:
        return pts[:1]
    keys = [c.key for c in (summary.optimal, summary.maximum) if c is not None]
    by_key = {p.key: p for p in pts}
    return [by_key[k] for k in dict.fromkeys(keys) if k in by_key]


def _label(p: PointRecord, role: str) -> str:
    return f"{role}: {p.identity.label}" if role else p.identity.label


def section(model: ReportModel, run: RunInputs) -> None:
    """Latency bars per series, after the seed figures."""
    model.figures += histogram_figures(run.once, run.headlines, run.latency_bins)


def histogram_figures(
    points: list[PointRecord], headlines: Mapping[str, Headline],
    latency_bins: Callable[[PointRecord], dict[int, int] | None],
) -> list[Figure]:  # fmt: skip
    """One histogram figure per series (the first `MAX_SERIES`), bars per chosen point;
    `headlines`: series name -> its headline (report/sections/headlines.py); `latency_bins`:
    a point's merged bins (RunInputs.latency_bins)."""
    figures = []
    labels = bucket_labels()
    for name, pts in list(series_of(points).items())[:MAX_SERIES]:
        chosen = _chosen(pts, headlines.get(name))
        roles = ["optimal", "max"] if len(chosen) == 2 else [""]
        if len(chosen) == 1 and len(pts) > 1:
            roles = ["optimal and max"]
        bars: list[tuple[str, list[float]]] = []
        for p, role in zip(chosen, roles, strict=False):
            bins = latency_bins(p)
            if bins:
                bars.append((_label(p, role), shares(bins)))
        if not bars:
            continue
        used = [i for i in range(len(labels)) if any(v[i] > 0 for _, v in bars)]
        lo, hi = used[0], used[-1] + 1
        series = [FigureSeries(label, list[float | None](v[lo:hi])) for label, v in bars]
        what = "its one load level" if len(pts) == 1 else "the optimal point and the maximum"
        figures.append(Figure(
            "histogram", f"{name}: latency histogram", latency_label(chosen), UNIT,
            labels[lo:hi], series, group=GROUP,
            caption=f"share of the I/Os per latency bucket (all jobs and directions, fio's "
                    f"json+ bins merged) at {what}",
        ))  # fmt: skip
    return figures
