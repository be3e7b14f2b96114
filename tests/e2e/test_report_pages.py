"""The PDF a customer gets holds every column of the HTML points table, and no table is wider
than its page: for a run (random 70/30 and sequential read, so read, write and total groups)
and for a compare of two scenarios. The run is the test engine's (tests/fake_engine.py): the
pages are the subject, not fio. Real Chromium, real pdftotext."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest
from openpyxl import load_workbook

from arraybench.report.assemble import report_for_run
from arraybench.report.compare import compare, load_scenario
from arraybench.report.model import ReportModel
from arraybench.report.render.export import write_report
from arraybench.report.render.html.page import APPENDIX
from arraybench.report.render.pdf import printout
from arraybench.store.db import Store
from arraybench.units import format_latency, format_quantity
from tests.conftest import main_cli, small_plan
from tests.fake_engine import PLAN_LINES, registered

A4_PRINTABLE_PX = 703  # 210 mm - 2 x 12 mm margins (the print CSS) at 96 px per inch

pytestmark = [
    pytest.mark.xdist_group("report_pages"),  # module fixtures: built once, on one worker
    pytest.mark.skipif(
        shutil.which("chromium") is None and not Path(printout.CHROMIUM).exists(),
        reason="chromium is not installed",
    ),
    pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils not installed"),
]


@pytest.fixture(scope="module", autouse=True)
def _fake_engine() -> Iterator[None]:
    with registered():  # for the module's run and for every report of it (its stored plan)
        yield


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    tmp = tmp_path_factory.mktemp("pages")
    results = tmp / "res"
    plan = small_plan(tmp, extra=PLAN_LINES)  # 2-second points: each logs 1-second samples
    plan.write_text(plan.read_text().replace("duration: 1s", "duration: 2s"))
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stderr
    return Store(results, create=False)


def _models(store: Store) -> dict[str, ReportModel]:
    ((run, _),) = store.list_runs()
    scenarios = [load_scenario(store, f"{run.id}:before"), load_scenario(store, f"{run.id}:after")]
    return {"run": report_for_run(store, run.id), "compare": compare(scenarios)}


def _table_headings(html: str) -> list[str]:
    """The text of every column heading of every table in the HTML."""
    heads = "".join(re.findall(r"<thead>(.*?)</thead>", html, flags=re.S))
    cells = re.findall(r"<th[^>]*>(.*?)</th>", heads, flags=re.S)
    return [unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells]


def _widest_table(html_path: Path) -> float:
    """The right edge of the widest table when the page is laid out for print on A4."""
    script = (
        "Math.max(0, ...Array.from(document.querySelectorAll('table'), "
        "t => t.getBoundingClientRect().right))"
    )
    with printout._Chromium([], pipe=True, timeout=60, what="measuring") as c:
        session = c.open_page(printout._file_url(html_path), width=A4_PRINTABLE_PX)
        c.send("Emulation.setEmulatedMedia", {"media": "print"}, session=session)
        got = c.send("Runtime.evaluate", {"expression": script, "returnByValue": True},
                     session=session)  # fmt: skip
    return float(got["result"]["value"])


@pytest.fixture(scope="module")
def printed(store: Store, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The HTML and the PDF of the run and of the compare, each written once."""
    tmp = tmp_path_factory.mktemp("printed")
    out = {}
    for kind, model in _models(store).items():
        write_report(model, tmp / f"{kind}.html", "html")
        out[kind] = write_report(model, tmp / f"{kind}.pdf", "pdf")
    return out


@pytest.mark.parametrize("kind", ["run", "compare"])
def test_pdf_has_every_column_and_no_table_is_wider_than_the_page(
    printed: dict[str, Path], kind: str
) -> None:
    pdf = printed[kind]
    html = pdf.with_suffix(".html").read_text()
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout  # fmt: skip
    flat = re.sub(r"\s+", " ", text)
    headings = [h for h in _table_headings(html) if h]
    assert {"IOPS", "MB/s", "p99.9", "max"} <= set(headings) or kind == "compare"
    missing = [h for h in dict.fromkeys(headings) if re.sub(r"\s+", " ", h) not in flat]
    assert not missing, f"columns of the HTML that the PDF lacks: {missing}"
    assert _widest_table(pdf.with_suffix(".html")) <= A4_PRINTABLE_PX + 1  # half a border


def test_show_csv_is_the_report_csv(store: Store, tmp_path: Path) -> None:
    ((run, _),) = store.list_runs()
    shown = main_cli("show", run.id, "--results", str(store.path.parent), "--format", "csv")
    assert shown.returncode == 0, shown.stderr
    written = write_report(report_for_run(store, run.id), tmp_path / "x.csv", "csv")
    assert shown.stdout == written.read_text(encoding="utf-8")
    assert shown.stdout.splitlines()[0].startswith("series,id,run_id,seq,key,")


