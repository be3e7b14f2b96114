"""Issue 27, the rest: latency histogram bars per series (HTML, PDF, xlsx, chart export);
runs' per-second throughput overlaid in compare; figures in the Markdown report."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from arraybench.report import printout
from arraybench.report.assemble import report_for_run
from arraybench.report.distribution import merged_bins
from arraybench.report.export import write_report
from arraybench.report.histograms import EDGES, bucket_labels, shares
from arraybench.report.html import render_html
from arraybench.store.db import Store
from tests.conftest import main_cli, needs_fio
from tests.integration.test_seed_figures import _figure, _in_html, _xlsx_values

pytestmark = [needs_fio]
needs_chromium = pytest.mark.skipif(
    (shutil.which("chromium") is None and not Path(printout.CHROMIUM).exists())
    or shutil.which("pdftotext") is None,
    reason="chromium or pdftotext is not installed",
)

LADDER = """\
name: ladder
scenario: {scenario}
targets:
  - path: {dir}/t.dat
    size: 32m
timing: {{ramp: 0s, duration: {seconds}s}}
load: {{workers: [1, 2, 4], iodepth: [4]}}
workloads:
  - {{name: rr-4k, pattern: random, bs: 4k, read: 100}}
"""


def _ladder(tmp_path: Path, results: Path, scenario: str = "a", seconds: int = 1) -> str:
    plan = tmp_path / f"{scenario}.yaml"
    plan.write_text(LADDER.format(dir=tmp_path, scenario=scenario, seconds=seconds))
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stderr
    runs = Store(results, create=False).list_runs()
    return max(r.id for r, _ in runs if r.scenario == scenario)


def test_buckets_are_shares_of_every_io() -> None:
    bins = {500: 1, 1_000: 1, 1_999: 2, 150_000: 4, 10**12: 2}  # ns -> count
    got = shares(bins)
    labels = bucket_labels()
    assert len(got) == len(labels) == len(EDGES) + 1 and sum(got) == pytest.approx(100)
    assert got[labels.index("< 1 µs")] == 10 and got[labels.index("1–2 µs")] == 30
    assert got[labels.index("100–200 µs")] == 40 and got[-1] == 20
    assert "500 µs–1 ms" in labels and "1–2 s" in labels


@needs_chromium
def test_latency_histogram_at_optimal_and_max(tmp_path: Path) -> None:
    results = tmp_path / "res"
    run_id = _ladder(tmp_path, results)
    store = Store(results, create=False)
    model = report_for_run(store, run_id)
    fig = _figure(model, "rr-4k: latency histogram")
    assert fig.form == "histogram" and fig.unit == "% of I/Os"
    labels = [s.label for s in fig.series]
    assert labels[0].startswith("optimal") and (len(labels) == 1 or labels[1].startswith("max: w"))
    assert len(labels) == 2 or labels[0].startswith("optimal and max: w")
    chosen = next(p for p in store.points(run_id) if p.key.endswith(labels[0].split(": ")[1]))
    want = shares(merged_bins(Path(chosen.folder)) or {})
    first = bucket_labels().index(fig.x_ticks[0])
    assert fig.series[0].values == pytest.approx(want[first : first + len(fig.x_ticks)])
    assert sum(v or 0 for v in fig.series[0].values) == pytest.approx(100)
    html = render_html(model)
    _in_html(html, fig)
    assert 'data-form="histogram"' in html
    write_report(model, tmp_path / "r.xlsx", "xlsx")
    texts, numbers = _xlsx_values(tmp_path / "r.xlsx")
    assert fig.title in texts and f"{labels[0]} (% of I/Os)" in texts
    assert any(v == pytest.approx(max(fig.series[0].values)) for v in numbers)  # type: ignore[type-var]
    write_report(model, tmp_path / "r.pdf", "pdf")
    pdf = subprocess.run(["pdftotext", str(tmp_path / "r.pdf"), "-"], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    text = re.sub(r"\s+", " ", pdf)
    assert "rr-4k: latency histogram" in text and fig.x_ticks[0] in text
    charts = tmp_path / "charts"
    done = main_cli("report", run_id, "--results", str(results), "--charts", str(charts))
    assert done.returncode == 0, done.stderr
    assert (charts / "histogram-rr-4k-latency-histogram.png").stat().st_size > 1000
    assert (charts / "histogram-rr-4k-latency-histogram.svg").is_file()
