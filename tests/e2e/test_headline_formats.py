"""A small plan with two scenarios through `arraybench run` (the test engine, tests/fake_engine.py:
the headline's choice is the subject, not fio):
one series' maximum, optimal point and minimum latency read back from the terminal table at
the end of the run, the HTML summary, the scenario table, Markdown, the xlsx cells and
`compare`, each format giving one number (issue 25: one headline per series)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from openpyxl import load_workbook

from arraybench.report.sections.headlines import stored_headlines
from arraybench.store.db import Store
from arraybench.units import format_latency, format_pct, format_throughput
from tests.conftest import main_cli
from tests.fake_engine import PLAN_LINES

pytestmark = [pytest.mark.usefixtures("fake_engine")]


def _plan(tmp_path: Path) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(
        f"{PLAN_LINES}name: avail\n"
        f"targets: [{{path: {tmp_path / 't.dat'}, size: 16m}}]\n"
        "timing: {ramp: 0s, duration: 1s}\n"
        "load: {workers: [1, 2], iodepth: [1]}\n"
        "workloads: [{name: fw, pattern: random, bs: 8k, read: 0}]\n"
        "scenarios:\n  - {name: base, label: all paths}\n  - {name: down, label: one path}\n"
    )
    return path


def _found(pattern: str, text: str) -> set[str]:
    return set(re.findall(pattern, " ".join(text.split())))


def test_one_series_states_one_maximum_optimal_and_min_latency_everywhere(
    tmp_path: Path,
) -> None:
    results = tmp_path / "res"
    html, md, xlsx = tmp_path / "r.html", tmp_path / "r.md", tmp_path / "r.xlsx"
    ran = main_cli("run", str(_plan(tmp_path)), "--results", str(results), "-o", str(html),
                   "-o", str(md), "-o", str(xlsx))  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    store = Store(results, create=False)
    [(run, _)] = store.list_runs()
    points = store.points(run.id)
    heads = stored_headlines(run, points, store.findings(run.id))
    store.close()
    base, down = heads["base · fw"], heads["down · fw"]
    assert down.maximum and down.optimal and down.min_latency and base.maximum
    mx = format_throughput(down.maximum.throughput, "IOPS")
    opt = f"{format_throughput(down.optimal.throughput, 'IOPS')} @ "
    opt += format_latency(down.optimal.lat_mean_us)
    low = format_latency(down.min_latency.lat_mean_us)
    impact = format_pct((down.maximum.throughput - base.maximum.throughput)
                        / base.maximum.throughput * 100, signed=True)  # fmt: skip
    # the summary (terminal, HTML, Markdown): `OPT` bold, then `MAX max, LOW min` (a top-level
    # maximum still rising: `MAX max (top level, may not be saturated), LOW min`)
    summary = re.escape(mx) + r" max( \([^)]*\))?, " + re.escape(low) + " min"
    assert _found(summary, ran.stdout), ran.stdout  # the terminal's result table
    for text in (html.read_text(), md.read_text()):
        assert _found(summary, text) and opt in text
    # the scenario table: `MAX Max IMPACT; optimal OPT IMPACT'`
    cell = f"{mx} Max {impact}; optimal {opt}"
    markdown = md.read_text()
    assert cell in " ".join(markdown.split()), markdown
    assert cell in " ".join(html.read_text().split())
    values = [str(c.value) for ws in load_workbook(xlsx) for r in ws.iter_rows() for c in r
              if c.value is not None]  # fmt: skip
    assert any(v.startswith(cell) for v in values), values
    assert any(re.match(summary, v) for v in values)  # the summary sheet
    assert any(v == opt or v.startswith(opt) for v in values)
    # compare: the same maximum, optimal point, min latency and delta
    shown = main_cli("compare", "--results", str(results), f"{run.id}:base", f"{run.id}:down")
    assert shown.returncode == 0, shown.stderr
    row = re.escape(f"fw │ down │ {mx} │ {impact}") + r"[^│]*│ " + re.escape(opt)
    row += r" │[^│]*│ " + re.escape(low)
    assert re.search(row, " ".join(shown.stdout.split())), shown.stdout
