"""Issue 27, the rest: latency histogram bars per series (HTML, PDF, xlsx, chart export);
runs' per-second throughput overlaid in compare; figures in the Markdown report."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from arraybench.report.assemble import report_for_run
from arraybench.report.charts.timeaxes import _fmt_value
from arraybench.report.render.export import write_report
from arraybench.report.render.html.page import format_value, render_html
from arraybench.report.render.pdf import printout
from arraybench.report.sections.histograms import EDGES, bucket_labels, shares
from arraybench.run.reportable import fio_json_bins
from arraybench.store.db import Store
from tests.conftest import main_cli, needs_fio
from tests.fake_engine import PLAN_LINES
from tests.integration.test_seed_figures import _figure, _in_html, _xlsx_values

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
load: {{workers: {levels}, iodepth: [4]}}
workloads:
  - {{name: rr-4k, pattern: random, bs: 4k, read: 100}}
"""


def _ladder(
    tmp_path: Path, results: Path, scenario: str = "a", seconds: int = 1, extra: str = "",
    levels: str = "[1, 2, 4]",
) -> str:  # fmt: skip
    plan = tmp_path / f"{scenario}.yaml"
    plan.write_text(extra + LADDER.format(dir=tmp_path, scenario=scenario, seconds=seconds,
                                          levels=levels))  # fmt: skip
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


def test_the_run_stores_what_its_report_reads(tmp_path: Path) -> None:
    """Stored with each point, the bins its fio.json holds and its job file: the report
    reads them there."""
    results = tmp_path / "res"
    run_id = _ladder(tmp_path, results, levels="[1, 4]")  # two points: each its own bins
    store = Store(results, create=False)
    points = store.points(run_id)
    assert len(points) == 2
    for p in points:
        stored = store.latency_bins(p.id)
        assert stored == fio_json_bins(Path(p.folder)) and sum(stored.values()) > 0
    files = store.job_files(run_id)
    for p in points:
        assert files[p.id] == {"point.fio": (Path(p.folder) / "point.fio").read_text()}


@needs_chromium
@needs_fio  # fio's json+ bins and its events
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
    want = shares(fio_json_bins(Path(chosen.folder)) or {})
    first = bucket_labels().index(fig.x_ticks[0])
    assert fig.series[0].values == pytest.approx(want[first : first + len(fig.x_ticks)])
    assert sum(v or 0 for v in fig.series[0].values) == pytest.approx(100)
    html = render_html(model)
    _in_html(html, fig)
    assert 'data-form="histogram"' in html
    texts, numbers = _xlsx_values(model, tmp_path)  # writes r.xlsx
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


EVENTFUL = """\
name: ev
scenario: {scenario}
targets:
  - path: {dir}/t.dat
    size: 32m
timing: {{ramp: 0s, duration: 5s}}
load: {{pairs: [[1, 2]]}}
workloads:
  - {{name: rr-4k, pattern: random, bs: 4k, read: 100,
      events: [{{at: {at}s, label: pull, run: [ls]}}]}}
"""


def _compare(results: Path, out: Path, *args: str) -> str:
    runs = sorted(r.id for r, _ in Store(results, create=False).list_runs())
    done = main_cli("compare", *[f"{r}:r{i}" for i, r in enumerate(runs)], "--results",
                    str(results), "-o", str(out), *args)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out.read_text()


def _tips(html: str, title: str) -> list[str]:
    chart = html[html.index(f"{title}</text>") :]
    return chart.split("data-tips='")[1].split("'")[0].split('","')


