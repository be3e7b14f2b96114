"""The HTML report: self-contained, well-formed, escaped, and charts that say the right things."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from itertools import pairwise
from typing import Any

import pytest

from arraybench.report.charts.curve import curve_chart, optimal_label
from arraybench.report.charts.parts import nice_ticks, ticks_with_count
from arraybench.report.model import (
    CurvePanel,
    PointRow,
    ReportModel,
    SummaryCell,
    SummaryRow,
    WorkloadSection,
)
from arraybench.report.render.html.page import format_value, render_html

EVIL = "<script>alert('x')</script>"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}

# ---------------------------------------------------------------- a tiny DOM over html.parser


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def all_text(self) -> str:
        return "".join(self.text) + "".join(c.all_text() for c in self.children)

    def find_all(self, tag: str, cls: str | None = None) -> list[Node]:
        out = []
        for c in self.children:
            if c.tag == tag and (cls is None or cls in c.attrs.get("class", "").split()):
                out.append(c)
            out += c.find_all(tag, cls)
        return out


class StrictTree(HTMLParser):
    """Builds a tree and fails on any end tag that does not close the innermost open element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        assert tag not in VOID, f"end tag for void element {tag}"
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].text.append(data)


def parse(doc: str) -> Node:
    p = StrictTree()
    p.feed(doc)
    p.close()
    assert [n.tag for n in p.stack] == ["#root"], "unclosed elements"
    return p.root


# ---------------------------------------------------------------- the model


def _panel(label: str, tput: list[float], mean: list[float | None], **kw: Any) -> CurvePanel:
    levels = [2.0**i for i in range(len(tput))]
    base = CurvePanel(
        mix_label=label,
        x_label="workers per host (iodepth 1)",
        x_values=levels,
        x_ticks=[f"{v:g}" for v in levels],
        throughput_unit="IOPS",
        throughput=tput,
        lat_mean_us=mean,
        lat_p99_us=[None if m is None else m * 2.5 for m in mean],
        optimal_index=None,
        max_index=None,
        min_latency_index=None,
    )
    return replace(base, **kw)


READ = _panel(
    "Read",
    [42_000, 81_000, 150_000, 232_000, 304_000, 328_000, 321_000],
    [98, 101, 108, 139, 208, 390, 795],
    optimal_index=4,
    max_index=5,
    min_latency_index=0,
    ceiling=450_000,
)
WRITE = _panel(
    "Write",
    [20_000, 38_000, 61_000, 70_000, 71_000],
    [900, 2_500, 6_000, 14_000, 25_000],
    optimal_index=2,
    max_index=4,
    min_latency_index=0,
)
MIXED = _panel(EVIL, [30_000, 55_000, 90_000], [150, 180, 260], optimal_index=1, max_index=2)
GAPPY = _panel(
    "Read",
    [800.0, 1_500.0, 2_400.0, 2_600.0],
    [1_200, None, 8_000, 9_000],
    throughput_unit="MB/s",
    optimal_index=2,
    max_index=3,
)
SINGLE = _panel("Write", [12_000], [300], optimal_index=0, max_index=0, min_latency_index=0)
PANELS = [READ, WRITE, MIXED, GAPPY, SINGLE]

COLUMNS = ["Read", "Write", "R/W 70/30"]
POINT_COLUMNS = ["read_iops", "write_iops", "total_lat_mean_us", "total_lat_p99_us"]


def _points() -> list[PointRow]:
    rows = []
    for i, (w, iops) in enumerate([(1, 42_000.4), (2, 81_000.0), (4, 150_123.7)]):
        values: dict[str, float | None] = {
            "read_iops": iops,
            "write_iops": None,
            "total_lat_mean_us": 98.25 + i,
            "total_lat_p99_us": None if i == 1 else 0.01234,
        }
        rows.append(PointRow("rand8k-read", str(w), w, 1, "8 LUNs", values))
    rows.append(PointRow(EVIL, "8", 8, 1, "8 LUNs", {"read_iops": float("nan")}))
    return rows


