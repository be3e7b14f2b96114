"""Time-series and GB-written charts: well-formed, self-contained, small, and truthful."""

from __future__ import annotations

import random
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from arraybench.report.charts.timechart import (
    ChartEvent,
    TimeSeries,
    gb_chart,
    linear_axis,
    time_axis,
    time_chart,
)

EVIL = "<script>alert('x')</script>"

# ---------------------------------------------------------------- a tiny checker over html.parser


class _Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.texts: list[tuple[dict[str, str], str]] = []
        self._open_text: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.stack.append(tag)
        self.elements.append((tag, a))
        if tag == "text":
            self._open_text = a

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> with {self.stack[-3:]} open")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self._open_text is not None:
            self.texts.append((self._open_text, data))
            self._open_text = None


def check(svg: str) -> _Checker:
    c = _Checker()
    c.feed(svg)
    c.close()
    assert not c.errors, c.errors
    assert not c.stack, f"unclosed: {c.stack}"
    assert c.elements[0][0] == "svg"
    assert "http" not in svg and "<script" not in svg and "href" not in svg
    return c


def with_class(c: _Checker, tag: str, *classes: str) -> list[dict[str, str]]:
    return [
        a
        for t, a in c.elements
        if t == tag and all(k in a.get("class", "").split() for k in classes)
    ]


def points(attrs: dict[str, str]) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in (p.split(",") for p in attrs["points"].split())]


def texts(c: _Checker, cls: str) -> list[tuple[float, str]]:
    return [(float(a["y"]), s) for a, s in c.texts if cls in a.get("class", "").split()]


def parse_compact(s: str) -> float:
    s = s.replace(",", "")
    factor = {"k": 1e3, "M": 1e6}.get(s[-1], 1.0)
    return float(s[:-1] if factor != 1.0 else s) * factor


def y_of(c: _Checker, value: float) -> float:
    """The y coordinate of `value` on the left axis, from its first and last tick labels."""
    ticks = sorted((parse_compact(s), y - 4) for y, s in texts(c, "tick-y1"))
    (v0, y0), (v1, y1) = ticks[0], ticks[-1]
    return y0 + (y1 - y0) * (value - v0) / (v1 - v0)


# ---------------------------------------------------------------- sample data


