"""Each seed report's own figure forms, found by title and by their numbers in the HTML, the
Excel workbook and the PDF text of small real runs (issue 27): CSCS's bars per operation and
set-up and its metadata bars; HUS VM's IOPS, MB/s and latency against numjobs per block size and
its write cliff in MB/s over time."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from openpyxl import load_workbook

from arraybench.report.assemble import report_for_run
from arraybench.report.charts.figures import series_colour
from arraybench.report.model import Figure, ReportModel
from arraybench.report.render.export import write_report
from arraybench.report.render.html.page import render_html
from arraybench.report.render.pdf import printout
from arraybench.store.db import Store
from arraybench.units import format_ops, format_tick
from tests.conftest import main_cli, needs_fio
from tests.fake_engine import PLAN_LINES

# the figure forms are the subject: the runs are the test engine's (tests/fake_engine.py),
# but for CSCS's metadata test, which only fio runs
on_fake = pytest.mark.usefixtures("fake_engine")
needs_chromium = pytest.mark.skipif(
    shutil.which("chromium") is None and not Path(printout.CHROMIUM).exists(),
    reason="chromium is not installed",
)

SETUPS = (
    PLAN_LINES
    + """\
name: setups
targets:
  - path: {dir}/t.dat
    size: 32m
timing: {{ramp: 0s, duration: 1s}}
load: {{pairs: [[1, 2]]}}
scenarios: [{{name: wb}}, {{name: wt}}]
workloads:
  - {{name: iops-4k-read, group: "IOPS: random 4 KiB", pattern: random, bs: 4k, read: 100}}
  - {{name: iops-4k-write, group: "IOPS: random 4 KiB", pattern: random, bs: 4k, read: 0}}
"""
)

HUS = (
    PLAN_LINES
    + """\
name: hus
targets:
  - path: {dir}/t.dat
    size: 32m
timing: {{ramp: 0s, duration: 1s}}
load: {{workers: [1, 2, 4], iodepth: [1]}}
workloads:
  - {{name: g1-cliff-4k, group: "Group 1: write cliff 4 KiB", pattern: random, bs: 4k, read: 0,
      analysis: [cliff], load: {{pairs: [[2, 4]]}}, timing: {{ramp: 0s, duration: 4s}}}}
  - {{name: g2-read-4k, group: "Group 2: read, sync, 4K", chart: "Group 2: read, sync",
      pattern: random, bs: 4k, read: 100, ioengine: psync}}
  - {{name: g2-read-64k, group: "Group 2: read, sync, 64K", chart: "Group 2: read, sync",
      pattern: random, bs: 64k, read: 100, ioengine: psync}}
"""
)


def _run(tmp_path: Path, *args: str) -> ReportModel:
    results = tmp_path / "res"
    done = main_cli("run", *args, "--results", str(results))
    assert done.returncode == 0, done.stderr
    store = Store(results, create=False)
    ((run, _),) = store.list_runs()
    return report_for_run(store, run.id)


def _plan(tmp_path: Path, text: str) -> str:
    path = tmp_path / "plan.yaml"
    path.write_text(text.format(dir=tmp_path))
    return str(path)


def _figure(model: ReportModel, title: str) -> Figure:
    return next(f for f in model.figures if f.title == title)


def _in_html(html: str, fig: Figure) -> None:
    """The figure's chart by its title, and its numbers in the hover texts or the labels."""
    at = html.index(f"{fig.title}</text>") if f"{fig.title}</text>" in html else -1
    assert at >= 0, fig.title
    chart = html[html.rindex("<svg", 0, at) : html.index("</svg>", at)]
    value = next(v for s in fig.series for v in s.values if v)
    assert format_tick(value, fig.unit) in chart or f"{value:,.0f}"[:3] in chart, fig.title


def _html(model: ReportModel, fig: Figure) -> str:
    """The report's HTML, with ``fig`` found in it (`_in_html`)."""
    html = render_html(model)
    _in_html(html, fig)
    return html


