"""One number, one text: every writer (terminal, HTML with its charts, Markdown, Excel, the PDF's
source) formats IOPS, MB/s, latency, % and GB through `units`, so they agree."""

from __future__ import annotations

import io
import re
import zipfile
from html import unescape
from pathlib import Path
from types import SimpleNamespace

import pytest
from openpyxl import load_workbook
from rich.console import Console

from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.headline import headline as summarize
from arraybench.console import summary_table
from arraybench.report.build import cell_texts
from arraybench.report.charts.timechart import TimeSeries, time_chart
from arraybench.report.model import (
    CurvePanel,
    ReportModel,
    SummaryCell,
    SummaryRow,
    Timeline,
    WorkloadSection,
)
from arraybench.report.render.html.page import render_html
from arraybench.report.render.markdown.page import render_markdown
from arraybench.report.render.xlsx.workbook import write_xlsx
from arraybench.units import (
    format_gb,
    format_latency,
    format_mbps,
    format_number,
    format_pct,
    format_quantity,
    format_tick,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (format_quantity(1_250_000, "IOPS"), "1.25 MIOPS"),
        (format_quantity(304_123, "IOPS"), "304 kIOPS"),
        (format_quantity(999_700, "IOPS"), "1 MIOPS"),
        (format_quantity(850, "IOPS"), "850 IOPS"),
        (format_latency(8.46), "8.46 µs"),
        (format_latency(98.14), "98.1 µs"),
        (format_latency(1_208), "1,208 µs"),
        (format_latency(123_456), "123 ms"),
        (format_latency(12_345), "12.3 ms"),
        (format_mbps(5_234.4), "5,234 MB/s"),
        (format_mbps(98.14), "98.1 MB/s"),
        (format_pct(-93.04), "-93 %"),
        (format_pct(4.5, signed=True), "+4.5 %"),
        (format_pct(-1.1e-14, signed=True), "0 %"),  # an equal pair's float left-over
        (format_gb(0.5), "0.5 GB"),
        (format_gb(12_345), "12.3 TB"),
        (format_number(1_250_000), "1,250,000"),
        (format_number(8.46), "8.46"),
        (format_tick(1_250_000), "1.25M"),
        (format_tick(250_000), "250k"),
        (format_tick(2_500, "µs"), "2,500"),
        (format_quantity(None, "IOPS"), "–"),
    ],
)
def test_one_text_per_value(text: str, expected: str) -> None:
    assert text == expected


# level 1: 400 kIOPS at 8.46 µs (optimal, min latency); level 2: 1.25 MIOPS at 123,456 µs (max)
THROUGHPUT = [400_000.0, 1_250_000.0]
MEAN_US: list[float | None] = [8.46, 123_456.0]
EXPECTED = ("1.25 MIOPS", "8.46 µs")
OTHER_SPELLINGS = ("1,250 kIOPS", "1250 kIOPS", "8.5 µs", "123.5 ms", "123,456 µs")


def _model() -> ReportModel:
    curve = [CurvePoint(float(i + 1), t, m, m, f"p{i}") for i, (t, m) in
             enumerate(zip(THROUGHPUT, MEAN_US, strict=True))]  # fmt: skip
    run = SimpleNamespace(latency_bound_us=1000.0, latency_stat="mean")
    summary = summarize(curve, bound_us=1000.0, stat="mean")
    cell = SummaryCell(*cell_texts(summary, "IOPS", run))  # type: ignore[arg-type]
    panel = CurvePanel("Read", "workers per host (iodepth 1)", [1.0, 2.0], ["1", "2"], "IOPS",
                       THROUGHPUT, MEAN_US, MEAN_US, 0, 1, 0)  # fmt: skip
    timeline = Timeline("rand read 2x1", [0.0, 1.0, 2.0], "IOPS", [400_000.0, 1_250_000.0, None],
                        [8.46, 123_456.0, None])  # fmt: skip
    return ReportModel(
        title="units", run_id="r1", scenario="baseline", labels={}, started="2026-01-01T00:00:00",
        finished=None, status="complete", arraybench_version="0", engine_version="fio-3.33",
        host="h", kernel="k", targets=["/tmp/t"], latency_bound="1 ms mean",
        summary_columns=["Read"], summary=[SummaryRow("Random 8 KiB", {"Read": cell})],
        sections=[WorkloadSection("Random 8 KiB", [panel])], points=[], point_columns=[],
        plan_yaml="", timelines=[timeline],
    )  # fmt: skip


def _texts_of_svg(doc: str) -> str:
    return unescape(" ".join(re.findall(r"<text[^>]*>([^<]*)</text>", doc)))


def _writers(tmp_path: Path) -> dict[str, str]:
    model = _model()
    html = render_html(model)
    terminal = Console(file=io.StringIO(), width=200, color_system=None)
    terminal.print(summary_table(model))
    book = tmp_path / "units.xlsx"
    write_xlsx(model, book)
    cells = [str(c.value) for ws in load_workbook(book).worksheets for row in ws.iter_rows()
             for c in row if c.value is not None]  # fmt: skip
    series = [TimeSeries("IOPS", [400_000.0, 1_250_000.0], "IOPS")]
    latency = [TimeSeries("mean latency", [8.46, 123_456.0], "µs")]
    chart = time_chart("t", [0.0, 1.0], series, right=latency)
    return {
        "terminal": terminal.file.getvalue(),  # type: ignore[attr-defined]
        "html (tables)": unescape(re.sub(r"<svg.*?</svg>", "", html, flags=re.S)),
        "html (chart labels)": _texts_of_svg(html),
        "markdown": render_markdown(model),
        "excel": "\n".join(cells),
        "time chart": _texts_of_svg(chart) + " 8.46 µs",  # the chart labels maxima only
    }


