"""The customer's report (`report --audience customer`) of every built-in template can be
handed over unedited: no plan key, no docs path, no command and no interactive hint on paper,
in HTML, PDF, Markdown and Excel alike; the plan's customer and fabric in its set-up; the
summary table on one PDF page. Each template runs as a user runs it at a small --scale, on the
test engine (tests/fake_engine.py) where the report is the subject, on fio for the parts only
fio runs (cscs's metadata, dbi-db's interference). Real Chromium, real pdftotext."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest
from openpyxl import load_workbook

from arraybench.plan.schema import plan_schema
from arraybench.report.render.pdf import printout
from tests.conftest import main_cli, needs_fio
from tests.fake_engine import registered

pytestmark = [
    pytest.mark.xdist_group("customer_report"),  # module fixtures: built once, on one worker
    pytest.mark.skipif(
        shutil.which("chromium") is None and not Path(printout.CHROMIUM).exists(),
        reason="chromium is not installed",
    ),
    pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils not installed"),
]

CUSTOMER = "ACME Bank, Zurich data centre"
FAKE = ("--set", "engine=fake", "--set", "monitor=false")
TEMPLATES = {  # on the test engine: tests/e2e/test_templates.py's small runs
    "quick": ("--scale", "0.01", "--set", "load.workers=[1, 4]"),
    "inout": ("--scale", "0.01", "--set", "load.workers=[1, 4]",
              "--set", "fabric.links=['2 x FC 16G']"),
    "aerodisk": ("--scale", "0.002"),
    "hus-fmd": ("--scale", "0.0002", "--only", "g1-cliff-4k", "--only", "g2-rw70-*-8k",
                "--only", "g2-rw70-sync-1m", "--set", "load.workers=[1, 4]",
                "--set", "gc_throughput=1g"),
    "snia-pts": ("--only", "iops-4k-*", "--scale", "0.005", "--set", "rounds.max=3",
                 "--set", "rounds.window=3"),
}  # fmt: skip
ON_FIO = {  # what only fio runs, beside one grid workload
    "cscs": ("--scale", "0.01", "--set", "load.pairs=[[4, 4]]",
             "--set", "metadata.threads=[1, 2]", "--only", "iops-4k-read"),
    "dbi-db": ("--only", "randread-8k", "--scale", "0.01", "--set", "load.workers=[1]",
               "--set", "load.devices=[1]", "--set", "interference.steps=2",
               "--set", "interference.base_rate_iops=2000",
               "--set", "interference.bg_rate_iops=20"),
}  # fmt: skip
# the kernel's own names of a queue's settings (host_tuning: takes them as they are): the
# set-up's provenance names them as sysfs does, not as plan keys
KERNEL_NAMES = {"max_sectors_kb", "nr_requests", "read_ahead_kb", "rq_affinity",
                "wbt_lat_usec", "write_cache"}  # fmt: skip
INTERNAL = re.compile(
    r"docs/[\w/.-]+|`|(?<![\w-])--[a-z]|\barraybench (?:run|show|report|attach|revert|compare|"
    r"import|plan)\b|\bclick|\bhover|\{\w+:|\brepeat: N\b|\bplan\.yaml\b",
    re.I,
)


def _plan_keys() -> set[str]:
    """Every key of the plan that no reader would take for a word (it has an underscore)."""
    keys: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            keys.update(node.get("properties", {}))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(plan_schema())
    return {k for k in keys if "_" in k} - KERNEL_NAMES


PLAN_KEYS = re.compile(r"\b(?:" + "|".join(sorted(_plan_keys())) + r")\b")


def _internal(text: str) -> list[str]:
    """Each internal word in `text`, with a little of the line around it."""
    found = []
    for pattern in (INTERNAL, PLAN_KEYS):
        for m in pattern.finditer(text):
            line = text[text.rfind("\n", 0, m.start()) + 1 : text.find("\n", m.end())]
            found.append(line.strip()[:160])
    return found


@pytest.fixture(scope="module")
def _engine() -> Iterator[None]:
    with registered():  # for the runs and for every report of them (their stored plan)
        yield


def _customer_report(root: Path, template: str, args: tuple[str, ...]) -> Path:
    """`template` run on two files under `root`, its customer report in every format."""
    results = root / "res"
    targets = [a for name in ("lun1.dat", "lun2.dat") for a in ("--target", str(root / name))]
    done = main_cli("run", template, *args, "--set", f"customer={CUSTOMER}", *targets,
                    "--results", str(results))  # fmt: skip
    assert done.returncode == 0, done.stderr
    outputs = [a for fmt in ("html", "pdf", "md", "xlsx") for a in ("-o", str(root / f"c.{fmt}"))]
    done = main_cli("report", "latest", "--results", str(results), "--audience", "customer",
                    *outputs)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture(scope="module")
def reports(_engine: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {
        name: _customer_report(tmp_path_factory.mktemp(name), name, (*args, *FAKE))
        for name, args in TEMPLATES.items()
    }


def _pdf_pages(pdf: Path) -> list[str]:
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout  # fmt: skip
    return text.split("\f")


def _html_text(html: str) -> str:
    """What the page shows, its interactive hints (on the screen only) left out."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    html = re.sub(r'<span class="screen-only-inline">.*?</span>', " ", html, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", "\n", html))