def make_model() -> ReportModel:
    cell = SummaryCell("304 kIOPS @ 208 µs", "328 kIOPS max, 98 µs min", "296 kIOPS ≤ 1 ms mean")
    return ReportModel(
        title="Dorado 8000 V6, L1C4S2",
        run_id="20260101-120000-abcd",
        scenario="L1C4S2",
        labels={"array": "dorado", "note": EVIL},
        started="2026-01-01T12:00:00+00:00",
        finished="2026-01-01T14:05:30+00:00",
        status="complete",
        arraybench_version="0.1.0",
        engine_version="fio-3.36",
        host="bench01",
        kernel="6.1.0-18-amd64",
        targets=["/dev/mapper/lun0", "/dev/mapper/lun1"],
        latency_bound="1 ms mean",
        summary_columns=COLUMNS,
        summary=[
            SummaryRow("Random 8 KiB (backend)", {"Read": cell, "Write": cell}),
            SummaryRow(EVIL, {"R/W 70/30": cell}),
        ],
        sections=[
            WorkloadSection("Random 8 KiB (backend)", [READ, WRITE, MIXED]),
            WorkloadSection(EVIL, [GAPPY, SINGLE]),
        ],
        points=_points(),
        point_columns=POINT_COLUMNS,
        plan_yaml=f"name: demo\ndescription: {EVIL}\n",
        job_files={"rand8k-read/w1": "[global]\ndirect=1\n", "rand8k-read/w2": f"; {EVIL}\n"},
        notes=["2 points exceeded the latency bound", EVIL],
    )


@pytest.fixture(scope="module")
def doc() -> str:
    return render_html(make_model())


@pytest.fixture(scope="module")
def tree(doc: str) -> Node:
    return parse(doc)


def _svg(panel: CurvePanel) -> Node:
    svgs = parse(curve_chart(panel)).find_all("svg")
    assert len(svgs) == 1
    return svgs[0]


def _texts(node: Node, cls: str) -> list[str]:
    return [t.all_text() for t in node.find_all("text", cls)]


def _num(label: str) -> float:
    scale = {"k": 1e3, "M": 1e6}.get(label[-1:], 1.0)
    return float(label.rstrip("kM").replace(",", "")) * scale


# ---------------------------------------------------------------- the page


def test_document_parses_with_balanced_tags(tree: Node) -> None:
    assert len(tree.find_all("html")) == 1
    assert tree.find_all("title")[0].all_text() == "Dorado 8000 V6, L1C4S2"
    for svg in tree.find_all("svg"):
        assert svg.find_all("text"), "chart without any text"


def test_self_contained_offline(doc: str) -> None:
    low = doc.lower()
    for bad in ("http://", "https://", "<script src", "<link", "@import", "url(", "<img"):
        assert bad not in low, bad
    assert low.count("<script") == 1  # only the inline sorting script


def test_one_svg_per_panel(tree: Node) -> None:
    """A panel of one load level is said in words, not drawn as one dot."""
    assert len(tree.find_all("svg")) == len(PANELS) - 1 == 4
    sections = tree.find_all("section", "workload")
    assert [len(s.find_all("svg")) for s in sections] == [3, 1]
    (single,) = tree.find_all("figure", "single")
    assert "12 kIOPS" in single.all_text() and "mean latency 300 µs" in single.all_text()


def test_user_text_is_escaped(doc: str) -> None:
    assert EVIL not in doc
    assert "<script>alert" not in doc
    # label, note, summary row, section title, series, plan, job file, chart title
    assert doc.count("&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;") >= 8


def test_optimal_label_in_chart_and_summary(tree: Node, doc: str) -> None:
    labels = [t.all_text() for t in tree.find_all("text", "label-optimal")]
    assert "optimal 304 kIOPS @ 208 µs" in labels
    assert len(tree.find_all("circle", "mark-optimal")) == len(PANELS) - 1  # SINGLE: words
    bold = [d.all_text() for d in tree.find_all("table", "summary")[0].find_all("div", "opt")]
    assert bold == ["304 kIOPS @ 208 µs"] * 3


def test_metadata_and_notes(tree: Node) -> None:
    meta = tree.find_all("dl", "meta")[0]
    keys = [d.all_text() for d in meta.find_all("dt")]
    terms = dict(zip(keys, [d.all_text() for d in meta.find_all("dd")], strict=True))
    assert terms["Run id"] == "20260101-120000-abcd"
    assert terms["fio"] == "fio-3.36"
    assert terms["Finished"].endswith("(2 h 05 min)")
    assert "/dev/mapper/lun1" in terms["Targets"]
    assert terms["Latency bound"] == "1 ms mean"
    notes = tree.find_all("div", "notes")[0].find_all("li")
    assert [n.all_text() for n in notes] == ["2 points exceeded the latency bound", EVIL]


def test_summary_table(tree: Node) -> None:
    table = tree.find_all("table", "summary")[0]
    heads = [th.all_text() for th in table.find_all("thead")[0].find_all("th")]
    assert heads == ["Workload", *COLUMNS]
    rows = table.find_all("tbody")[0].find_all("tr")
    assert len(rows) == 2
    first = [td.all_text() for td in rows[0].find_all("td")]
    assert first[0] == "304 kIOPS @ 208 µs328 kIOPS max, 98 µs min296 kIOPS ≤ 1 ms mean"
    assert first[2] == "–"  # no R/W cell for this workload
    assert rows[0].find_all("a")[0].attrs["href"] == "#w1"