def test_every_writer_spells_a_value_the_same(tmp_path: Path) -> None:
    for writer, text in _writers(tmp_path).items():
        flat = re.sub(r"\s+", " ", text)
        for expected in EXPECTED:
            assert expected in flat, f"{writer}: {expected!r} missing"
        for other in OTHER_SPELLINGS:
            assert other not in flat, f"{writer} writes {other!r}"
    chart = _writers(tmp_path)["time chart"]
    assert "1-s peak 123 ms" in chart and "1-s peak 1.25 MIOPS" in chart


def test_run_notes_wrap_within_100_columns_as_hanging_paragraphs(capsys) -> None:
    from arraybench import console

    long = ("rr: 2 flagged points (generator-bound, host-busy) left out of the optimal point, "
            "the maximum and the latency-bounded figures, as the plan's report settings say; "
            "set report.headline_includes_flagged to keep them")  # fmt: skip
    console.print_notes([long, "short one"])
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 100 for line in lines), lines
    assert lines[0].startswith("note: rr: 2 flagged") and lines[1].startswith(" " * 6)
    assert not lines[1][6].isspace()
    assert lines[-1] == "note: short one"
    assert " ".join(" ".join(lines[:-1]).split()) == f"note: {long}"


def test_a_repetitions_row_names_its_repetition() -> None:

    from arraybench.report.sections.points import point_row
    from tests.records import BLANK_POINT, keyed

    first = keyed(BLANK_POINT, "randread-8k/w2-qd4", workers=2, iodepth=4)
    second = keyed(first, "randread-8k/w2-qd4#2")
    assert [point_row(p).level for p in (first, second)] == ["2x4", "2x4 #2"]


def test_a_one_level_series_states_its_figures_once() -> None:
    """Its optimal point is its maximum and its minimum latency: said once, not three times."""
    run = SimpleNamespace(latency_bound_us=1000.0, latency_stat="mean")
    one = summarize([CurvePoint(1.0, 310.0, 3215.0, 9000.0, "p0")], bound_us=1000.0, stat="mean")
    optimal, extremes, bounded = cell_texts(one, "IOPS", run, levels=1)  # type: ignore[arg-type]
    assert (optimal, extremes, bounded) == ("310 IOPS @ 3,215 µs", "one load level",
                                            "none ≤ 1 ms mean")  # fmt: skip
    fast = summarize([CurvePoint(1.0, 310.0, 215.0, 900.0, "p0")], bound_us=1000.0, stat="mean")
    cell = cell_texts(fast, "IOPS", run, ceiling=1000.0, levels=1)  # type: ignore[arg-type]
    assert cell == ("310 IOPS @ 215 µs", "one load level (31% of theoretical)",
                    "within the bound (1 ms mean)")  # fmt: skip
    # two levels whose first is every role: named as such, the number still once
    two = summarize(
        [CurvePoint(1.0, 310.0, 215.0, 900.0, "p0"), CurvePoint(2.0, 300.0, 400.0, 900.0, "p1")],
        bound_us=1000.0,
        stat="mean",
    )
    assert cell_texts(two, "IOPS", run, levels=2)[1] == (  # type: ignore[arg-type]
        "also the maximum and the minimum latency")  # fmt: skip


def test_a_latency_figure_spanning_decades_is_drawn_on_a_log_axis(tmp_path: Path) -> None:
    from arraybench.report.charts.figures import figure_svg
    from arraybench.report.model import Figure, FigureSeries
    from arraybench.report.render.xlsx.workbook import write_xlsx

    lines = [FigureSeries("4 KiB", [900.0, 1100.0]), FigureSeries("1 MiB", [90_000.0, 347_000.0])]
    wide = Figure("lines", "rw70 sync: mean latency", "numjobs", "µs", ["1", "8"], lines)
    near = Figure("lines", "rw70 sync: mean latency", "numjobs", "µs", ["1", "8"], lines[:1])
    iops = Figure("lines", "rw70 sync: IOPS", "numjobs", "IOPS", ["1", "8"], lines)
    assert wide.log_y and not near.log_y and not iops.log_y  # latency only, > 10 x only
    assert "log scale" in figure_svg(wide) and "log scale" not in figure_svg(near)
    model = _model()
    model.figures = [wide]
    write_xlsx(model, tmp_path / "f.xlsx")
    with zipfile.ZipFile(tmp_path / "f.xlsx") as book:  # openpyxl reads no charts back
        charts = [book.read(n).decode() for n in book.namelist() if "charts/chart" in n]
    figure = [c for c in charts if "numjobs" in c]  # the figure's (the model has curves too)
    assert len(figure) == 1 and '<logBase val="10"' in figure[0]