@pytest.mark.usefixtures("fake_engine")  # the overlay is the subject: the test engine's runs
def test_compare_overlays_runs_per_second_aligned_at_start(tmp_path: Path) -> None:
    results = tmp_path / "res"
    first = _ladder(tmp_path, results, "a", 2, PLAN_LINES)
    second = _ladder(tmp_path, results, "b", 2, PLAN_LINES)
    store = Store(results, create=False)
    html = _compare(results, tmp_path / "cmp.html")
    title = "rr-4k: IOPS over time, runs overlaid"
    assert html.count(f"{title}</text>") == 1 and 'data-form="timeseries"' in html
    assert "first logged second of the workload (s)" in html
    tips = _tips(html, title)
    assert tips[0].startswith('["t = 0 s')
    # t = 0 is each run's first logged second: its IOPS there, as stored
    for run_id, label in ((first, "r0"), (second, "r1")):
        p = min(store.points(run_id), key=lambda p: p.seq)
        s = store.samples(p.id)[0]
        assert f"{label}: {_fmt_value((s.read_iops or 0) + (s.write_iops or 0), 'IOPS')}" in tips[0]
    # one hover per second that either run logged, counted from each run's own first second
    seconds: set[int] = set()
    for run_id in (first, second):
        ts = [s.t for p in store.points(run_id) for s in store.samples(p.id)]
        seconds |= {t - min(ts) for t in ts}
    assert len(tips) == len(seconds) >= 3


@needs_fio  # fio's json+ bins and its events
@pytest.mark.paced  # seconds on both sides of an event at 2-3 s: timing
def test_compare_overlay_aligned_at_an_event(tmp_path: Path) -> None:
    results = tmp_path / "res"
    # events at 2 s and 3 s of 5: whole seconds before and after each, however the first
    # log second rounds (at 1 s, the early run's one second before it could round to the
    # event's own second: seen in CI's serial phase and in 1 of 3 runs alone)
    for scenario, at in (("early", 2), ("late", 3)):
        plan = tmp_path / f"{scenario}.yaml"
        plan.write_text(EVENTFUL.format(dir=tmp_path, scenario=scenario, at=at))
        done = main_cli("run", str(plan), "--results", str(results))
        assert done.returncode == 0, done.stderr
    html = _compare(results, tmp_path / "cmp.html", "--align", "event")
    title = "rr-4k: IOPS over time, runs overlaid"
    assert "first event, to the nearest second (r0: pull; r1: pull)" in html
    tips = _tips(html, title)
    times = [int(m) for m in re.findall(r"t = (-?\d+) s", "".join(tips))]
    # seconds before the event and after it, on whole seconds where both runs have samples
    assert min(times) < 0 < max(times)
    both = [t for t in tips if "r0: " in t and "r1: " in t]
    assert both and all(re.match(r'\[?"?t = -?\d+ s', t) for t in tips)
    # a run without events cannot be aligned at one: one located line, exit 2
    _ladder(tmp_path, results, "plain", 1, levels="[1]")  # one point: no event to align at
    runs = sorted(r.id for r, _ in Store(results, create=False).list_runs())
    done = main_cli("compare", f"{runs[0]}:x", f"{runs[2]}:y", "--results", str(results),
                    "-o", str(tmp_path / "bad.html"), "--align", "event")  # fmt: skip
    assert done.returncode == 2 and "--align event" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.usefixtures("fake_engine")  # the Markdown is the subject: the engine's bins
