"""AERODISK's controller CPU under the time chart: a real node-exporter's CPU (as the "array
controller") scraped by a real Prometheus, pulled by `array_monitor:` per point, drawn under
the point's time chart on the same time axis in HTML, PDF and xlsx; a plan that expects it
(`report.controller_cpu: expected`, the aerodisk template) says when none was collected, and
no other report mentions it."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import time
from pathlib import Path

import pytest
from openpyxl import load_workbook

from arraybench.cli import main
from arraybench.report.assemble import report_for_run
from arraybench.report.render.export import write_report
from arraybench.report.render.html.page import render_html
from arraybench.report.render.pdf import printout
from arraybench.report.sections.controllercpu import NO_CPU
from arraybench.store.db import Store
from tests.conftest import needs_fio, small_plan
from tests.fake_engine import PLAN_LINES
from tests.prom import node_exporter, prometheus, query_range

pytestmark = needs_fio
needs_prometheus = pytest.mark.skipif(
    shutil.which("prometheus") is None or shutil.which("prometheus-node-exporter") is None,
    reason="prometheus and prometheus-node-exporter are not installed",
)
CPU_QUERY = '100 * (1 - avg(irate(node_cpu_seconds_total{mode="idle"}[3s])))'
CHART = "rr/w2-qd2: IOPS and latency over time: array controller CPU"


def cpu_exporter() -> contextlib.AbstractContextManager[str]:
    """node-exporter with only its cpu collector: this machine's CPU as the controller's."""
    return node_exporter("--collector.cpu")


def _plan(
    tmp_path: Path, monitor: str, expected: bool = True, ramp: int = 3, duration: int = 6
) -> Path:
    report = "report: {controller_cpu: expected}\n" if expected else ""
    plan = small_plan(tmp_path, workers="[2]", extra=monitor + report,
                      workloads="  - {name: rr, pattern: random, bs: 4k, read: 100}\n")  # fmt: skip
    # AERODISK's form: the warm-up logged and drawn before the measured seconds
    timing = f"timing: {{ramp: {ramp}s, duration: {duration}s, log_ramp: true}}"
    plan.write_text(plan.read_text().replace("timing: {ramp: 0s, duration: 1s}", timing))
    return plan


def _axis_ticks(html: str, title: str) -> list[tuple[str, str]]:
    """The chart's x tick labels and where they are drawn (x)."""
    chart = html[html.rindex("<svg", 0, html.index(f"{title}</text>")) :]
    chart = chart[: chart.index("</svg>")]
    return re.findall(r'<text x="([\d.]+)"[^>]*class="tick-x"[^>]*>([^<]+)</text>', chart)


