"""Downsampling of long time series: the min/max envelope, its size, and a dip end to end."""

from __future__ import annotations

import math
import random
from html.parser import HTMLParser
from pathlib import Path

import pytest

from arraybench.analysis.aggregate import DirMetrics, PointMetrics
from arraybench.point_identity import PointIdentity
from arraybench.report.assemble import report_for_run
from arraybench.report.charts.timechart import Bucket, TimeSeries, envelope, time_chart
from arraybench.report.render.html.page import render_html
from arraybench.store.db import HostSample, NewPoint, RunRecord, Sample, Store

TEN_HOURS = 36_000


def noisy(n: int, seed: int = 3) -> list[float | None]:
    rnd = random.Random(seed)
    values: list[float | None] = [rnd.uniform(50_000, 60_000) for _ in range(n)]
    for i in range(0, n, 997):  # holes: a missed second, a NaN from a broken log line
        values[i] = None if i % 2 else math.nan
    return values


def ranges(buckets: list[Bucket | None], n: int) -> list[tuple[int, int]]:
    """Index ranges of buckets over x = 0, 1, 2 ...: each starts where the last ended and its x
    is the middle of its first and last sample, so the range follows from x alone."""
    out, start = [], 0
    for b in buckets:
        assert b is not None
        end = round(2 * b.x) - start + 1
        out.append((start, end))
        start = end
    assert start == n  # consecutive, and every sample in exactly one bucket
    return out


# ---------------------------------------------------------------- the envelope itself


@pytest.mark.parametrize("n", [2_001, 5_003, TEN_HOURS, TEN_HOURS + 7])
def test_every_bucket_keeps_its_exact_min_and_max(n: int) -> None:
    rnd = random.Random(n)
    values: list[float | None] = [rnd.uniform(0, 1e6) for _ in range(n)]
    buckets = envelope([float(i) for i in range(n)], values, max_points=2000)
    spans = ranges(buckets, n)
    assert len(spans) == 1000
    sizes = {b - a for a, b in spans}
    assert max(sizes) - min(sizes) <= 1  # as equal as the count allows
    for bucket, (a, b) in zip(buckets, spans, strict=True):
        got = [v for v in values[a:b] if v is not None]
        assert bucket is not None
        assert (bucket.lo, bucket.hi) == (min(got), max(got))  # exact, not interpolated
        assert bucket.lo <= bucket.mean <= bucket.hi


def test_the_global_min_and_max_survive_exactly_despite_holes() -> None:
    values = noisy(TEN_HOURS)
    values[12_345] = 1_234_567.0  # a one-second spike
    values[23_456] = 0.125  # a one-second dip
    buckets = [b for b in envelope(range(TEN_HOURS), values) if b is not None]
    assert min(b.lo for b in buckets) == 0.125
    assert max(b.hi for b in buckets) == 1_234_567.0
    # the buckets holding them are where the samples were
    dip = min(buckets, key=lambda b: b.lo)
    assert abs(dip.x - 23_456) <= 18  # half a bucket of 36 samples
    # the mean of that bucket hides it: the band is what shows it
    assert dip.mean > 40_000


@pytest.mark.parametrize("max_points", [4, 5, 7, 100, 1999, 2000])
@pytest.mark.parametrize("n", [2_001, 10_007, TEN_HOURS])
def test_never_more_points_than_asked(max_points: int, n: int) -> None:
    buckets = envelope(range(n), noisy(n), max_points=max_points)
    # each bucket is one vertex on the line and two on the band (its min and max)
    assert 2 * len(buckets) <= max_points
    assert len(buckets) == max_points // 2  # ... and the whole budget is used


def test_short_series_keep_full_resolution() -> None:
    values: list[float | None] = [float(v * v) for v in range(2000)]
    buckets = envelope([t * 0.5 for t in range(2000)], values, max_points=2000)
    assert len(buckets) == 2000
    for t, (b, v) in enumerate(zip(buckets, values, strict=True)):
        assert b == Bucket(t * 0.5, v or 0.0, v or 0.0, v or 0.0)


def test_the_chart_draws_what_the_envelope_says() -> None:
    n, max_points = TEN_HOURS, 600
    values = noisy(n)
    svg = Svg(time_chart("t", range(n), [TimeSeries("IOPS", values, "IOPS")],
                         max_points=max_points))  # fmt: skip
    band = svg.points("polygon", "band")
    line = svg.points("polyline", "line")
    assert len(band) <= max_points and len(line) <= max_points // 2
    assert len(band) == 2 * len(envelope(range(n), values, max_points=max_points))
    short = Svg(time_chart("t", range(2000), [TimeSeries("IOPS", noisy(2000), "IOPS")]))
    assert not short.all("polygon", "band")  # 2,000 samples: drawn one by one, no band
    assert len(short.points("polyline", "line")) == 2000 - 3  # the three holes are gaps


# ---------------------------------------------------------------- a dip, store to HTML


