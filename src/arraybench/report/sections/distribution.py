"""Latency distribution per series: percentiles of each level from its merged json+ bins.

The bins of every job and direction of a point (fio's json+ output in the point's folder)
are merged and the percentiles read from the merged histogram, as the point's own p99 is;
never an average of percentiles. One chart per series, one line per load level (fio-plot's
percentile view). The bins are stored with each point (a store made before reads its
fio.json: slow for a large run): the first `MAX_SERIES` series, at most `MAX_LEVELS` levels
each, spread over the ladder.
"""

from __future__ import annotations

from collections.abc import Callable

from arraybench.engines.fio.parse import percentile_from_bins
from arraybench.report.build import series_of
from arraybench.report.model import Distribution, OverlayLine, ReportModel
from arraybench.report.sections.histograms import latency_label
from arraybench.report.sections.inputs import RunInputs
from arraybench.store.db import PointRecord

PERCENTILES = (1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99, 100.0)
MAX_SERIES = 20
MAX_LEVELS = 8


def percentiles_us(bins: dict[int, int]) -> list[float | None]:
    out = []
    for pct in PERCENTILES:
        ns = float(max(bins)) if pct >= 100 else percentile_from_bins(bins, pct)
        out.append(None if ns is None else ns / 1000)
    return out


def _spread(points: list[PointRecord]) -> list[PointRecord]:
    if len(points) <= MAX_LEVELS:
        return points
    step = (len(points) - 1) / (MAX_LEVELS - 1)
    return [points[round(i * step)] for i in range(MAX_LEVELS)]


def section(model: ReportModel, run: RunInputs) -> None:
    """The latency distribution charts of the run's curves."""
    model.distributions += distributions(run.once, run.latency_bins)


def distributions(
    points: list[PointRecord], latency_bins: Callable[[PointRecord], dict[int, int] | None]
) -> list[Distribution]:
    charts = []
    for name, pts in list(series_of(points).items())[:MAX_SERIES]:
        lines, drawn = [], []
        for p in _spread(pts):
            bins = latency_bins(p)
            if bins:
                level = p.identity.label
                lines.append(OverlayLine(level, [], [], percentiles_us(bins)))
                drawn.append(p)
        if lines:
            charts.append(Distribution(name, [f"{p:g}" for p in PERCENTILES], lines,
                                       latency_label(drawn)))  # fmt: skip
    return charts