def test_points_table_one_row_per_point(tree: Node) -> None:
    """Grouped headings with units; the fixed targets said once above; no write group (no
    point has write I/O); NaN and missing values are dashes."""
    section = next(s for s in tree.find_all("section") if s.attrs.get("id") == "points")
    assert "Targets8 LUNs" in section.find_all("dl", "fixed")[0].all_text()
    tables = section.find_all("table", "points")
    groups = [th.all_text() for t in tables for th in t.find_all("th", "group") if th.all_text()]
    assert groups == ["Read", "Total"]
    head_rows = tables[0].find_all("thead")[0].find_all("tr")
    heads = [[th.all_text() for th in tr.children] for tr in head_rows[1:]]
    assert heads == [["Series", "Level", "IOPS", "MB/s", "latency (µs)"],
                     ["mean", "p99", "p99.9", "max"]]  # fmt: skip
    rows = tables[0].find_all("tbody")[0].find_all("tr")
    assert len(rows) == len(make_model().points) == 4
    third = [cell.all_text() for cell in rows[2].children]  # the point's name: row headings
    assert [c.tag for c in rows[2].children][:3] == ["th", "th", "td"]
    assert third == ["rand8k-read", "4", "150,124", "–", "–", "–", "–", "–"]
    total = [td.all_text() for td in tables[1].find_all("tbody")[0].find_all("tr")[2].children]
    assert total[:2] == ["rand8k-read", "4"] and total[4:6] == ["100", "0.0123"]
    assert [td.all_text() for td in rows[3].find_all("td")] == ["–"] * 6  # NaN and missing


def test_plan_and_job_files(tree: Node) -> None:
    assert "name: demo" in tree.find_all("pre", "plan")[0].all_text()
    details = tree.find_all("section")[-1].find_all("details")
    assert [d.find_all("summary")[0].all_text() for d in details] == [
        "rand8k-read/w1",
        "rand8k-read/w2",
    ]
    assert details[0].find_all("pre")[0].all_text() == "[global]\ndirect=1\n"
    assert details[1].find_all("pre")[0].all_text() == f"; {EVIL}\n"


def test_size_is_reasonable(doc: str) -> None:
    assert len(doc) < 60_000 + 8_000 * len(PANELS)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "–"),
        (float("nan"), "–"),
        (0.0, "0"),
        (328_000.0, "328,000"),
        (304_123.7, "304,124"),
        (12.345, "12.3"),
        (1.5, "1.5"),
        (0.01234, "0.0123"),
        (-2.0, "-2"),
    ],
)
def test_format_value(value: float | None, text: str) -> None:
    assert format_value(value) == text


# ---------------------------------------------------------------- the charts


def _is_nice(step: float) -> bool:
    mantissa = step / 10 ** math.floor(math.log10(step))
    return any(math.isclose(mantissa, m) for m in (1, 2, 2.5, 5))


def test_throughput_axis_nice_ticks_with_k() -> None:
    labels = _texts(_svg(READ), "tick-y1")
    values = [_num(s) for s in labels]
    assert values[0] == 0 and labels[0] == "0"
    assert values[-1] >= 450_000  # covers max 328k and the 450k ceiling
    assert all(s.endswith("k") for s in labels[1:])
    steps = {round(b - a) for a, b in pairwise(values)}
    assert len(steps) == 1 and _is_nice(steps.pop())
    assert 3 <= len(values) - 1 <= 6


def test_throughput_axis_reaches_max_without_ceiling() -> None:
    panel = _panel("Read", [100_000, 328_000], [100, 200], optimal_index=0, max_index=1)
    values = [_num(s) for s in _texts(_svg(panel), "tick-y1")]
    assert values[0] == 0 and values[-1] >= 328_000
    assert values[-1] <= 2 * 328_000


def test_latency_axis_switches_to_ms() -> None:
    slow = _svg(_panel("Write", [61_000, 71_000], [12_000, 25_000]))  # p99 up to 62 500 µs
    assert _texts(slow, "axis-y2") == ["latency (ms)"]
    top = _num(_texts(slow, "tick-y2")[-1])
    assert 62.5 <= top <= 200  # in ms, not µs
    fast = _svg(_panel("Read", [232_000, 328_000], [139, 390]))  # p99 up to 975 µs
    assert _texts(fast, "axis-y2") == ["latency (µs)"]
    assert _num(_texts(fast, "tick-y2")[-1]) >= 390 * 2.5