def _xlsx_values(model: ReportModel, tmp_path: Path) -> tuple[list[str], list[float]]:
    """The texts and the numbers of the report's Excel "Figures" sheet (written to r.xlsx)."""
    write_report(model, tmp_path / "r.xlsx", "xlsx")
    ws = load_workbook(tmp_path / "r.xlsx")["Figures"]
    texts = [c.value for row in ws.iter_rows() for c in row if isinstance(c.value, str)]
    numbers = [c.value for row in ws.iter_rows() for c in row if isinstance(c.value, float)]
    return texts, numbers


@on_fake
def test_cscs_bars_per_operation_one_bar_per_setup(tmp_path: Path) -> None:
    model = _run(tmp_path, _plan(tmp_path, SETUPS))
    fig = _figure(model, "IOPS: random 4 KiB: IOPS per operation")
    assert fig.form == "bars" and fig.x_ticks == ["Read", "Write"]
    assert [s.label for s in fig.series] == ["wb", "wt"]  # one bar per set-up
    read_wb = next(p for p in model.points if p.record.get("key") == "wb/iops-4k-read/w1-qd2")
    assert fig.series[0].values[0] == pytest.approx(read_wb.values["total_iops"])
    assert 'data-form="bars"' in _html(model, fig)
    texts, numbers = _xlsx_values(model, tmp_path)
    assert fig.title in texts and "wb (IOPS)" in texts
    assert any(v == pytest.approx(fig.series[1].values[1]) for v in numbers)
    chart = load_workbook(tmp_path / "r.xlsx")["Figures"]._charts[0]
    assert chart.tagname == "barChart" and len(chart.series) == 2


@needs_fio
@needs_chromium
def test_cscs_metadata_bars_and_pdf_text(tmp_path: Path) -> None:
    model = _run(tmp_path, "cscs", "--scale", "0.02", "--set", "load.pairs=[[2,2]]", "--set",
                 "metadata.threads=[1,2]", "--set", "metadata.files_per_thread=20", "--only",
                 "iops-*")  # fmt: skip
    meta = _figure(model, "Metadata test: operations per second by threads")
    assert meta.form == "bars" and meta.x_ticks == ["1", "2"]
    # fio 3.33 has no directory engines: `auto` fell back to fio, which left them out
    assert [s.label for s in meta.series] == ["File creation", "File stat", "File removal"]
    _html(model, meta)
    # the one-level workloads are bars now, not sections of one-dot "curves"
    assert _figure(model, "IOPS: random 4 KiB: IOPS per operation").series[0].label == "this set-up"
    assert not model.sections
    write_report(model, tmp_path / "r.pdf", "pdf")
    text = printout._pdf_text((tmp_path / "r.pdf").read_bytes())
    squeezed = re.sub(r"\s+", " ", text)
    assert "Metadata test: operations per second by threads" in squeezed
    assert "IOPS per operation" in squeezed


@on_fake
def test_hus_vm_triples_against_numjobs_and_cliff_mbps(tmp_path: Path) -> None:
    model = _run(tmp_path, _plan(tmp_path, HUS))
    titles = [f.title for f in model.figures]
    for what in ("IOPS", "MB/s", "mean latency"):
        fig = _figure(model, f"Group 2: read, sync: {what}")
        assert fig.form == "lines" and fig.x_ticks == ["1", "2", "4"] and fig.log_x
        assert [s.label for s in fig.series] == ["4 KiB", "64 KiB"]  # one line per bs
    mbps = _figure(model, "Group 2: read, sync: MB/s")
    point = next(p for p in model.points if p.record.get("key") == "g2-read-64k/w2-qd1")
    assert mbps.series[1].values[1] == pytest.approx(point.values["total_mbps"])
    # the dual-axis overlay and the per-bs sections they replace are gone
    assert not [o for o in model.overlays if o.title == "Group 2: read, sync"]
    assert not [s for s in model.sections if s.title.startswith("Group 2")]
    cliff = _figure(model, "g1-cliff-4k/w2-qd4: MB/s over time")
    assert cliff.form == "time" and cliff.series[0].x and len(cliff.series[0].x) >= 3
    html = render_html(model)
    for title in titles:  # each chart named whole (its SVG title, the file --charts writes)
        assert f"<title>{title}" in html, title
    # drawn under its group's heading without saying the heading again
    assert "<h3>Group 2: read, sync</h3>" in html and 'font-weight="700">IOPS</text>' in html
    assert 'font-weight="700">Group 2: read, sync: IOPS</text>' not in html
    assert "numjobs (iodepth 1) (log2 scale)" in html
    texts, numbers = _xlsx_values(model, tmp_path)
    assert "Group 2: read, sync: MB/s" in texts and "64 KiB (MB/s)" in texts
    assert any(v == pytest.approx(point.values["total_mbps"]) for v in numbers)


