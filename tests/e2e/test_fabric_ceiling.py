"""The fabric in a dbi-db run, as a user declares it: figures beyond what the links carry are
flagged, the ceiling is drawn (and labelled with the fabric) on the dbi charts in HTML, SVG,
PNG, the workbook and Markdown, and the report's Set-up names the fabric and the system under
test. On the test engine (tests/fake_engine.py), whose figures are its model's: 1 MiB writes
at 1 thread per device move 1.2 GB/s per device, at 5 threads 6.1 GB/s, against the 3.3 GB/s
payload ceiling of one 32GFC link."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from openpyxl import load_workbook

from tests.conftest import main_cli

SUT = "Huawei OceanStor Dorado 6000 V3, firmware V300R001C21"
FAKE = ("--set", "engine=fake", "--set", "monitor=false")


@pytest.fixture
def dbi_run(tmp_path: Path, fake_engine: None) -> tuple[Path, str, dict]:
    results = tmp_path / "res"
    targets = [a for name in ("lun1.dat", "lun2.dat") for a in ("--target", str(tmp_path / name))]
    done = main_cli("run", "dbi-db", "--scale", "0.01", "--set", "load.workers=[1, 5]",
                    "--only", "write-1m", "--set", "interference=null",
                    "--set", "fabric.links=['1 x FC 32G']",
                    "--set", f"system_under_test={SUT}", *FAKE, *targets,
                    "--results", str(results))  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = json.loads(main_cli("runs", "--results", str(results), "--format", "json").stdout)[
        0]["id"]  # fmt: skip
    shown = main_cli("show", run_id, "--results", str(results), "--format", "json")
    return results, run_id, json.loads(shown.stdout)


def test_points_beyond_the_links_are_flagged_and_leave_the_headline(
    dbi_run: tuple[Path, str, dict],
) -> None:
    results, run_id, shown = dbi_run
    flagged = {p["key"]: [f for f in p["flags"] if f["kind"] == "above-ceiling"]
               for p in shown["points"]}  # fmt: skip
    # 1 thread: 1.2 GB/s (1 device), 2.4 GB/s (2) under the 3.3 GB/s ceiling; 5 threads: over
    assert [k for k, found in flagged.items() if found] == [
        "write-1m/w5-qd1-d1", "write-1m/w5-qd1-d2"]  # fmt: skip
    flag = flagged["write-1m/w5-qd1-d1"][0]
    assert flag["grade"] == "invalidating"
    ratio = re.search(r"([\d,]+) MB/s is (\d+)% of the payload ceiling of 1 x FC 32G \(([\d,]+)",
                      flag["why"])  # fmt: skip
    assert ratio, flag["why"]
    got, ceiling = (float(ratio.group(i).replace(",", "")) for i in (1, 3))
    assert 3200 < ceiling < 3400 and got / ceiling == pytest.approx(int(ratio.group(2)) / 100,
                                                                     abs=0.01)  # fmt: skip
    assert "fabric:" in flag["change"] and "cache" in flag["change"]
    text = main_cli("show", run_id, "--results", str(results)).stdout
    assert "flagged:" in text and "above-ceiling" in text


def test_the_ceiling_is_drawn_on_the_dbi_charts_and_the_setup_names_fabric_and_sut(
    dbi_run: tuple[Path, str, dict], tmp_path: Path
) -> None:
    results, run_id, _ = dbi_run
    out = tmp_path / "out"
    done = main_cli("report", run_id, "--results", str(results), "-o", str(out / "r.html"),
                    "-o", str(out / "r.xlsx"), "-o", str(out / "r.md"),
                    "--charts", str(out / "charts"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    html = (out / "r.html").read_text()
    setup = html.split('<section id="run">')[1].split("</section>")[0]
    assert f"<dt>System under test</dt><dd>{SUT}</dd>" in setup
    assert "<dt>Fabric</dt><dd>1 x FC 32G per host</dd>" in setup
    figure = html.split("write-1m: MB/s by device count", 1)[1].split("</svg>")[0]
    label = re.search(r'class="label-ceiling"[^>]*>theoretical ([\d,]+) MB/s '
                      r"\(fabric 1 x FC 32G\)<", figure)  # fmt: skip
    assert label and 3200 < float(label.group(1).replace(",", "")) < 3400
    assert 'class="ceiling"' in figure  # a line, on the scale of 1.2 to 12 GB/s
    latency = html.split("write-1m: mean latency by device count", 1)[1].split("</svg>")[0]
    assert "label-ceiling" not in latency  # the ceiling is a throughput's
    svg = (out / "charts" / "lines-write-1m-mb-s-by-device-count.svg").read_text()
    assert "(fabric 1 x FC 32G)" in svg and 'class="ceiling"' in svg
    assert (out / "charts" / "lines-write-1m-mb-s-by-device-count.png").stat().st_size > 1000
    ws = load_workbook(out / "r.xlsx")["Figures"]
    heads = [c.value for row in ws.iter_rows() for c in row]
    assert "fabric ceiling (MB/s)" in heads
    setup_sheet = [c.value for row in load_workbook(out / "r.xlsx").worksheets[0].iter_rows()
                   for c in row]  # fmt: skip
    assert SUT in setup_sheet and "1 x FC 32G per host" in setup_sheet
    md = (out / "r.md").read_text()
    assert f"| System under test | {SUT} |" in md and "| Fabric | 1 x FC 32G per host |" in md
    assert re.search(r"Fabric ceiling: theoretical [\d,]+ MB/s \(fabric 1 x FC 32G\)\.", md)