def _xlsx_text(path: Path) -> str:
    book = load_workbook(path)
    return "\n".join(str(c.value) for ws in book.worksheets for row in ws.iter_rows()
                     for c in row if c.value is not None)  # fmt: skip


def _check_customer_report(root: Path) -> None:
    html = (root / "c.html").read_text()
    pages = _pdf_pages(root / "c.pdf")
    printed = "\n".join(pages)
    for what, text in (("HTML", _html_text(html)), ("PDF", printed),
                       ("Markdown", (root / "c.md").read_text().replace("`", "")),  # markup
                       ("Excel", _xlsx_text(root / "c.xlsx"))):  # fmt: skip
        assert _internal(text) == [], f"{what} says what only the engineer reads"
    # the hints are the page's own: each inside an element the printout hides
    assert "Click" in html and not re.search(r"(?<!screen-only-inline\">)(?<! )Click", html)
    assert "Plan" not in re.findall(r"<h3>(.*?)</h3>", html)  # no plan, no job files
    # the set-up: who it is for, on the first page
    assert "Customer" in pages[0] and CUSTOMER in " ".join(pages[0].split())
    # the summary: its heading, every row and its caption on one page
    heading = next(i for i, p in enumerate(pages) if re.search(r"^Summary\s*$", p, re.M))
    caption = next(i for i, p in enumerate(pages) if "Bold: optimal point" in p)
    assert heading == caption, f"the summary runs from page {heading + 1} to {caption + 1}"


@pytest.mark.parametrize("template", list(TEMPLATES))
def test_every_template_s_customer_report_can_be_handed_over(
    reports: dict[str, Path], template: str
) -> None:
    _check_customer_report(reports[template])


@needs_fio
@pytest.mark.slow
@pytest.mark.parametrize("template", list(ON_FIO))
def test_the_fio_only_parts_customer_report(tmp_path: Path, template: str) -> None:
    _check_customer_report(_customer_report(tmp_path, template, ON_FIO[template]))


def test_the_fabric_is_in_the_set_up_and_the_engineer_s_report_keeps_every_detail(
    reports: dict[str, Path],
) -> None:
    root = reports["inout"]
    html = (root / "c.html").read_text()
    assert "<dt>Fabric</dt><dd>2 x FC 16G per host</dd>" in html  # MTU said where not 1500
    assert "<dt>Customer</dt>" in html
    assert "Storage performance: inout" in html  # titled by what it measured, not the tool
    engineer = root / "e.html"
    done = main_cli("report", "latest", "--results", str(root / "res"), "-o", str(engineer))
    assert done.returncode == 0, done.stderr
    text = engineer.read_text()
    assert "docs/headline.md" in text and '<section id="plan">' in text
    assert "What to change" in text and f"<dd>{CUSTOMER}</dd>" in text


def test_an_unknown_audience_is_one_line_and_exit_2(reports: dict[str, Path]) -> None:
    done = main_cli("report", "latest", "--results", str(reports["quick"] / "res"),
                    "--audience", "board")  # fmt: skip
    assert done.returncode == 2
    assert "invalid choice: 'board'" in done.stderr and "Traceback" not in done.stderr


def test_the_default_customer_file_does_not_overwrite_the_engineer_s(
    reports: dict[str, Path],
) -> None:
    results = reports["aerodisk"] / "res"
    done = main_cli("report", "latest", "--results", str(results), "--audience", "customer")
    assert done.returncode == 0, done.stderr
    runs = json.loads(main_cli("runs", "--results", str(results), "--format", "json").stdout)
    folder = Path(runs[0]["folder"])
    assert (folder / "report-customer.html").exists()
    assert "Storage performance" in (folder / "report-customer.html").read_text()
