#!/usr/bin/env python3
"""The README's picture of a report, docs/report.png, from a real run.

Runs the default campaign (`quick`) shortened with --scale on a scratch file in a temporary
folder with the fio on PATH (or takes an existing run: --results DIR --run RUN_ID), renders
its HTML report, and screenshots the first view a reader cares about (the title, the summary
table, the first workload's first curve) with headless Chromium, offline. The sections left out of
the picture are hidden by a style sheet added to a copy of the report; nothing is drawn or
edited by hand. The image is cropped to its content and reduced to 256 colours to stay small.

    .venv/bin/python scripts/report-picture.py              # about 2 min: a new run at x0.5
    .venv/bin/python scripts/report-picture.py --results arraybench-results --run latest

Needs the dev extras (Pillow) and the Debian package `chromium`.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from PIL import Image, ImageChops
except ImportError:  # a dev extra
    raise SystemExit("report-picture: needs Pillow: .venv/bin/pip install -e '.[dev]'") from None

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "report.png"
WIDTH = 900  # px: GitHub shows a README image at most about 880 px wide, so 1:1 stays sharp
# What the picture leaves out: the set-up's notes (about this short run itself), the tables
# under the summary, the later workloads, the histograms, time series and the appendix; of the
# first workload, its first curve stays.
HIDE = """<style>
.notes, nav, #tables, #histograms, #distribution, #timelines, #appendix, footer,
section.workload ~ section.workload, section.workload figure.panel:nth-of-type(n+2),
h2 + p.caption, p.chart-save { display: none !important; }
body { margin-top: 0; }
</style>"""


def arraybench(*args: str) -> str:
    exe = Path(sys.executable).with_name("arraybench")
    done = subprocess.run([str(exe), *args], capture_output=True, text=True, check=False)
    if done.returncode not in (0, 3):  # 3: an acceptance criterion failed, the run is whole
        raise SystemExit(f"arraybench {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def report_html(results: Path, run: str, work: Path) -> Path:
    html = work / "report.html"
    arraybench("report", run, "--results", str(results), "-o", str(html))
    framed = work / "picture.html"
    text = html.read_text(encoding="utf-8")
    framed.write_text(text.replace("</head>", HIDE + "</head>", 1), encoding="utf-8")
    return framed


def screenshot(html: Path, png: Path) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("report-picture: chromium is not installed (apt-get install chromium)")
    argv = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--no-first-run", "--disable-background-networking", "--proxy-server=http://127.0.0.1:9",
            f"--user-data-dir={png.parent / 'profile'}", f"--window-size={WIDTH},4000",
            f"--screenshot={png}", html.as_uri()]  # fmt: skip
    subprocess.run(argv, capture_output=True, check=True, timeout=120)


def cropped(png: Path) -> Image.Image:
    """The screenshot without the blank below its content, in 256 colours."""
    image = Image.open(png).convert("RGB")
    blank = Image.new("RGB", image.size, image.getpixel((image.width - 1, image.height - 1)))
    box = ImageChops.difference(image, blank).getbbox()
    bottom = min(image.height, box[3] + 16) if box else image.height
    image = image.crop((0, 0, image.width, bottom))
    return image.quantize(colors=256, method=Image.Quantize.MEDIANCUT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, help="an existing results folder")
    parser.add_argument("--run", default="latest", help="its run (with --results)")
    parser.add_argument("--scale", default="0.5", help="the new run's --scale (default 0.5)")
    parser.add_argument("-o", "--output", type=Path, default=OUT)
    args = parser.parse_args()
    # a fixed folder, not a random one: the picture shows the scratch file's path
    work = Path(tempfile.gettempdir()) / "arraybench-picture"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        results = args.results
        if results is None:
            results = work / "results"
            arraybench("run", "quick", "--scale", args.scale, "--results", str(results))
        shot = work / "shot.png"
        screenshot(report_html(results, args.run, work), shot)
        cropped(shot).save(args.output, optimize=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    size = args.output.stat().st_size
    print(f"{args.output}: {Image.open(args.output).size} px, {size / 1000:.0f} kB")


if __name__ == "__main__":
    main()