def test_compare_has_every_section_filled(store: Store, tmp_path: Path) -> None:
    """Summary with deltas, one dual-axis chart per workload, every run's points; in Excel a
    native chart per workload."""
    ((run, _),) = store.list_runs()
    model = _models(store)["compare"]
    workloads = {p.workload for p in store.points(run.id)}
    assert model.summary_columns == ["before", "after"]
    assert {row.workload for row in model.summary} == workloads
    assert all(set(row.cells) == {"before", "after"} for row in model.summary)
    assert all("Δ max 0 %" in row.cells["after"].extremes for row in model.summary)
    assert len(model.points) == 2 * len(store.points(run.id))
    # every run's job files: fio's (run/reportable.py stores point.fio), so the golden compare
    # of a fixed fio store checks them (test_report_golden); the test engine's are not stored
    html = write_report(model, tmp_path / "c.html", "html").read_text()
    workloads_html = html[html.index('<section id="workloads">') :]
    workloads_html = workloads_html[: workloads_html.index("</section>")]
    assert workloads_html.count("<svg") == len(workloads)
    assert "before latency" in workloads_html and "after latency" in workloads_html
    book = load_workbook(write_report(model, tmp_path / "c.xlsx", "xlsx"))
    charts = [c for ws in book.worksheets for c in ws._charts]
    assert len(charts) >= len(workloads)


def test_every_ladder_has_its_time_series(store: Store, tmp_path: Path) -> None:
    """Points of a load ladder keep 1-second samples: each series gets a chart of its levels
    one after the other (folded in HTML), and Excel's Timelines sheet holds them."""
    ((run, _),) = store.list_runs()
    model = report_for_run(store, run.id)
    series = {t.series for t in model.timelines if t.series}
    assert series == {row.series for row in model.points}
    ladder = next(t for t in model.timelines if t.series)
    assert [label for _, label in ladder.events] == ["w1-qd2", "w2-qd2"]
    assert "after the ramp" in ladder.x_label or "ramp" in ladder.x_label
    html = write_report(model, tmp_path / "t.html", "html").read_text()
    assert html.count('<details class="series">') == len(series)
    book = load_workbook(write_report(model, tmp_path / "t.xlsx", "xlsx"))
    sheet = book["Timelines"]
    assert sheet["A1"].value != "no time series in this run"
    titles = {c.value for c in sheet[1] if c.value}
    assert {t.title for t in model.timelines} <= titles


HOVER_AT = """
(function (selector, index) {
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  var rect = document.querySelectorAll(selector)[0], svg = rect.ownerSVGElement;
  svg.scrollIntoView({block: "center"});
  var xs = rect.getAttribute("data-xs").split(",").map(Number);
  var pt = svg.createSVGPoint();
  pt.x = xs[index]; pt.y = +rect.getAttribute("y") + +rect.getAttribute("height") / 2;
  var at = pt.matrixTransform(svg.getScreenCTM());
  return JSON.stringify([at.x, at.y]);
})
"""


def _hover_text(html_path: Path, selector: str, index: int) -> str:
    """Moves the pointer of a real headless Chromium over the `index`-th point of the first
    chart matching `selector` and returns the tooltip the page shows."""
    with printout._Chromium([], pipe=True, timeout=60, what="hovering") as c:
        session = c.open_page(printout._file_url(html_path), width=1280)
        where = c.send("Runtime.evaluate", {"expression": f"{HOVER_AT}({selector!r}, {index})",
                                            "returnByValue": True}, session=session)  # fmt: skip
        x, y = json.loads(where["result"]["value"])
        c.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y},
               session=session)  # fmt: skip
        tip = "document.querySelector('.charttip').textContent"
        shown = c.send("Runtime.evaluate", {"expression": tip, "returnByValue": True},
                       session=session)  # fmt: skip
    return str(shown["result"]["value"])


def test_hovering_a_curve_point_and_a_second_shows_the_stored_values(
    store: Store, tmp_path: Path
) -> None:
    ((run, _),) = store.list_runs()
    model = report_for_run(store, run.id)
    html = write_report(model, tmp_path / "h.html", "html")
    panel = model.sections[0].panels[0]
    stored = next(p for p in store.points(run.id) if p.throughput() == panel.throughput[1])
    shown = _hover_text(html, "#workloads svg.chart:not(.timechart) rect.hover", 1)
    # a busy machine may flag the point (host-busy, a remark: † on its level): its tooltip
    # then says so, last
    lines = [line for line in shown.splitlines() if not line.startswith(("flagged: ", "† "))]
    mark = "†" if panel.remarks[1] else ""
    assert lines == [
        f"{panel.x_label}: {stored.workers}{mark}",
        f"{panel.mix_label}: {format_quantity(stored.throughput(), stored.unit)}",
        f"mean latency {format_latency(stored.metric('total', 'lat_mean_us'))}",
        f"p99 latency {format_latency(stored.metric('total', 'lat_p99_us'))}",
    ]
    ladder = next(t for t in model.timelines if t.series)
    first = min((p for p in store.points(run.id) if p.key.startswith(ladder.series + "/")),
                key=lambda p: p.seq)  # fmt: skip
    sample = store.samples(first.id)[0]
    value = (sample.read_iops or 0) + (sample.write_iops or 0)
    if first.unit == "MB/s":
        value = (sample.read_mbps or 0) + (sample.write_mbps or 0)
    shown = _hover_text(html, "#timelines details.series svg.timechart rect.hover", 0)
    assert shown.splitlines()[:2] == [
        "t = 0 s",
        f"{first.unit}: {format_quantity(value, first.unit)}",
    ]


