"""Report formats people hand on: Excel, Markdown, HTML with verdicts and provenance, and a
PDF and PNG printed by headless Chromium offline; from a small run of the test engine
(tests/fake_engine.py): the formats are the subject, not fio."""

from __future__ import annotations

import math
import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook
from openpyxl.worksheet.worksheet import Worksheet
from PIL import Image

from arraybench.errors import ArraybenchError
from arraybench.report.assemble import report_for_run
from arraybench.report.model import ReportModel, ReportTable, Timeline
from arraybench.report.pointstable import column_title
from arraybench.report.render.html.page import format_value, render_html
from arraybench.report.render.markdown.page import render_markdown
from arraybench.report.render.pdf import printout
from arraybench.report.render.xlsx.cells import sheet_title
from arraybench.report.render.xlsx.timelines import MAX_TIMELINE_ROWS, downsample
from arraybench.report.render.xlsx.workbook import workload_sheet_titles, write_xlsx
from arraybench.store.db import Store
from tests import pageerrors
from tests.conftest import main_cli, small_plan
from tests.fake_engine import PLAN_LINES, registered

pytestmark = [pytest.mark.xdist_group("formats")]  # module fixtures: one worker

needs_chromium = pytest.mark.skipif(
    shutil.which("chromium") is None and not Path(printout.CHROMIUM).exists(),
    reason="chromium is not installed (apt-get install chromium): no PDF, PNG or JS check",
)

TIMELINE_SAMPLES = 5000
EXCEL_PRECISION = 1e-15  # openpyxl writes 16 significant digits (Excel keeps 15)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _wave(i: int) -> float | None:
    """A 1-second IOPS series with a gap, one spike and one dip to survive downsampling."""
    if i == 1234:
        return None
    if i == 4321:
        return 250_000.0
    if i == 777:
        return 5.0
    return 50_000 + 20_000 * math.sin(i / 40)


@pytest.fixture(scope="module", autouse=True)
def _fake_engine() -> Iterator[None]:
    with registered():  # for the module's run and for its report (its stored plan names it)
        yield


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> ReportModel:
    """The model of a run (2 workloads x workers 1, 2: four 1-second points), with the
    parts a small run lacks added: provenance, verdicts, a long timeline and a table."""
    tmp = tmp_path_factory.mktemp("formats")
    results = tmp / "res"
    done = main_cli("run", str(small_plan(tmp, extra=PLAN_LINES)), "--results", str(results))
    assert done.returncode == 0, done.stderr
    store = Store(results, create=False)
    ((run, _),) = store.list_runs()
    model = report_for_run(store, run.id)
    assert len(model.points) == 4 and model.sections
    model.provenance += [
        ("fio version", model.engine_version),
        ("target " + model.targets[0], "file, 32 MiB, <tmpfs?> & 'quoted'"),
    ]
    model.verdicts.append(
        ReportTable(
            "Acceptance criteria",
            ["criterion", "measured", "verdict"],
            [["random read ≥ 1 IOPS", "many", "PASS"], ["p99 ≤ 1 µs", "more", "FAIL"]],
        )
    )
    n = TIMELINE_SAMPLES
    model.timelines = []  # the ladders' series are tested in e2e/test_report_pages.py
    model.timelines.append(
        Timeline(
            title="long write",
            t_s=[float(i) for i in range(n)],
            throughput_unit="IOPS",
            throughput=[_wave(i) for i in range(n)],
            lat_mean_us=[100.0 + i / 100 for i in range(n)],
            kernel=[49_000.0] * n,
            events=[(600.0, "cliff")],
            gb_written=[i * 0.25 for i in range(n)],
            findings=["cliff at 150 GB"],
        )
    )
    model.notes.append("a note worth a reader's eye")
    model.tables.append(
        ReportTable("Matrix", ["bs", "IOPS", "=1+1"], [["4k", "1234.5", "x|y"], ["8k", "-2", ""]])
    )
    return model