def test_excel_marks_have_their_own_colours_and_names_keep_the_end(tmp_path: Path) -> None:
    """LibreOffice draws a marks-only series' markers only with their own fill and outline
    (checked by rendering with LibreOffice headless; here the XML that makes it so)."""
    from arraybench.report.render.xlsx.cells import sheet_title
    from arraybench.report.render.xlsx.figures import visible_marker

    marker = visible_marker("diamond", "1A7F37", 10)
    assert marker.graphicalProperties.solidFill.srgbClr == "1A7F37"
    assert marker.graphicalProperties.line.solidFill.srgbClr == "1A7F37"
    used: set[str] = set()
    names = [sheet_title(f"Group 2: 100 % random write, async qd{d}, {bs}", used)
             for d in (32, 64) for bs in ("1K", "8K", "1M")]  # fmt: skip
    assert len(set(names)) == 6 and all(len(n) <= 31 and "(" not in n for n in names)
    assert names[0] == "G2 100% rand wr async qd32 1K"  # was "Group 2- 100 % random write"


@on_fake
def test_two_dimensional_sweep_is_a_heat_map(tmp_path: Path) -> None:
    plan = (f"{PLAN_LINES}name: heat\ntargets:\n  - path: {tmp_path}/t.dat\n    size: 32m\n"
            "timing: {ramp: 0s, duration: 1s}\nload: {workers: [1, 2], iodepth: [1, 4]}\n"
            "workloads:\n  - {name: rr-4k, pattern: random, bs: 4k, read: 100}\n")  # fmt: skip
    (tmp_path / "plan.yaml").write_text(plan)
    model = _run(tmp_path, str(tmp_path / "plan.yaml"))
    fig = _figure(model, "rr-4k: IOPS by iodepth and workers")
    assert fig.form == "heatmap" and fig.x_ticks == ["1", "2"]
    assert [s.label for s in fig.series] == ["qd 1", "qd 4"]
    point = next(p for p in model.points if p.record.get("key") == "rr-4k/w2-qd4")
    assert fig.series[1].values[1] == pytest.approx(point.values["total_iops"])
    assert 'data-form="heatmap"' in _html(model, fig)
    texts, numbers = _xlsx_values(model, tmp_path)
    assert fig.title in texts and "qd 4" in texts
    assert any(v == pytest.approx(point.values["total_iops"]) for v in numbers)