def test_latency_distribution_from_merged_bins_agrees_with_the_stored_p99(
    store: Store, tmp_path: Path
) -> None:
    ((run, _),) = store.list_runs()
    model = report_for_run(store, run.id)
    assert {d.series for d in model.distributions} == {row.series for row in model.points}
    by_key = {p.key: p for p in store.points(run.id)}
    for d in model.distributions:
        p99 = d.percentiles.index("99")
        for line in d.lines:
            stored = by_key[f"{d.series}/{line.label}"].metric("total", "lat_p99_us")
            assert line.lat_mean_us[p99] == pytest.approx(stored, rel=1e-9)
            known = [v for v in line.lat_mean_us if v is not None]
            assert known == sorted(known)  # a percentile curve never falls
    html = write_report(model, tmp_path / "d.html", "html").read_text()
    assert html.count("latency percentiles") >= len(model.distributions)


def test_customer_order_page_numbers_and_contents(printed: dict[str, Path]) -> None:
    """Set-up first, then the summary, the charts, then the appendix (where the numbers came
    from, every note, the points, plan, job files); the PDF numbers its pages and carries an
    outline of the sections; the first chart is on page 3 at the latest."""
    pdf = printed["run"]
    html = pdf.with_suffix(".html").read_text()
    order = ['id="run"', 'id="summary"', 'id="workloads"', 'id="timelines"', 'id="appendix"',
             'id="provenance"', 'id="points"', 'id="plan"', 'id="jobs"']  # fmt: skip
    places = [html.index(anchor) for anchor in order]
    assert places == sorted(places)
    assert '<nav class="contents">' in html and APPENDIX in html
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout  # fmt: skip
    pages = len(re.findall(r"page \d+ of (\d+)", text))
    total = re.search(r"page 1 of (\d+)", text)
    assert total is not None and pages == int(total.group(1)) > 1
    assert b"/Outlines" in pdf.read_bytes()
    where = printout.outline_pages(pdf.read_bytes())
    assert where["Set-up"] == 1 <= where["Summary"] <= where["Workloads"] <= where[APPENDIX]
    assert where["Workloads"] <= 3, where
    first_chart = next(
        n for n in range(1, pages + 1) if _page_text(pdf, n).lstrip().startswith("Workloads")
    )  # its heading
    assert first_chart == where["Workloads"], where
    # the printed contents list gives each section's page (put in by the second print)
    first = " ".join(
        subprocess.run(
            ["pdftotext", "-layout", "-l", "1", str(pdf), "-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    )
    assert re.search(rf"\bjob files {where[APPENDIX]}\b", first), first[:600]
    assert re.search(rf"\bSummary {where['Summary']}\b", first), first[:600]


def _page_text(pdf: Path, page: int) -> str:
    return subprocess.run(["pdftotext", "-f", str(page), "-l", str(page), str(pdf), "-"],
                          capture_output=True, text=True, check=True).stdout  # fmt: skip


ZOOM_STATE = """
(function (selector) {
  var rect = document.querySelectorAll(selector)[0], svg = rect.ownerSVGElement;
  var zoom = svg.querySelector("g.zoom");
  var ticks = Array.prototype.map.call(svg.querySelectorAll("text.tick-x"),
                                       function (t) { return t.textContent; });
  return JSON.stringify([+(zoom.getAttribute("data-k") || 1), ticks,
                         svg.classList.contains("zoomed")]);
})
"""


def test_time_series_zoom_with_the_wheel_and_reset_with_a_double_click(
    store: Store, tmp_path: Path
) -> None:
    ((run, _),) = store.list_runs()
    html = write_report(report_for_run(store, run.id), tmp_path / "z.html", "html")
    selector = "#timelines details.series svg.timechart rect.hover"
    with printout._Chromium([], pipe=True, timeout=60, what="zooming") as c:
        session = c.open_page(printout._file_url(html), width=1280)

        def run_js(expression: str) -> object:
            got = c.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                         session=session)  # fmt: skip
            return json.loads(got["result"]["value"])

        x, y = run_js(f"{HOVER_AT}({selector!r}, 1)")  # type: ignore[misc]
        before = run_js(f"{ZOOM_STATE}({selector!r})")
        wheel = {"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": -120}
        for _ in range(3):  # three notches in: 1.25^3
            c.send("Input.dispatchMouseEvent", wheel, session=session)
        zoomed = run_js(f"{ZOOM_STATE}({selector!r})")
        for kind in ("mousePressed", "mouseReleased", "mousePressed", "mouseReleased"):
            c.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                "clickCount": 2 if kind.endswith("d") else 1},
                   session=session)  # fmt: skip
        reset = run_js(f"{ZOOM_STATE}({selector!r})")
    assert before[0] == 1 and not before[2]  # type: ignore[index]
    assert zoomed[0] > 1.9 and zoomed[2] and zoomed[1] != before[1]  # type: ignore[index]
    assert reset == before