def cliff_run(n: int = 36_000, seed: int = 7) -> tuple[list[float], list[float | None]]:
    """A write cliff at 1 s sampling: 400k IOPS, cliff at 10 %, one spike and one dip."""
    rnd = random.Random(seed)
    t = [float(i) for i in range(n)]
    iops: list[float | None] = [
        (400_000.0 if i < n // 10 else 100_000.0) + rnd.uniform(-3000, 3000) for i in range(n)
    ]
    iops[n * 12_345 // 36_000] = 900_000.0
    iops[n * 23_456 // 36_000] = 1_000.0
    return t, iops


# ---------------------------------------------------------------- markup


def test_markup_is_balanced_self_contained_and_escaped() -> None:
    t = [float(i) for i in range(300)]
    svg = time_chart(
        EVIL,
        t,
        [TimeSeries(EVIL, [1000.0 + i for i in range(300)], "IOPS")],
        right=[TimeSeries("lat & <p99>", [200.0] * 300, "µs", dashed=True)],
        events=[ChartEvent(100, EVIL), ChartEvent(200, "controller B pulled")],
    )
    c = check(svg)
    assert "&lt;script&gt;" in svg and "lat &amp; &lt;p99&gt;" in svg
    assert 'stroke-dasharray="6 4"' in svg  # the dashed right series
    assert "latency (µs)" in svg and "throughput (IOPS)" in svg
    assert [s for _, s in texts(c, "label-event")] == [EVIL, "controller B pulled"]


def test_event_lines() -> None:
    t = [float(i) for i in range(60)]
    events = [ChartEvent(3, "cliff at 3 s"), ChartEvent(30, "controller B pulled")]
    events.append(ChartEvent(45, "controller B back"))
    c = check(time_chart("t", t, [TimeSeries("IOPS", [5.0] * 60, "IOPS")], events=events))
    assert len(with_class(c, "line", "event")) == 3
    xs = [float(a["x1"]) for a in with_class(c, "line", "event")]
    assert xs == sorted(xs) and len(set(xs)) == 3

    # on a GB chart: at `gb`, else at the GB written by `t_s`, else left out
    gb = [i * 2.0 for i in range(60)]
    evs = [ChartEvent(10, "by time"), ChartEvent(0, "by GB", gb=100.0)]
    with_t = check(gb_chart("g", gb, [TimeSeries("IOPS", [5.0] * 60, "IOPS")], events=evs, t_s=t))
    without_t = check(gb_chart("g", gb, [TimeSeries("IOPS", [5.0] * 60, "IOPS")], events=evs))
    assert len(with_class(with_t, "line", "event")) == 2
    assert len(with_class(without_t, "line", "event")) == 1
    x_by_time = float(with_class(with_t, "line", "event")[0]["x1"])
    x_20gb = x_by_time  # t = 10 s -> 20 GB written
    assert x_20gb < float(with_class(with_t, "line", "event")[1]["x1"])


# ---------------------------------------------------------------- downsampling


def test_36000_samples_stay_small_and_keep_the_extremes() -> None:
    t, iops = cliff_run()
    lat = [None if v is None else 1e8 / v for v in iops]  # latency rises when IOPS fall
    svg = time_chart(
        "write cliff",
        t,
        [TimeSeries("IOPS", iops, "IOPS")],
        right=[TimeSeries("latency", lat, "µs")],
        events=[ChartEvent(3600, "cliff")],
    )
    assert len(svg.encode()) < 200_000
    c = check(svg)
    bands = with_class(c, "polygon", "band", "l0")
    lines = with_class(c, "polyline", "line", "l0")
    assert len(bands) == 1 and len(lines) == 1
    band, line = points(bands[0]), points(lines[0])
    assert len(line) <= 1000 and len(band) <= 2000
    top_y, bottom_y = min(y for _, y in band), max(y for _, y in band)
    # the 1-second spike to 900k and dip to 1k are drawn at their true height
    assert top_y == pytest.approx(y_of(c, 900_000), abs=0.11)
    assert bottom_y == pytest.approx(y_of(c, 1_000), abs=0.11)
    # ... which the mean line alone (the spike averaged over its bucket) would have lost
    assert min(y for _, y in line) > top_y + 50
    assert any(s == "1-s peak 900 kIOPS" for _, s in texts(c, "label-max"))
    assert "min–max of ~36 samples" in svg
    # the x axis is in hours for a 10-hour run
    assert "time (h)" in svg and "time (s)" not in svg


def test_no_downsampling_below_max_points() -> None:
    t = [float(i) for i in range(500)]
    c = check(time_chart("t", t, [TimeSeries("IOPS", [float(i) for i in range(500)], "IOPS")]))
    assert not with_class(c, "polygon", "band")
    assert len(points(with_class(c, "polyline", "line", "l0")[0])) == 500
    small = check(time_chart("t", t, [TimeSeries("x", [1.0] * 500, "IOPS")], max_points=100))
    assert len(points(with_class(small, "polyline", "line", "l0")[0])) == 50


# ---------------------------------------------------------------- axes


def test_right_axis_switches_to_ms() -> None:
    t = [float(i) for i in range(100)]
    left = [TimeSeries("IOPS", [1000.0] * 100, "IOPS")]
    slow = [TimeSeries("latency", [500.0] * 99 + [25_000.0], "µs")]
    c = check(time_chart("t", t, left, right=slow))
    assert "latency (ms)" in "".join(s for _, s in c.texts) and "latency (µs)" not in str(c.texts)
    ticks = [float(s) for _, s in texts(c, "tick-y2")]
    assert max(ticks) < 100 and max(ticks) >= 25  # ms, not µs
    assert any(s == "1-s peak 25 ms" for _, s in texts(c, "label-max"))

    fast = [TimeSeries("latency", [500.0] * 99 + [8_000.0], "µs")]
    c = check(time_chart("t", t, left, right=fast))
    assert any(s == "latency (µs)" for _, s in c.texts)
    assert max(float(s.replace(",", "")) for _, s in texts(c, "tick-y2")) >= 8000


def test_a_cpu_share_axis_ends_at_100_percent() -> None:
    t = [float(i) for i in range(60)]
    busy = [TimeSeries("controller CPU", [40.0] * 30 + [100.0] * 30, "%")]
    ticks = [float(s) for _, s in texts(check(time_chart("cpu", t, busy)), "tick-y1")]
    assert max(ticks) == 100, ticks  # not the headroom's 125: CPU busy is never more
    light = [TimeSeries("controller CPU", [12.0] * 60, "%")]
    assert max(float(s) for _, s in texts(check(time_chart("cpu", t, light)), "tick-y1")) < 20
    iops = [TimeSeries("IOPS", [40.0] * 30 + [100.0] * 30, "IOPS")]
    assert max(float(s) for _, s in texts(check(time_chart("t", t, iops)), "tick-y1")) > 100


def test_time_axis_units() -> None:
    assert time_axis(0, 120, 8, "time (s)").title == "time (s)"
    hour = time_axis(0, 3600, 8, "time (s)")
    assert hour.title == "time (min)" and hour.labels[:3] == ["0", "10", "20"]
    day = time_axis(0, 18_000, 8, "time (s)")
    assert day.title == "time (h)" and day.labels == ["0", "1", "2", "3", "4", "5"]
    assert time_axis(0, 3600, 8, "elapsed").title == "elapsed"  # a custom title is kept
    assert linear_axis(0, 12_000, 6, "data written (GB)").title == "data written (TB)"
    assert linear_axis(0, 800, 6, "data written (GB)").labels[-1] == "800"


def test_gb_chart_snia_write_saturation() -> None:
    t, iops = cliff_run(7200)
    gb, acc = [], 0.0
    for v in iops:
        acc += (v or 0.0) * 4096 / 1e9
        gb.append(acc)
    svg = gb_chart(
        "IOPS against GB written",
        gb,
        [TimeSeries("IOPS", iops, "IOPS")],
        t_s=t,
        events=[ChartEvent(720, "cliff")],
    )
    c = check(svg)
    assert "data written (GB)" in svg  # 3.8 TB: TB only from 10,000 GB
    assert len(with_class(c, "line", "event")) == 1
    assert with_class(c, "polygon", "band", "l0")


# ---------------------------------------------------------------- gaps, empty, single


def test_none_gaps_split_the_line() -> None:
    t = [float(i) for i in range(9)]
    vals: list[float | None] = [1.0, 2.0, None, 3.0, 4.0, float("nan"), 5.0, 6.0, None]
    c = check(time_chart("t", t, [TimeSeries("IOPS", vals, "IOPS")]))
    assert len(with_class(c, "polyline", "line", "l0")) == 3
    lone: list[float | None] = [1.0, 2.0, None, 3.0, None, 4.0, 5.0]
    c = check(time_chart("t", t[:7], [TimeSeries("IOPS", lone, "IOPS")]))
    assert len(with_class(c, "polyline", "line", "l0")) == 2
    assert len(with_class(c, "circle", "dot", "l0")) == 1  # 3.0 alone is still visible


def test_gaps_split_the_band_too() -> None:
    t, iops = cliff_run(10_000)
    for i in range(5000, 5200):
        iops[i] = None
    c = check(time_chart("t", t, [TimeSeries("IOPS", iops, "IOPS")]))
    assert len(with_class(c, "polygon", "band", "l0")) == 2
    assert len(with_class(c, "polyline", "line", "l0")) == 2


@pytest.mark.parametrize(
    ("t", "values"),
    [([], []), ([1.0, 2.0], [None, None]), ([1.0, 2.0], [float("nan"), float("inf")])],
)
def test_empty_input(t: list[float], values: list[float | None]) -> None:
    svg = time_chart(EVIL, t, [TimeSeries("IOPS", values, "IOPS")], events=[ChartEvent(1, "x")])
    check(svg)
    assert "no data" in svg and "&lt;script&gt;" in svg
    check(time_chart("nothing", [], []))
    check(gb_chart("nothing", [], []))


def test_single_sample() -> None:
    c = check(time_chart("one", [5.0], [TimeSeries("IOPS", [1234.0], "IOPS")]))
    assert len(with_class(c, "circle", "dot", "l0")) == 1
    assert any(s == "1-s peak 1.23 kIOPS" for _, s in texts(c, "label-max"))
    check(time_chart("zero", [0.0], [TimeSeries("IOPS", [0.0], "IOPS")]))
    check(gb_chart("one", [1.5], [TimeSeries("IOPS", [10.0], "IOPS")]))


def test_only_right_series_and_mismatched_lengths() -> None:
    t = [float(i) for i in range(10)]
    c = check(time_chart("t", t, [], right=[TimeSeries("lat", [100.0] * 10, "µs")]))
    assert with_class(c, "polyline", "line", "r0")
    # values shorter than t: the rest is missing; longer: the extra values are ignored
    c = check(
        time_chart(
            "t", t, [TimeSeries("a", [1.0] * 4, "IOPS"), TimeSeries("b", [2.0] * 20, "IOPS")]
        )
    )
    assert len(points(with_class(c, "polyline", "line", "l0")[0])) == 4
    assert len(points(with_class(c, "polyline", "line", "l1")[0])) == 10


def test_unsorted_time_is_sorted() -> None:
    c = check(time_chart("t", [2.0, 0.0, 1.0], [TimeSeries("IOPS", [30.0, 10.0, 20.0], "IOPS")]))
    line = points(with_class(c, "polyline", "line", "l0")[0])
    assert [x for x, _ in line] == sorted(x for x, _ in line)
    assert [y for _, y in line] == sorted((y for _, y in line), reverse=True)  # rising values


# ---------------------------------------------------------------- a page to look at


def sample_page() -> str:
    """Charts as a report shows them, for a screenshot (see __main__ below)."""
    rnd = random.Random(1)
    n = 3600
    t = [float(i) for i in range(n)]
    iops: list[float | None] = []
    lat: list[float | None] = []
    for i in range(n):
        fail, degraded = 1800 <= i < 1812, 1812 <= i < 2400
        base = rnd.uniform(0, 40_000) if fail else 180_000 if degraded else 310_000
        iops.append(base + (0 if fail else rnd.gauss(0, 5000)))
        lat.append(
            rnd.uniform(2000, 26_000) if fail else (650 if degraded else 380) + rnd.gauss(0, 25)
        )
    p99 = [None if v is None else v * 2.1 for v in lat]
    charts = [
        time_chart(
            "4 KiB random 70/30, 16 jobs x QD32 (AERODISK test 1)",
            t,
            [TimeSeries("IOPS", iops, "IOPS")],
            right=[
                TimeSeries("mean latency", lat, "µs"),
                TimeSeries("p99", p99, "µs", dashed=True),
            ],
            events=[ChartEvent(1800, "controller B pulled"), ChartEvent(2400, "controller B back")],
        )
    ]
    t, cliff = cliff_run(18_000)
    gb, acc = [], 0.0
    for v in cliff:
        acc += (v or 0.0) * 4096 / 1e9
        gb.append(acc)
    charts.append(
        time_chart(
            "Write cliff, 4 KiB random write",
            t,
            [TimeSeries("IOPS", cliff, "IOPS")],
            events=[ChartEvent(1800, "cliff at 30 min")],
        )
    )
    charts.append(
        gb_chart(
            "SNIA write saturation: IOPS against GB written",
            gb,
            [TimeSeries("IOPS", cliff, "IOPS")],
            t_s=t,
            events=[ChartEvent(1800, "cliff")],
        )
    )
    t = [float(i) for i in range(1, 121)]
    mb: list[float | None] = [None if 50 <= i < 55 else 4200 + rnd.gauss(0, 80) for i in range(120)]
    charts.append(
        time_chart(
            "Mixed workload: 8 KiB base load + 1 MiB every 60 s",
            t,
            [
                TimeSeries("read MB/s", mb, "MB/s"),
                TimeSeries("write MB/s", [1000 + 6 * i for i in range(120)], "MB/s", dashed=True),
            ],
            events=[ChartEvent(60, "1 MiB stream starts"), ChartEvent(62, "second stream")],
        )
    )
    charts.append(time_chart("A single sample", [3.0], [TimeSeries("IOPS", [1000.0], "IOPS")]))
    charts.append(time_chart("No data", [], [TimeSeries("IOPS", [], "IOPS")]))
    figures = "".join(f"<figure>{c}</figure>" for c in charts)
    return f"<!doctype html><meta charset='utf-8'><title>timechart</title><body>{figures}</body>"


def test_sample_page_is_well_formed() -> None:
    page = sample_page()
    assert "http" not in page
    assert len(re.findall(r"<svg ", page)) == 6
    assert len(page.encode()) < 400_000


if __name__ == "__main__":
    Path("/tmp/timechart_test.html").write_text(sample_page(), encoding="utf-8")


# ---------------------------------------------------------------- labels off each other


def _boxes(c: _Checker, *classes: str) -> list[tuple[str, tuple[float, float, float, float]]]:
    """Each label's box as drawn: its x, baseline, anchor and font size (the renderer's own
    width estimate, 0.58 em per character)."""
    found = []
    for a, s in c.texts:
        if not set(classes) & set(a.get("class", "").split()):
            continue
        size = float(a["font-size"])
        w = len(s) * size * 0.58
        x, y = float(a["x"]), float(a["y"])
        x0 = {"start": x, "middle": x - w / 2, "end": x - w}[a.get("text-anchor", "start")]
        found.append((s, (x0, y - size, x0 + w, y + 3)))
    return found


@pytest.mark.parametrize(
    ("width", "seconds", "events", "peaks"),
    [
        (900, 300, [100, 104], (102, 103)),
        (520, 300, [100, 104], (102, 103)),
        # narrow: three events a second apart stack their labels over the right-hand peak
        (420, 60, [40, 41, 42], (55, 40)),
    ],
)
def test_event_and_peak_labels_never_overlap(
    width: int, seconds: int, events: list[int], peaks: tuple[int, int]
) -> None:
    # close events and two peaks (IOPS, latency) near them, at the top of the plot: every
    # label the renderer places would land on the same spot
    t = list(range(seconds))
    iops = [50_000.0 + (900_000.0 if i == peaks[0] else 0.0) for i in t]
    lat = [200.0 + (25_000.0 if i == peaks[1] else 0.0) for i in t]
    names = [f"controller {c} pulled" for c in "ABC"[: len(events)]]
    svg = time_chart(
        "labels", t, [TimeSeries("IOPS", iops, "IOPS")],
        right=[TimeSeries("latency", lat, "µs")],
        events=[ChartEvent(at, n) for at, n in zip(events, names, strict=True)],
        shade=(0, 20, "warm-up (left out)"), width=width,
    )  # fmt: skip
    c = check(svg)
    labels = _boxes(c, "label-event", "label-max", "label-shade")
    drawn = [s for s, _ in labels]
    assert all(n in drawn for n in names) and "warm-up (left out)" in drawn
    assert sum(s.startswith("1-s peak") for s in drawn) == 2
    for i, (a, box_a) in enumerate(labels):
        for b, box_b in labels[i + 1 :]:
            overlap = (box_a[0] < box_b[2] and box_b[0] < box_a[2]
                       and box_a[1] < box_b[3] and box_b[1] < box_a[3])  # fmt: skip
            assert not overlap, f"{a!r} {box_a} overlaps {b!r} {box_b}"