def test_markdown_has_the_figures_seed_tables_and_links_to_the_exported_charts(
    tmp_path: Path,
) -> None:
    results = tmp_path / "res"
    run_id = _ladder(tmp_path, results, extra=PLAN_LINES)
    out = tmp_path / "out"
    done = main_cli("report", run_id, "--results", str(results), "-o", str(out / "r.md"),
                    "--charts", str(out / "charts"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    md = (out / "r.md").read_text()
    model = report_for_run(Store(results, create=False), run_id)
    fig = _figure(model, "rr-4k: latency histogram")
    # the figure's numbers as a table: one row per latency bucket, one column per point
    assert "## Figures" in md and "**rr-4k: latency histogram**" in md
    head = "| total latency (fio lat: submission to completion) | " + fig.series[0].label
    assert head in md
    assert f"| {fig.x_ticks[0]} | {format_value(fig.series[0].values[0])} |" in md
    assert "### Maximum recorded" in md  # the seed table (In&Out's maximum recorded)
    # every exported chart linked as an image, relative to the Markdown file
    links = re.findall(r"!\[([^\]]+)\]\((charts/[^)]+\.png)\)", md)
    exported = sorted(p.name for p in (out / "charts").glob("*.png"))
    assert sorted(Path(link).name for _, link in links) == exported and len(exported) >= 3
    assert "(charts/histogram-rr-4k-latency-histogram.svg)" in md
    # without --charts: no links
    plain = main_cli("report", run_id, "--results", str(results), "-o", str(out / "p.md"))
    assert plain.returncode == 0 and "## Charts" not in (out / "p.md").read_text()


def _fio_json_plus(folder: Path, *extra: str) -> Path:
    folder.mkdir(parents=True)
    out = folder / "rr.json"
    subprocess.run(["fio", "--name=rr", f"--filename={folder / 'f.dat'}", "--size=4m",
                    "--rw=randread", "--bs=4k", "--runtime=1", "--time_based", *extra,
                    "--output-format=json+", f"--output={out}"], check=True,
                   capture_output=True)  # fmt: skip
    return out


@needs_fio
def test_histogram_names_the_latency_its_bins_measure(tmp_path: Path) -> None:
    # fio without lat_percentiles=1 (the seeds' runs): json+ holds clat's bins only, and the
    # histogram is of completion latency; arraybench's own runs set it: total latency (lat)
    source = _fio_json_plus(tmp_path / "src")
    doc = json.loads(source.read_text())["jobs"][0]["read"]
    assert "bins" in doc["clat_ns"] and "percentile" not in doc["lat_ns"]
    results = tmp_path / "res"
    done = main_cli("import", str(source.parent), "--name", "seedlike", "--results", str(results))
    assert done.returncode == 0, done.stderr
    store = Store(results, create=False)
    (run,) = [r for r, _ in store.list_runs()]
    model = report_for_run(store, run.id)
    (fig,) = [f for f in model.figures if f.form == "histogram"]
    assert fig.x_label == "completion latency (fio clat)"
    clat = {int(k): int(v) for k, v in doc["clat_ns"]["bins"].items()}
    want = shares(clat)
    assert sum(v or 0 for v in fig.series[0].values) == pytest.approx(100)
    assert max(v or 0 for v in fig.series[0].values) == pytest.approx(max(want))
    (dist,) = model.distributions
    html = render_html(model)
    assert "against completion latency (fio clat)" in html
    assert f"latency percentiles ({dist.latency})" in html and "clat" in dist.latency
    texts, _ = _xlsx_values(model, tmp_path)
    assert "completion latency (fio clat)" in texts
    write_report(model, tmp_path / "r.md", "md")
    assert "| completion latency (fio clat) |" in (tmp_path / "r.md").read_text()
    assert "fio lat" not in html.split('id="histograms"')[1].split("</section>")[0]


@needs_fio
def test_own_run_histogram_is_total_latency_from_lat_bins(tmp_path: Path) -> None:
    results = tmp_path / "res"
    run_id = _ladder(tmp_path, results, levels="[1, 4]")
    store = Store(results, create=False)
    model = report_for_run(store, run_id)
    fig = _figure(model, "rr-4k: latency histogram")
    assert fig.x_label == "total latency (fio lat: submission to completion)"
    point = next(p for p in store.points(run_id) if fig.series[0].label.endswith(p.identity.label))
    doc = json.loads((Path(point.folder) / "fio.json").read_text())["jobs"]
    lat: dict[int, int] = {}
    for job in doc:  # fio's lat_ns bins (lat_percentiles=1 in arraybench's job files)
        for ns, n in job["read"]["lat_ns"]["bins"].items():
            lat[int(ns)] = lat.get(int(ns), 0) + n
    got = [v or 0 for v in fig.series[0].values]
    assert max(got) == pytest.approx(max(shares(lat)))
