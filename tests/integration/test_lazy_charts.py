"""A big run's report (above LAZY_CHARTS curve charts) carries its curve charts as one data
block, drawn by the page when seen: no inline SVG per chart past the first INLINE_FIRST, a
page that loads clean in headless Chromium, and a chart drawn there that says what the inline
chart of the same panel says (its hover texts and its points).

The store is benchmarks/scale.py's synthetic one, small; the thresholds are lowered so that
its few panels count as a big run (a real one needs ~8,000 points to pass LAZY_CHARTS)."""

from __future__ import annotations

import html
import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from arraybench import console
from arraybench.report.render.chartfiles import export
from arraybench.report.render.html import lazycharts
from arraybench.report.render.pdf.printout import _Chromium, _file_url
from tests.conftest import main_cli
from tests.pageerrors import _errors

SCALE = Path(__file__).resolve().parents[2] / "benchmarks" / "scale.py"
DATA = re.compile(r'<script type="application/json" id="chart-data">(.*?)</script>', re.S)
HEATMAP = re.compile(r'<svg class="chart figure" data-form="heatmap".*?</svg>', re.S)
CELL = re.compile(r'<rect class="cell"[^>]*fill="(#[0-9a-f]{6})"[^>]*/><text[^>]*>([^<]*)</text>')
TIPS = re.compile(r"data-tips='([^']*)'")


def _scale() -> Any:
    spec = importlib.util.spec_from_file_location("scale_bench", SCALE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_big_run_prints_a_bounded_part_of_its_tables(
    store: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console, "PRINTED_CELLS", 20)  # the summary's 12 rows x 5 columns pass
    printed: list[str] = []
    _report(store, tmp_path / "r.html", printed)
    said = re.findall(r"\(a big run: (\d+) more summary rows and (\d+) more table\(s\) in the "
                      r"report, not printed here\)", printed[0])  # fmt: skip
    assert said and int(said[0][0]) > 0 and int(said[0][1]) > 0
    assert "Maximum recorded" not in printed[0]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    results = tmp_path_factory.mktemp("lazy") / "results"
    built = _scale().build_store(results, 480, 30, 2, 3)  # 3 workloads x 4 devices: 12 panels
    return results, built.run_id


def _report(store: tuple[Path, str], out: Path, printed: list[str] | None = None) -> str:
    results, run_id = store
    done = main_cli("report", run_id, "--results", str(results), "-o", str(out))
    assert done.returncode == 0, done.stderr
    if printed is not None:
        printed.append(done.stdout)
    return out.read_text(encoding="utf-8")


def _curve_tips(text: str) -> list[list[str]]:
    """The hover texts of each inline curve chart of the workloads' sections, in order."""
    start = text.index('<div id="workloads">')
    part = text[start : text.index("<section id=", start)]
    return [json.loads(html.unescape(t)) for t in TIPS.findall(part)]


PRINTED = """JSON.stringify([
  document.querySelectorAll("#workloads svg.chart:not(.drawn)").length,
  Array.prototype.filter.call(document.querySelectorAll("figure.panel.lazy"),
                              function (f) { return f.offsetParent !== null; }).length,
  document.body.innerText.indexOf("The printout carries the first 1 curve charts") >= 0])"""


def test_a_small_report_has_no_block(store: tuple[Path, str], tmp_path: Path) -> None:
    printed: list[str] = []
    text = _report(store, tmp_path / "small.html", printed)
    assert "a big run" not in printed[0] and "Maximum recorded" in printed[0]
    assert "chart-data" not in text and 'figure class="panel lazy"' not in text


def test_a_big_report_draws_its_charts_on_demand(
    store: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = _report(store, tmp_path / "small.html")
    inline, heatmaps = _curve_tips(small), HEATMAP.findall(small)
    assert len(inline) >= 8 and len(heatmaps) >= 3
    monkeypatch.setattr(lazycharts, "LAZY_CHARTS", 2)
    monkeypatch.setattr(lazycharts, "INLINE_FIRST", 1)
    page = tmp_path / "big.html"
    text = _report(store, page)
    blocks = DATA.findall(text)
    assert len(blocks) == 1
    data = json.loads(blocks[0])
    lazy = text.count('<figure class="panel lazy" data-kind="curve"')
    assert lazy == len(data["panels"]) == len(inline) - 1  # one inline, the rest in the block
    assert len(_curve_tips(text)) == 1  # no inline SVG for the others
    assert len(data["heatmaps"]) == len(heatmaps) - 1 and len(HEATMAP.findall(text)) == 1
    results, run_id = store  # `--charts` still writes every chart as a file
    charts = tmp_path / "charts"
    drawn: list[str] = []  # their PNGs are test_chart_export's (39 here: 9 CPU-s of Chromium)
    monkeypatch.setattr(export, "_pngs", lambda cs, folder: drawn.extend(c.name for c in cs) or [])
    done = main_cli("report", run_id, "--results", str(results), "-o", str(tmp_path / "c.html"),
                    "--charts", str(charts))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(list(charts.glob("curve-*.svg"))) == len(inline)
    assert len(list(charts.glob("heatmap-*.svg"))) == len(heatmaps)
    assert sorted(drawn) == sorted(p.stem for p in charts.glob("*.svg"))  # each one drawn
    assert shutil.which("chromium"), "chromium is the report's PDF/PNG renderer"
    with _Chromium([], pipe=True, timeout=60, what="the big report") as c:
        session = c.open_page(_file_url(page))
        probe = """(function () {
          var figs = document.querySelectorAll("figure.panel.lazy[data-kind=curve]");
          var maps = document.querySelectorAll("figure.panel.lazy[data-kind=heatmap]");
          var map = maps[maps.length - 1];
          map.querySelector("button.draw").click();
          var cells = Array.prototype.map.call(map.querySelectorAll("rect.cell"), function (r) {
            return [r.getAttribute("fill"), r.nextSibling.textContent];
          });
          var last = figs[figs.length - 1];
          var before = document.querySelectorAll("svg.chart.drawn").length;
          last.scrollIntoView();
          return new Promise(function (done) { setTimeout(function () {
            var svg = last.querySelector("svg.chart");
            last.querySelector("button.table").click();
            done(JSON.stringify({before: before, figs: figs.length, cells: cells,
              tips: svg && JSON.parse(svg.querySelector("rect.hover").getAttribute("data-tips")),
              dots: svg && svg.querySelectorAll("circle.dot").length,
              rows: last.querySelectorAll("table tr").length}));
          }, 300); });
        })()"""
        got = c.send("Runtime.evaluate", {"expression": probe, "awaitPromise": True,
                                          "returnByValue": True}, session=session)  # fmt: skip
        c.send("Emulation.setEmulatedMedia", {"media": "print"}, session=session)
        printed = c.send("Runtime.evaluate", {"expression": PRINTED, "returnByValue": True},
                         session=session)  # fmt: skip
        c.pump_until(lambda: False, limit=0.3)
        errors = _errors(c.events)
    out = json.loads(got["result"]["value"])
    assert errors == []
    assert out["figs"] == lazy and out["before"] < lazy  # not all drawn at load
    # on paper: the inline chart only, and a line that says where the others are
    assert json.loads(printed["result"]["value"]) == [1, 0, True]
    assert out["cells"] and out["cells"] == [list(c) for c in CELL.findall(heatmaps[-1])]
    assert out["tips"] == inline[-1]  # the same hover texts as the inline chart
    assert out["dots"] == len(inline[-1]) and out["rows"] == len(inline[-1]) + 1