def test_latency_lines_spanning_decades_are_drawn_on_a_log_axis() -> None:
    """WRITE's mean from 900 µs to its p99 at 62.5 ms: on a linear axis the mean's first levels
    lie on the floor; in decades each line keeps its shape."""
    svg = _svg(WRITE)
    assert _texts(svg, "axis-y2") == ["latency (µs, log scale)"]
    assert [_num(t) for t in _texts(svg, "tick-y2")] == [100, 1_000, 10_000, 100_000]
    mean = svg.find_all("polyline", "line-mean")[0]
    first = float(mean.attrs["points"].split()[0].split(",")[1])  # 900 µs
    ticks = {_num(t.all_text()): float(t.attrs["y"]) - 4 for t in svg.find_all("text", "tick-y2")}
    assert ticks[1_000] < first < ticks[100]  # between its decades, not on the floor
    assert WRITE.log_latency and not _panel("R", [1.0, 2.0], [139, 390]).log_latency


def test_axes_share_grid_lines() -> None:
    svg = _svg(READ)
    assert len(_texts(svg, "tick-y1")) == len(_texts(svg, "tick-y2"))


def test_max_and_ceiling_marked() -> None:
    svg = _svg(READ)
    assert _texts(svg, "label-max") == ["max 328 kIOPS"]
    assert _texts(svg, "label-ceiling") == ["theoretical 450 kIOPS"]
    assert _texts(svg, "label-min") == ["min 98 µs"]
    assert len(svg.find_all("polygon", "mark-max")) == 1


def test_x_ticks_are_load_levels() -> None:
    assert _texts(_svg(READ), "tick-x") == ["1", "2", "4", "8", "16", "32", "64"]


def test_none_latency_leaves_a_gap() -> None:
    svg = _svg(GAPPY)
    assert len(svg.find_all("polyline", "line-mean")) == 2  # [0] and [2, 3]
    assert len(svg.find_all("polyline", "line-tput")) == 1
    assert _texts(svg, "label-optimal") == ["optimal 2,400 MB/s @ 8,000 µs"]


@pytest.mark.parametrize(
    "panel",
    [
        SINGLE,
        _panel("Zero", [0.0, 0.0], [None, None]),
        _panel("Empty", [], []),
        _panel("All None latency", [5.0, 6.0], [None, None], optimal_index=9, max_index=-1),
        _panel("Huge", [3e9, 4e9], [1e7, 2e7], optimal_index=0, max_index=1),
    ],
)
def test_degenerate_panels_render(panel: CurvePanel) -> None:
    svg = _svg(panel)
    assert _texts(svg, "chart-title") == [panel.mix_label]
    coords = re.findall(r' (?:x|y|cx|cy|x1|y1|x2|y2|r)="([^"]+)"', curve_chart(panel))
    assert all(math.isfinite(float(c)) for c in coords)


def test_zero_throughput_axis_starts_at_zero() -> None:
    values = [_num(s) for s in _texts(_svg(_panel("Zero", [0.0, 0.0], [None, None])), "tick-y1")]
    assert values[0] == 0 and values[-1] > 0


def test_optimal_label_none_without_index() -> None:
    assert optimal_label(_panel("x", [1.0], [None])) is None
    assert optimal_label(_panel("x", [1.0], [None], optimal_index=0)) == "optimal 1 IOPS"


@pytest.mark.parametrize("vmax", [0.7, 9.0, 328_000.0, 504_000.0, 1_234_567.0])
def test_nice_ticks(vmax: float) -> None:
    ticks = nice_ticks(vmax)
    assert ticks[0] == 0 and ticks[-1] >= vmax and ticks[-2] < vmax
    assert _is_nice(ticks[1])
    shared = ticks_with_count(vmax, 4)
    assert len(shared) == 5 and shared[-1] >= vmax and _is_nice(shared[1])


def test_a_far_ceiling_is_named_not_drawn_to_scale() -> None:
    """A 1,151 kIOPS fabric ceiling over a 62 kIOPS curve would squash it to the floor."""
    panel = _panel("Read", [20_000, 45_000, 62_000], [100, 150, 300], ceiling=1_151_000,
                   optimal_index=1, max_index=2)  # fmt: skip
    svg = _svg(panel)
    assert _texts(svg, "label-ceiling") == ["theoretical 1.15 MIOPS ↑ (off the scale)"]
    assert _num(_texts(svg, "tick-y1")[-1]) < 100_000  # the axis follows the curve
