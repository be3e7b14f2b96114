"""Every output format states, for each part of the report model, whether it renders it or
leaves it out on purpose and why (report/render/formats.py); a part added to `ReportModel`
fails here until every format has said which. A "renders" claim is checked: one model with a
unique marker in every part is written in each format (the PDF printed by Chromium, read by
pdftotext) and each claimed marker looked for."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from arraybench.report.model import (
    CurvePanel,
    Distribution,
    Figure,
    FigureSeries,
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
from arraybench.report.render.export import write_report
from arraybench.report.render.formats import REGISTRY, OutputFormat
from arraybench.report.render.pdf import printout

PARTS = [f.name for f in dataclasses.fields(ReportModel)]


def _mark(part: str) -> str:
    """A word no renderer escapes or splits: letters only, unique per part."""
    return "Qz" + part.replace("_", "").capitalize() + "Zq"


# what a renderer shows of each part, found in its output; None: the part changes how the
# rest is drawn (`audience`; `job_series` groups the printed job files), not text of its own
NEEDLES: dict[str, str | None] = {part: _mark(part) for part in PARTS}
NEEDLES.update(started="03:04:05", finished="04:05:06", audience=None, job_series=None)
NEEDLES["point_columns"] = _mark("point_columns").lower()  # a raw column name, as stored


def marked_model(chart_dir: Path) -> ReportModel:
    """A small model holding `_mark(part)` in every part (the way a renderer shows it)."""
    m = _mark
    panel = CurvePanel(
        mix_label="Read", x_label="workers", x_values=[1.0, 2.0], x_ticks=["1", "2"],
        throughput_unit="IOPS", throughput=[1000.0, 2000.0], lat_mean_us=[100.0, 150.0],
        lat_p99_us=[200.0, 300.0], optimal_index=1, max_index=1, min_latency_index=0,
    )  # fmt: skip
    line = OverlayLine(m("distributions"), [1.0, 2.0], [3.0, 4.0], [5.0, 6.0])
    column = m("point_columns").lower()
    point = PointRow(m("points"), "1", 1, 1, "t", {"read_iops": 1000.0})
    return ReportModel(
        title=m("title"), run_id=m("run_id"), scenario=m("scenario"),
        labels={"label": m("labels")}, started="2026-01-02T03:04:05",
        finished="2026-01-02T04:05:06", status=m("status"),
        arraybench_version=m("arraybench_version"), engine_version=m("engine_version"),
        host=m("host"), kernel=m("kernel"), targets=[m("targets")],
        latency_bound=m("latency_bound"), summary_columns=[m("summary_columns")],
        summary=[SummaryRow(m("summary"), {m("summary_columns"): SummaryCell("1", "2", "3")})],
        sections=[WorkloadSection(m("sections"), [panel])],
        points=[point], point_columns=["read_iops", column], plan_yaml=f"name: {m('plan_yaml')}\n",
        job_files={"k1": f"[{m('job_files')}]\n"}, job_series={"k1": m("job_series")},
        notes=[m("notes")],
        timelines=[Timeline(m("timelines"), [0.0, 1.0], "IOPS", [1.0, 2.0], [3.0, 4.0])],
        tables=[ReportTable(m("tables"), ["a"], [["1"]])],
        overlays=[Overlay(m("overlays"), "x", ["1", "2"],
                          [OverlayLine("l", [1.0, 2.0], [3.0, 4.0], [5.0, 6.0])])],
        provenance=[("where", m("provenance"))],
        verdicts=[ReportTable(m("verdicts"), ["a"], [["PASS"]])],
        distributions=[Distribution("s", ["50", "99"], [line])],
        notes_box=[m("notes_box")], appendix=[ReportTable(m("appendix"), ["a"], [["1"]])],
        figures=[Figure("bars", m("figures"), "x", "IOPS", ["1"],
                        [FigureSeries("s", [1.0])])],
        chart_dir=str(chart_dir / m("chart_dir")), audience="engineer",
        setup=[("System under test", m("setup"))],
    )  # fmt: skip


def output_text(path: Path) -> str:
    """The text a reader can find in a written report: an xlsx's every sheet and chart, a
    PDF's text (pdftotext)."""
    if path.suffix == ".pdf":
        return subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                              text=True, check=True, timeout=60).stdout  # fmt: skip
    if path.suffix != ".xlsx":
        return path.read_text(encoding="utf-8")
    with zipfile.ZipFile(path) as book:
        xml = " ".join(book.read(n).decode() for n in book.namelist() if n.endswith(".xml"))
    return re.sub(r"<[^>]+>", " ", xml)


def test_the_marked_model_marks_every_part() -> None:
    assert set(NEEDLES) == set(PARTS)


@pytest.mark.parametrize("fmt", REGISTRY, ids=lambda f: f.name)
def test_each_format_says_of_every_part_whether_it_renders_it(fmt: OutputFormat) -> None:
    said = set(fmt.renders) | set(fmt.skips)
    assert not set(fmt.renders) & set(fmt.skips), "a part both rendered and skipped"
    assert said == set(PARTS), (
        f"{fmt.name}: unsaid {sorted(set(PARTS) - said)}, unknown {sorted(said - set(PARTS))}"
    )
    assert all(len(why) > 10 for why in fmt.skips.values()), "a skip without its reason"


PRINTING = shutil.which("pdftotext") is not None and (
    shutil.which("chromium") is not None or Path(printout.CHROMIUM).exists()
)
SEARCHED = [  # a PNG holds no text to search: it prints what the PDF prints
    pytest.param(f, marks=pytest.mark.skipif(not PRINTING, reason="no chromium or pdftotext"))
    if f.printed else f
    for f in REGISTRY if f.name != "png"
]  # fmt: skip


@pytest.mark.parametrize("fmt", SEARCHED, ids=lambda f: f.name)
def test_what_a_format_says_it_renders_is_in_its_output(fmt: OutputFormat, tmp_path: Path) -> None:
    model = marked_model(tmp_path)
    text = output_text(write_report(model, tmp_path / f"r{fmt.extensions[0]}", fmt.name))
    missing = [p for p in fmt.renders if NEEDLES[p] and NEEDLES[p] not in text]
    assert not missing, f"{fmt.name} claims to render {missing} but drops them"
    shown = [p for p in fmt.skips if NEEDLES[p] and NEEDLES[p] in text]
    assert not shown, f"{fmt.name} says it skips {shown} but shows them: say so"


def test_a_printed_format_renders_what_its_page_renders() -> None:
    by_name = {f.name: f for f in REGISTRY}
    for fmt in REGISTRY:
        if fmt.printed:
            page = by_name[fmt.printed]
            assert (fmt.renders, dict(fmt.skips)) == (page.renders, dict(page.skips)), fmt.name


def test_the_registry_names_each_format_and_extension_once() -> None:
    names = [f.name for f in REGISTRY]
    extensions = [e for f in REGISTRY for e in f.extensions]
    assert len(set(names)) == len(names) and len(set(extensions)) == len(extensions)
    assert all(e.startswith(".") and e == e.lower() for e in extensions)