@pytest.fixture(scope="module")
def html_file(model: ReportModel, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(render_html(model), encoding="utf-8")
    return path


# ---------------------------------------------------------------- Excel


def _column(ws: Worksheet, col: int) -> list[Any]:
    return [ws.cell(r, col).value for r in range(1, ws.max_row + 1)]


def _title_text(title: Any) -> str:
    return "".join(run.t for p in title.tx.rich.p for run in (p.r or []))


def test_xlsx_sheets_numbers_and_native_charts(model: ReportModel, tmp_path: Path):
    path = tmp_path / "report.xlsx"
    write_xlsx(model, path)
    wb = load_workbook(path)
    titles = workload_sheet_titles(model)
    # Figures: every series' latency histogram (report/sections/histograms.py)
    assert wb.sheetnames == ["Summary", "Sheets", *titles, "Figures", "Points", "Tables",
                             "Timelines", "Provenance"]  # fmt: skip
    index = wb["Sheets"]  # the full names beside the abbreviated ones, linked
    assert [index.cell(4 + i, 1).value for i in range(len(titles))] == [
        s.title for s in model.sections]  # fmt: skip
    assert index.cell(4, 2).hyperlink.location.endswith("!A1")

    for section, title in zip(model.sections, titles, strict=True):
        ws = wb[title]
        assert ws["A1"].value == section.title
        heads = [r for r, v in enumerate(_column(ws, 1), start=1) if v == "level"]
        assert len(heads) == len(section.panels)
        assert len(ws._charts) == 2 * len(section.panels)
        quoted = "'" + title.replace("'", "''") + "'"
        for k, (panel, head) in enumerate(zip(section.panels, heads, strict=True)):
            first, last = head + 1, head + len(panel.x_values)
            for i in range(len(panel.x_values)):
                row = [ws.cell(first + i, c).value for c in range(1, 6)]
                assert row[0] == panel.x_ticks[i]
                want = [panel.x_values[i], panel.throughput[i], panel.lat_mean_us[i],
                        panel.lat_p99_us[i]]  # fmt: skip
                assert row[1:] == pytest.approx(want, rel=EXCEL_PRECISION)
                assert all(isinstance(v, int | float) for v in row[1:])
                marks = ws.cell(first + i, 6).value or ""
                assert ("optimal" in marks) == (i == panel.optimal_index)
                assert ("max" in marks) == (i == panel.max_index)
            throughput, latency = ws._charts[2 * k], ws._charts[2 * k + 1]
            levels = f"{quoted}!$A${first}:$A${last}"  # the real load levels as categories
            refs = [(s.cat.strRef.f if s.cat.strRef else s.cat.numRef.f, s.val.numRef.f)
                    for s in throughput.series]  # fmt: skip
            assert refs[0] == (levels, f"{quoted}!$C${first}:$C${last}")
            names = [s.tx.v for s in throughput.series]
            assert names[0].startswith("throughput") and names[-2:] == ["optimal", "max"]
            marks_col = refs[-2][1].split("!$")[1].split("$")[0]
            mark_cells = [ws[f"{marks_col}{first + i}"].value for i in range(len(panel.x_values))]
            assert [i for i, v in enumerate(mark_cells) if v is not None] == (
                [panel.optimal_index] if panel.optimal_index is not None else []
            )
            assert [(s.cat.strRef.f if s.cat.strRef else s.cat.numRef.f, s.val.numRef.f)
                    for s in latency.series] == [
                (levels, f"{quoted}!$D${first}:$D${last}"),
                (levels, f"{quoted}!$E${first}:$E${last}"),
            ]  # fmt: skip
            assert _title_text(throughput.x_axis.title) == panel.x_label
            assert _title_text(throughput.y_axis.title) == f"throughput ({panel.throughput_unit})"
            assert _title_text(latency.y_axis.title) == "latency (µs)"

    points = wb["Points"]
    header = [c.value for c in points[1]]
    assert header[:5] == ["Series", "Level", "Workers", "iodepth", "Targets"]
    assert header[5:] == [column_title(c) for c in model.point_columns]
    assert "Total p99.9 latency (µs)" in header and "kernel IOPS" in header
    assert points.max_row == len(model.points) + 1
    for r, p in enumerate(model.points, start=2):
        assert [points.cell(r, c).value for c in (1, 2, 3, 4)] == [
            p.series, p.level, p.workers, p.iodepth
        ]  # fmt: skip
        for c, name in enumerate(model.point_columns, start=6):
            cell, want = points.cell(r, c), p.values.get(name)
            if want is None:
                assert cell.value is None, (p.level, name)
            else:
                assert cell.value == pytest.approx(want, rel=EXCEL_PRECISION), (p.level, name)
                assert cell.data_type == "n"

    summary = wb["Summary"]
    texts = {v for row in summary.iter_rows(values_only=True) for v in row if v is not None}
    assert model.run_id in texts and model.engine_version in texts
    for row in model.summary:
        for cell in row.cells.values():
            assert {cell.optimal, cell.extremes, cell.bounded} <= texts
    verdicts = {
        c.value: c for row in summary.iter_rows() for c in row if c.value in ("PASS", "FAIL")
    }
    assert verdicts["PASS"].fill.fgColor.rgb.endswith("DCFCE7")
    assert verdicts["FAIL"].fill.fgColor.rgb.endswith("FEE2E2")
    assert model.notes[0] in texts

    tables = [list(r) for r in wb["Tables"].iter_rows(values_only=True)]
    assert ["4k", 1234.5, "x|y"] in [r[:3] for r in tables]
    assert ["bs", "IOPS", "=1+1"] in [r[:3] for r in tables]  # text, never a formula

    timeline = wb["Timelines"]
    assert timeline["A1"].value == "long write"
    values = [v for v in _column(timeline, 2)[3:] if v is not None]
    assert 0 < len(values) <= MAX_TIMELINE_ROWS
    assert max(values) == 250_000.0 and min(values) == 5.0  # the spike and the dip kept
    times = [v for v in _column(timeline, 1)[3:] if isinstance(v, float | int)]
    assert times == sorted(times) and times[0] == 0 and times[-1] == TIMELINE_SAMPLES - 1
    assert len(timeline._charts) == 3
    last = 3 + len(times)
    assert timeline._charts[0].series[0].xVal.numRef.f == f"'Timelines'!$A$4:$A${last}"
    assert timeline._charts[0].series[0].yVal.numRef.f == f"'Timelines'!$B$4:$B${last}"

    prov = wb["Provenance"]
    pairs = {(r[0], r[1]) for r in prov.iter_rows(values_only=True)}
    assert set(model.provenance) <= pairs and ("fio", model.engine_version) in pairs
    column = _column(prov, 1)
    lines = model.plan_yaml.splitlines()
    start = column.index("Plan (YAML)") + 1
    assert column[start : start + len(lines)] == lines  # indentation kept


def test_sheet_titles_valid_unique_and_short():
    used = {"summary", "points"}
    names = [
        "Summary",
        "Random 8 KiB · fe-rand-8k-read-with-a-very-long-name",
        "Random 8 KiB · fe-rand-8k-read-with-a-very-long-name",
        "a/b:c*d?[e]\\f",
        "'quoted'",
        "",
        "HISTORY",
    ]
    titles = [sheet_title(n, used) for n in names]
    assert len({t.lower() for t in titles}) == len(titles)
    assert not {t.lower() for t in titles} & {"points", "history"}
    for t in titles:
        assert 0 < len(t) <= 31 and not re.search(r"[\\/*?:\[\]]", t)
        assert not t.startswith("'") and not t.endswith("'")
    assert titles[0] == "Summary (2)"


def test_downsample_keeps_extremes_in_order():
    values: list[float | None] = [_wave(i) for i in range(TIMELINE_SAMPLES)]
    keep = downsample(values, 2000)
    assert len(keep) <= 2000 and keep == sorted(set(keep))
    assert keep[0] == 0 and keep[-1] == TIMELINE_SAMPLES - 1
    assert 4321 in keep and 777 in keep
    assert downsample(values[:100], 2000) == list(range(100))


# ---------------------------------------------------------------- Markdown and HTML


def test_markdown_has_summary_verdicts_panels_and_plan(model: ReportModel):
    text = render_markdown(model)
    assert text.startswith(f"# {model.title}\n")
    for row in model.summary:
        line = next(ln for ln in text.splitlines() if ln.startswith(f"| {row.workload} |"))
        for cell in row.cells.values():
            assert f"**{cell.optimal}**<br>{cell.extremes}" in line
    assert "| random read ≥ 1 IOPS | many | ✅ PASS |" in text
    assert "| p99 ≤ 1 µs | more | ❌ FAIL |" in text
    panel = model.sections[0].panels[0]
    assert f"| {panel.x_ticks[0]} | {format_value(panel.throughput[0])} |" in text
    assert f"```yaml\n{model.plan_yaml.rstrip()}\n```" in text
    assert "x\\|y" in text and "\\<tmpfs?\\>" in text  # escaped, tables stay tables
    assert model.notes[0] in text
    assert text.index("## Summary") < text.index("## Acceptance verdicts")
    # the order a customer reads: the notes box above the summary, the charts, the appendix
    assert text.index("## Notes") < text.index("## Summary") < text.index("## Workloads")
    assert text.index("## Workloads") < text.index("## Points") < text.index("## Provenance")


def test_html_renders_verdicts_and_provenance(model: ReportModel):
    page = render_html(model)
    assert '<section id="verdicts">' in page and '<section id="provenance">' in page
    assert '<td class="pass">PASS</td>' in page and '<td class="fail">FAIL</td>' in page
    assert "&lt;tmpfs?&gt; &amp; &#x27;quoted&#x27;" in page
    assert 'href="#verdicts"' in page and 'id="provenance"' in page  # part of the set-up
    bare = replace(model, verdicts=[], provenance=[])
    assert 'id="verdicts"' not in render_html(bare) and 'id="provenance"' not in render_html(bare)
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)