class Svg(HTMLParser):
    """The elements of an SVG (or a whole page) with their attributes and text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str], str]] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}, ""))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        if self.elements and self.elements[-1][0] == "text" and not self.elements[-1][2]:
            tag, attrs, _ = self.elements[-1]
            self.elements[-1] = (tag, attrs, data)

    def all(self, tag: str, cls: str) -> list[tuple[dict[str, str], str]]:
        return [(a, s) for t, a, s in self.elements
                if t == tag and cls in a.get("class", "").split()]  # fmt: skip

    def points(self, tag: str, cls: str) -> list[tuple[float, float]]:
        out = []
        for attrs, _ in self.all(tag, cls):
            for pair in attrs["points"].split():
                x, y = pair.split(",")
                out.append((float(x), float(y)))
        return out

    def scale(self, cls: str, coord: str, unit: float = 1.0) -> tuple[float, float]:
        """(a, b) with coordinate = a + b * value, from the first and last tick labels."""
        ticks = []
        for attrs, label in self.all("text", cls):
            text = label.replace(",", "")
            factor = {"k": 1e3, "M": 1e6}.get(text[-1:], 1.0)
            value = float(text[:-1] if factor != 1.0 else text) * factor * unit
            ticks.append((value, float(attrs[coord]) - (4.0 if coord == "y" else 0.0)))
        (v0, c0), (v1, c1) = min(ticks), max(ticks)
        slope = (c1 - c0) / (v1 - v0)
        return c0 - slope * v0, slope


def _run(folder: Path) -> RunRecord:
    return RunRecord(
        id="long", plan_name="long", scenario="S8", labels={}, plan_yaml="name: long\n",
        folder=str(folder), scale=1.0, status="complete", started="2026-01-01T00:00:00+00:00",
        finished="2026-01-01T10:00:00+00:00", total_points=1, engine_version="fio-3.33",
        arraybench_version="0", host="h", kernel="k", targets=["/dev/sdb"],
        latency_bound_us=1000.0, latency_stat="mean",
    )  # fmt: skip


def _metrics() -> PointMetrics:
    read = DirMetrics(100, 819_200, 100_000.0, 819.2, 300.0, 280.0, 900.0, 1500.0, 9000.0)
    none = DirMetrics(0, 0, 0.0, 0.0, None, None, None, None, None)
    return PointMetrics(read=read, write=none, total=read)


def test_a_one_second_dip_in_36000_samples_reaches_the_report(tmp_path: Path) -> None:
    t0, dip_at = 1_767_225_600, 20_000
    rnd = random.Random(11)
    samples = []
    for k in range(TEN_HOURS):
        iops = 2_000.0 if k == dip_at else rnd.uniform(95_000, 105_000)
        samples.append(Sample(t0 + k, iops, None, iops * 8192 / 1e6, None, 320.0, None))
    hosts = [HostSample(s.t, f"srv{h}", (s.read_iops or 0.0) / 8, 0.0, 0.0, 0.0, 0.3, 60.0)
             for s in samples for h in range(1, 9)]  # fmt: skip
    store = Store(tmp_path)
    store.create_run(_run(tmp_path / "runs" / "long"))
    record = NewPoint(
        run_id="long", seq=1, identity=PointIdentity("long-rand-8k", "w32-qd32-h8"),
        family="Random 8 KiB", mix="Read", pattern="random", bs=8192, read_pct=100,
        region="backend", ioengine="libaio", unit="IOPS", workers=32, iodepth=32, jobs=256,
        targets="/dev/sdb", folder=str(tmp_path / "p"), started="a", finished="b",
        runtime_s=float(TEN_HOURS), engine_version="fio-3.33", hosts=8,
    )  # fmt: skip
    store.add_point(record, _metrics(), samples, hosts)

    model = report_for_run(store, "long")
    (timeline,) = model.timelines
    assert len(timeline.throughput) == TEN_HOURS
    assert min(v for v in timeline.throughput if v is not None) == 2_000.0
    assert timeline.kernel is not None
    assert min(v for v in timeline.kernel if v is not None) == pytest.approx(2_000.0)
    html = render_html(model)
    chart = next(
        part for part in html.split("<svg")[1:] if "long-rand-8k/w32-qd32-h8: IOPS" in part
    )
    svg = Svg("<svg" + chart.split("</svg>")[0] + "</svg>")
    band = svg.points("polygon", "l0")
    assert 0 < len(band) <= 2000
    a, b = svg.scale("tick-y1", "y")
    deepest_x, deepest_y = max(band, key=lambda p: p[1])
    assert (deepest_y - a) / b == pytest.approx(2_000.0, abs=300)  # 0.1 px is ~70 IOPS here
    hours_a, hours_b = svg.scale("tick-x", "x", unit=3600.0)  # the axis is in hours
    assert (deepest_x - hours_a) / hours_b == pytest.approx(dip_at, abs=60)
    # the line of bucket means alone would have lost it
    line = svg.points("polyline", "l0")
    assert min((a + b * 90_000) - y for _, y in line) > -1.0  # no mean below 90,000 IOPS