@needs_prometheus
def test_node_cpu_as_controller_cpu_under_the_time_chart(tmp_path: Path) -> None:
    with cpu_exporter() as exporter:
        targets = tmp_path / "targets.json"
        targets.write_text(json.dumps([{"targets": [exporter]}]))
        with prometheus(tmp_path, targets) as (base, _):
            for _ in range(60):  # irate needs two scrapes: CPU from the warm-up's first second
                if len(query_range(base, CPU_QUERY, time.time() - 5, time.time())) >= 4:
                    break
                time.sleep(0.5)
            monitor = (f"array_monitor:\n  prometheus:\n    url: {base}\n    lag: 2s\n"
                       f"    queries: {{cpu: '{CPU_QUERY}'}}\n")  # fmt: skip
            results = tmp_path / "res"
            assert main(["run", str(_plan(tmp_path, monitor)), "--results", str(results)]) == 0
            store = Store(results, create=False)
            run = store.list_runs()[0][0]
            model = report_for_run(store, run.id)
            (t,) = [t for t in model.timelines if t.controller_cpu is not None]
            assert t.controller_cpu is not None and t.shade is not None  # the warm-up drawn too
            # Prometheus' own answer for the same seconds: the values drawn are its values
            (point,) = store.points(run.id)
            zero = min(s.t for s in store.samples(point.id)) - t.t_s[-len(store.samples(point.id))]
            asked = dict(query_range(base, CPU_QUERY, zero - 1, zero + t.t_s[-1] + 1))
    drawn = [(round(zero + x), v) for x, v in zip(t.t_s, t.controller_cpu, strict=True)
             if v is not None]  # fmt: skip
    assert len(drawn) >= 6 and all(0 <= v <= 100 for _, v in drawn)
    # the warm-up's seconds have the controller's CPU too (the pull asks for them)
    assert any(
        x < t.shade[1] and v is not None for x, v in zip(t.t_s, t.controller_cpu, strict=True)
    )
    assert all(v == pytest.approx(asked[s]) for s, v in drawn if s in asked)
    assert NO_CPU not in t.findings
    html = render_html(model)
    title = f"{point.key}: IOPS and latency over time"
    assert f"{title}: array controller CPU</text>" in html
    # the same time axis: the CPU chart's x ticks are the time chart's, at the same x
    ticks = _axis_ticks(html, title)
    assert len(ticks) >= 3 and _axis_ticks(html, f"{title}: array controller CPU") == ticks
    assert "no controller CPU was collected" not in html
    write_report(model, tmp_path / "r.xlsx", "xlsx")
    ws = load_workbook(tmp_path / "r.xlsx")["Timelines"]
    header = [c.value for c in ws[3]]
    col = header.index("controller CPU (%)") + 1
    cells = [ws.cell(r, col).value for r in range(4, ws.max_row + 1)]
    assert [v for v in cells if v is not None] == pytest.approx([v for _, v in drawn])
    titles = [c.title.tx.rich.p[0].r[0].t for c in ws._charts if c.title and c.title.tx.rich]
    assert f"{title}: array controller CPU" in titles
    if shutil.which("chromium") or Path(printout.CHROMIUM).exists():
        write_report(model, tmp_path / "r.pdf", "pdf")
        text = " ".join(printout._pdf_text((tmp_path / "r.pdf").read_bytes()).split())
        assert "array controller CPU" in text


@pytest.mark.usefixtures("fake_engine")  # the third run's (no monitor: the report's note)
def test_command_source_cpu_drawn_and_missing_cpu_said_only_where_expected(
    tmp_path: Path,
) -> None:
    script = tmp_path / "array-stats"
    script.write_text("#!/bin/sh\necho 'time,iops,cpu'\nwhile true; do\n"
                      "  echo \"$(date +%s.%N),5000,37\"; sleep 0.5\ndone\n")  # fmt: skip
    script.chmod(0o755)
    results = tmp_path / "res"
    with_cpu = _plan(tmp_path, f"array_monitor:\n  command: [{script}]\n")
    assert main(["run", str(with_cpu), "--results", str(results)]) == 0
    only_iops = tmp_path / "iops-only"
    only_iops.write_text(script.read_text().replace("time,iops,cpu", "time,iops")
                         .replace(",5000,37", ",5000"))  # fmt: skip
    only_iops.chmod(0o755)
    # a few seconds do: the source's lines lack a cpu column whatever their number
    plan = _plan(tmp_path, f"array_monitor:\n  command: [{only_iops}]\n", ramp=1, duration=2)
    assert main(["run", str(plan), "--results", str(results)]) == 0
    # no array monitor at all: the report is the subject, the run the test engine's
    plain = _plan(tmp_path, PLAN_LINES, expected=False)
    assert main(["run", str(plain), "--results", str(results)]) == 0
    store = Store(results, create=False)
    runs = sorted((r for r, _ in store.list_runs()), key=lambda r: r.started)
    models = [report_for_run(store, r.id) for r in runs]
    drawn = [t for t in models[0].timelines if t.controller_cpu is not None]
    assert drawn and {v for v in drawn[0].controller_cpu or [] if v is not None} == {37.0}
    assert NO_CPU not in drawn[0].findings
    write_report(models[0], tmp_path / "r.md", "md")
    assert "array controller CPU: mean 37 %, max 37 %" in (tmp_path / "r.md").read_text()
    # expected (the aerodisk template's report.controller_cpu) and not collected: said
    assert [NO_CPU in t.findings for t in models[1].timelines] == [True]
    assert "no controller CPU was collected" in render_html(models[1])
    # not expected: never said
    assert "no controller CPU" not in render_html(models[2])
    assert models[2].timelines and all(t.controller_cpu is None for t in models[2].timelines)