# ---------------------------------------------------------------- headless Chromium


def test_missing_chromium_is_a_clean_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setattr(printout.shutil, "which", lambda name: None)
    monkeypatch.setattr(printout, "CHROMIUM", str(tmp_path / "no-chromium"))
    with pytest.raises(ArraybenchError) as err:
        printout.chromium_binary()
    assert err.value.hint == "apt-get install chromium"
    with pytest.raises(ArraybenchError):
        printout.write_pdf(tmp_path / "missing.html", tmp_path / "x.pdf")


@pytest.mark.slow
@needs_chromium
def test_report_has_no_console_errors_and_a_broken_page_has(html_file: Path, tmp_path: Path):
    assert pageerrors.console_errors(html_file) == []
    broken = tmp_path / "broken.html"
    broken.write_text(
        "<!DOCTYPE html><html><body><p>x</p><script>"
        "console.log('fine'); document.body.appendChild(null.child);</script></body></html>"
    )
    errors = pageerrors.console_errors(broken)
    assert len(errors) == 1 and "TypeError" in errors[0] and broken.name in errors[0]


@pytest.mark.slow
@needs_chromium
def test_png_and_pdf_printed_offline(html_file: Path, tmp_path: Path):
    png = tmp_path / "report.png"
    printout.write_png(html_file, png, width=1200)
    assert png.read_bytes()[:8] == PNG_SIGNATURE
    with Image.open(png) as image:
        width, height = image.size
        colors = image.convert("L").getextrema()
    assert width == 1200 and height > 2000  # the whole page, not one window
    assert colors[0] < 100 < colors[1]  # text on a white page, not blank

    pdf = tmp_path / "out" / "report.pdf"
    printout.write_pdf(html_file, pdf)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-")
    pages = len(re.findall(rb"/Type\s*/Page\b", data))
    assert pages > 1 and len(data) > 20_000, (pages, len(data))
