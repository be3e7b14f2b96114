"""`arraybench report RUN --charts DIR`: every chart of the report as one SVG and one PNG, under
the name the HTML gives it (`data-name`), slide-ready (twice the SVG's size) and not blank."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from PIL import Image

from arraybench.report.render.chartfiles.export import name_charts, slug
from arraybench.report.render.pdf import printout
from tests.conftest import main_cli, small_plan
from tests.fake_engine import PLAN_LINES

needs_chromium = pytest.mark.skipif(
    shutil.which("chromium") is None and not Path(printout.CHROMIUM).exists(),
    reason="chromium is not installed: no PNG",
)


def test_slug_keeps_safe_characters_only() -> None:
    assert slug("Random 8 KiB: R/W 70/30 (µs, 100 %)") == "random-8-kib-r-w-70-30-us-100-pct"
    assert slug("  ") == ""


def test_names_are_unique_and_carried_by_the_page() -> None:
    svg = '<svg class="chart" width="10" height="5" aria-label="Read: IOPS"><title>t</title></svg>'
    page = f'<body><div id="workloads"><h3>Random 8 KiB</h3>{svg}{svg}</div></body>'
    named, charts = name_charts(page)
    assert [c.name for c in charts] == ["curve-random-8-kib-read-iops",
                                        "curve-random-8-kib-read-iops-2"]  # fmt: skip
    for c in charts:
        assert f'data-name="{c.name}"' in named
        assert c.svg.startswith("<?xml") and 'xmlns="http://www.w3.org/2000/svg"' in c.svg


@needs_chromium
@pytest.mark.usefixtures("fake_engine")  # the charts are the subject: the test engine's run
def test_report_charts_writes_one_svg_and_png_per_chart(tmp_path: Path) -> None:
    results = tmp_path / "res"
    plan = small_plan(tmp_path, workers="[1, 2, 4]", extra=PLAN_LINES)
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stderr
    charts, page = tmp_path / "charts", tmp_path / "r.html"
    done = main_cli("report", "latest", "--results", str(results), "-o", str(page),
                    "--charts", str(charts))  # fmt: skip
    assert done.returncode == 0, done.stderr
    names = re.findall(r'<svg [^>]*data-name="([^"]+)"', page.read_text())
    assert len(names) >= 3 and len(set(names)) == len(names)
    assert sorted(p.stem for p in charts.glob("*.svg")) == sorted(names)
    assert sorted(p.stem for p in charts.glob("*.png")) == sorted(names)
    assert any(n.startswith("curve-random-8-kib") for n in names), names
    # an image read alone is titled with its workload, not only its mix ("Write")
    for curve in charts.glob("curve-*.svg"):
        drawn = re.search(r'class="chart-title"[^>]*>([^<]*)<', curve.read_text())
        assert drawn and re.match(r"(Random|Sequential) \d+ KiB: ", drawn.group(1)), curve.name
    for name in names:
        assert re.fullmatch(r"[a-z0-9-]+", name)
        with Image.open(charts / f"{name}.png") as im:
            svg = (charts / f"{name}.svg").read_text()
            width = float(re.search(r'width="([\d.]+)"', svg).group(1))  # type: ignore[union-attr]
            assert im.size[0] == 2 * width  # slide-ready: twice the SVG's size
            colors = im.convert("RGB").getcolors(maxcolors=1 << 16)
            assert colors is None or len(colors) > 20, f"{name}.png is blank"
            # some ink: the drawn pixels are not only the white background
            gray = im.convert("L")
            dark = sum(gray.histogram()[:200])
            assert dark > 0.005 * im.size[0] * im.size[1], f"{name}.png is nearly blank"
