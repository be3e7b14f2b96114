"""compare shows each run's points beside the array's own counters (`arraybench attach`), as
the run's own report does; a run without them is listed as such. The runs are the test
engine's (tests/fake_engine.py): compare and attach are the subject, the array's series is
made from the stored seconds."""

from __future__ import annotations

import csv
import io
from contextlib import redirect_stdout
from datetime import UTC, datetime
from pathlib import Path

import pytest

from arraybench.cli import main
from arraybench.store.db import PointRecord, Store
from tests.conftest import small_plan
from tests.fake_engine import PLAN_LINES

pytestmark = pytest.mark.usefixtures("fake_engine")


def _run(plan: Path, results: Path) -> str:
    assert main(["run", str(plan), "--results", str(results), "--only", "rand*"]) == 0
    runs = sorted((results / "runs").iterdir(), key=lambda p: p.stat().st_mtime)
    return runs[-1].name


def _export(path: Path, store: Store, points: list[PointRecord]) -> None:
    """The array counted fio's IOPS and MB/s, 5 % more on the first point and 30 % more on the
    second (bytes decide the verdict: both must differ alike for the IOPS' verdict to show)."""
    with open(path, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["Time", "IOPS", "MBps"])
        for n, p in enumerate(points):
            mbps = p.metric("total", "mbps") or 0.0
            for s in store.samples(p.id):
                iops = ((s.read_iops or 0) + (s.write_iops or 0)) * (1.3 if n else 1.05)
                stamp = datetime.fromtimestamp(s.t + 0.5, UTC).isoformat()
                out.writerow([stamp, repr(iops), repr(mbps * (1.3 if n else 1.05))])


def test_compare_shows_the_array_beside_fio_per_run(tmp_path: Path) -> None:
    results = tmp_path / "res"
    plan = small_plan(tmp_path, workers="[1, 2]", extra=PLAN_LINES)
    plan.write_text(plan.read_text().replace("duration: 1s", "duration: 2s"))
    plain, attached = _run(plan, results), _run(plan, results)
    store = Store(results, create=False)
    first, second = store.points(attached)[:2]
    export = tmp_path / "array.csv"
    _export(export, store, [first, second])
    mapping = "time=Time,iops=IOPS,mbps=MBps"
    with redirect_stdout(io.StringIO()):
        assert main(["attach", attached, str(export), "--map", mapping,
                     "--results", str(results)]) == 0  # fmt: skip
        html, md = tmp_path / "c.html", tmp_path / "c.md"
        assert main(["compare", f"{plain}:plain", f"{attached}:seen", "--results",
                     str(results), "-o", str(html), "-o", str(md)]) == 0  # fmt: skip

    text = " ".join(html.read_text().split())
    assert "counters beside fio" in text and "array vs fio" in text
    assert "no array counters" in text  # the run without them

    def fio_iops(p: PointRecord) -> str:  # the mean over its logged seconds, as agreement's
        seconds = [(s.read_iops or 0) + (s.write_iops or 0) for s in store.samples(p.id)]
        return f"{sum(seconds) / len(seconds):,.0f}"

    markdown = md.read_text()
    table = markdown[markdown.index("rand-8k-rw70: array's counters beside fio's") :]
    rows = [line for line in table.splitlines() if line.startswith("| seen |")][:2]
    assert len(rows) == 2, markdown
    for row, point, diff, verdict in zip(
        rows, (first, second), ("+5 %", "+30 %"), ("agree", "DISAGREE"), strict=True
    ):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1] == point.key and cells[4] == diff and cells[5] == verdict, cells
        assert cells[8] == diff, cells  # MB/s: array vs fio
        assert f"<td>{point.key}</td>" in text and f">{diff}<" in text, point.key
        assert cells[2] == fio_iops(point), cells
    assert "| plain | no array counters |" in table