@on_fake
def test_compare_marks_each_runs_optimal_and_max_and_names_each_iodepth(tmp_path: Path) -> None:
    results = tmp_path / "res"
    for depth in (1, 4):
        plan = (f"{PLAN_LINES}name: qd{depth}\nscenario: qd{depth}\n"
                f"targets:\n  - path: {tmp_path}/t.dat\n    size: 32m\n"
                "timing: {ramp: 0s, duration: 1s}\n"
                f"load: {{workers: [1, 2], iodepth: [{depth}]}}\n"
                "workloads:\n  - {name: rr-4k, pattern: random, bs: 4k, read: 100}\n")  # fmt: skip
        (tmp_path / f"qd{depth}.yaml").write_text(plan)
        done = main_cli("run", str(tmp_path / f"qd{depth}.yaml"), "--results", str(results))
        assert done.returncode == 0, done.stderr
    runs = sorted(r.id for r, _ in Store(results, create=False).list_runs())
    html = tmp_path / "cmp.html"
    done = main_cli("compare", f"{runs[0]}:qd1", f"{runs[1]}:qd4", "--results", str(results),
                    "-o", str(html))  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = html.read_text()
    assert "workers per host (qd1 iodepth 1; qd4 iodepth 4)" in text  # not "(iodepth 1)"
    assert "(iodepth 1)</text>" not in text
    chart = text[text.index('aria-label="rr-4k: against') :]
    chart = chart[: chart.index("</svg>")]
    # one ring (optimal) and one triangle (max) per run's line, from analysis.curves
    assert chart.count("mark-optimal") == 2 and chart.count("mark-max") == 2


@on_fake
@needs_chromium
def test_compare_bars_per_setup_at_optimal_and_max(tmp_path: Path) -> None:
    from arraybench.report.compare import compare, load_scenario

    results = tmp_path / "res"
    for name in ("ctrl-a", "ctrl-b"):
        plan = (f"{PLAN_LINES}name: {name}\nscenario: {name}\n"
                f"targets:\n  - path: {tmp_path}/t.dat\n    size: 32m\n"
                "timing: {ramp: 0s, duration: 1s}\n"
                "load: {workers: [1, 2, 4], iodepth: [1]}\n"
                "workloads:\n  - {name: rr-4k, pattern: random, bs: 4k, read: 100}\n"
                "  - {name: sw-1m, pattern: sequential, bs: 1m, read: 0}\n")  # fmt: skip
        (tmp_path / f"{name}.yaml").write_text(plan)
        done = main_cli("run", str(tmp_path / f"{name}.yaml"), "--results", str(results))
        assert done.returncode == 0, done.stderr
    store = Store(results, create=False)
    runs = sorted(r.id for r, _ in store.list_runs())
    scenarios = [load_scenario(store, f"{runs[0]}:A"), load_scenario(store, f"{runs[1]}:B")]
    model = compare(scenarios)
    bars = [f for f in model.figures if f.group.startswith("Per set-up")]
    assert [f.title for f in bars] == ["IOPS per set-up: optimal point and maximum",
                                       "MB/s per set-up: optimal point and maximum"]  # fmt: skip
    iops = bars[0]
    assert iops.form == "bars" and iops.x_ticks == ["rr-4k"]
    assert [s.label for s in iops.series] == ["A · optimal", "B · optimal", "A · max", "B · max"]
    # the bars are the comparison table's own figures: each set-up's headline
    for i, s in enumerate(scenarios):
        curve = [p for p in s.points if p.workload == "rr-4k"]
        head = s.summary(sorted(curve, key=lambda p: p.workers))
        assert head.maximum and head.optimal
        assert iops.series[2 + i].values == [pytest.approx(head.maximum.throughput)]
        assert iops.series[i].values == [pytest.approx(head.optimal.throughput)]
    html = render_html(model)
    _in_html(html, iops)
    assert "Per set-up: optimal point and maximum" in html
    # a set-up keeps one colour in both roles, its optimal bar lighter; two set-ups differ
    colours = [series_colour(j, s) for j, s in enumerate(iops.series)]
    assert colours[2] != colours[3] and colours[0] not in colours[2:]
    full = [series_colour(j, replace(s, light=False)) for j, s in enumerate(iops.series[:2])]
    assert full == colours[2:] and all(s.light for s in iops.series[:2])
    for c in colours:
        assert f'fill="{c}"' in html
    texts, numbers = _xlsx_values(model, tmp_path)
    assert iops.title in texts and "B · max" in " ".join(texts)
    assert any(v == pytest.approx(iops.series[3].values[0]) for v in numbers)
    write_report(model, tmp_path / "c.pdf", "pdf")
    text = printout._pdf_text((tmp_path / "c.pdf").read_bytes())
    assert "IOPS per set-up: optimal point and maximum" in " ".join(text.split())


