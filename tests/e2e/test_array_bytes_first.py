"""fio against the array's monitor, bytes first (docs/validity.md's rule for the kernel): an
array that counts 40 % more I/Os for the same bytes (it splits fio's requests into its own)
agrees; one that moved other bytes disagrees, whatever its IOPS. On the test engine's run,
the array's series made from the stored seconds (tests/e2e/test_array_attach.py's way)."""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

import pytest

from arraybench.cli import main
from arraybench.store.db import Store
from tests.conftest import small_plan
from tests.fake_engine import PLAN_LINES

pytestmark = pytest.mark.usefixtures("fake_engine")


def test_the_same_bytes_in_more_requests_agree_other_bytes_do_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "res"
    plan = small_plan(tmp_path, workers="[1, 2]", extra=PLAN_LINES)
    plan.write_text(plan.read_text().replace("duration: 1s", "duration: 3s"))
    assert main(["run", str(plan), "--results", str(results), "--only", "seq*"]) == 0
    capsys.readouterr()
    store = Store(results, create=False)
    run = store.list_runs()[0][0]
    first, second = store.points(run.id)[:2]
    export = tmp_path / "array.csv"
    with open(export, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["Time", "IOPS", "MB/s"])
        for p, iops_x, mbps_x in ((first, 1.4, 1.0), (second, 1.0, 1.3)):
            for s in store.samples(p.id):
                stamp = datetime.fromtimestamp(s.t + 0.5, UTC).isoformat()
                iops = ((s.read_iops or 0) + (s.write_iops or 0)) * iops_x
                mbps = ((s.read_mbps or 0) + (s.write_mbps or 0)) * mbps_x
                out.writerow([stamp, f"{iops:.3f}", f"{mbps:.4f}"])
    assert main(["attach", run.id, str(export), "--map", "time=Time,iops=IOPS,mbps=MB/s",
                 "--results", str(results)]) == 0  # fmt: skip
    said = capsys.readouterr().out
    # the reviewer's case: IOPS +40 %, bytes within 0.1 %
    assert f"{first.key}: fio" in said
    line = next(x for x in said.splitlines() if first.key in x)
    assert "(+40.0 %, MB/s +0.0 %) agree: same bytes, other I/O count" in line, line
    line = next(x for x in said.splitlines() if second.key in x)
    assert "(+0.0 %, MB/s +30.0 %) DISAGREE" in line, line
    html = tmp_path / "r.html"
    assert main(["report", run.id, "--results", str(results), "-o", str(html)]) == 0
    text = html.read_text()
    table = text.split("Array monitor vs fio (IOPS)", 1)[1].split("</table>", 1)[0]
    assert "agree: same bytes, other I/O count" in table and "DISAGREE" in table
    assert "bytes first" in table