MDTEST = Path(__file__).resolve().parents[3] / "shared" / "tools" / "ior-4.0.0" / "mdtest"
needs_mdtest = pytest.mark.skipif(
    not MDTEST.exists() or shutil.which("mpirun") is None,
    reason=f"mdtest ({MDTEST}) or mpirun (Debian's openmpi-bin) is not installed",
)


@needs_fio
@needs_chromium
@needs_mdtest
def test_cscs_with_mdtest_draws_its_metadata_figures_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mdtest on PATH: cscs's `engine: auto` runs it; ops/s per operation against tasks, as
    bars (every operation) and lines (directories, files), in HTML, xlsx, Markdown and PDF,
    each figure the findings' SUMMARY means."""
    monkeypatch.setenv("PATH", f"{MDTEST.parent}:{os.environ['PATH']}")
    model = _run(tmp_path, "cscs", "--scale", "0.02", "--set", "load.pairs=[[2,2]]", "--set",
                 "metadata.threads=[1,2,4]", "--set", "metadata.files_per_thread=10", "--only",
                 "iops-4k-read")  # fmt: skip
    bars = _figure(model, "Metadata test: operations per second by tasks")
    dirs = _figure(model, "Metadata test: create operations per second by tasks")
    files = _figure(model, "Metadata test: remove operations per second by tasks")
    stat = _figure(model, "Metadata test: stat operations per second by tasks")
    assert (bars.form, dirs.form, files.form, stat.form) == ("bars", "lines", "lines", "lines")
    assert bars.x_ticks == dirs.x_ticks == ["1", "2", "4"] and bars.x_label == "tasks per node"
    assert [s.label for s in dirs.series] == ["Directory creation", "File creation"]
    assert [s.label for s in files.series] == ["Directory removal", "File removal"]
    assert [s.label for s in bars.series] == ["Directory creation", "Directory stat",
                                              "Directory removal", "File creation", "File stat",
                                              "File removal"]  # fmt: skip
    store = Store(tmp_path / "res", create=False)
    ((run, _),) = store.list_runs()
    means = {(r["op"], f.data["threads"]): r["ops_per_s"]
             for f in store.findings(run.id, "metadata") for r in f.data["rows"]}  # fmt: skip
    assert all(f.data["rows"][0]["tool"] == "mdtest" for f in store.findings(run.id, "metadata"))
    assert dirs.series[1].values == [means[("create", t)] for t in (1, 2, 4)]
    assert bars.series[4].values == [means[("stat", t)] for t in (1, 2, 4)]
    assert not [f for f in model.figures if "latency" in f.title and "Metadata" in f.title]
    html = _html(model, bars)
    for lines in (dirs, files):  # the lines' hover texts give each value as ops/s
        drawn = lines.title.removeprefix(f"{lines.group}: ")  # under its group's heading
        at = html.index(f"{drawn}</text>")
        chart = html[html.rindex("<svg", 0, at) : html.index("</svg>", at)]
        assert f"{lines.series[0].label}: {format_ops(lines.series[0].values[-1])}" in chart
    texts, numbers = _xlsx_values(model, tmp_path)
    assert dirs.title in texts and files.title in texts
    assert any(v == pytest.approx(files.series[1].values[2]) for v in numbers)
    write_report(model, tmp_path / "r.md", "md")
    markdown = (tmp_path / "r.md").read_text()
    assert bars.title in markdown and files.title in markdown
    write_report(model, tmp_path / "r.pdf", "pdf")
    squeezed = re.sub(r"\s+", " ", printout._pdf_text((tmp_path / "r.pdf").read_bytes()))
    assert dirs.title in squeezed and "Metadata test (mdtest): operations per second" in squeezed
