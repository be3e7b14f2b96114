"""Open loop on two network-namespace hosts (issue 37): one host's fio throttled to a read a
second for 3 s under 1,000 random reads a second each; the stall shows on that host only,
and the total's unserved demand is the sum of the hosts'. Many-host figures come from the
hosts' 1-second logs (fio's client writes a server's histogram logs wrong), so a stall is
known to the second."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import main_cli
from tests.e2e.test_host_events import Lab, _plan, lab  # noqa: F401  (the module's hosts)
from tests.e2e.test_host_events import pytestmark as host_marks

pytestmark = [*host_marks, pytest.mark.paced, pytest.mark.slow]
STALL_S = 3.0
RATE = 1000  # each host's (the plan's rate_iops, one worker)


def test_a_throttled_host_stalls_alone_and_the_total_is_the_sum(
    lab: Lab,  # noqa: F811
    tmp_path: Path,
) -> None:
    events = (f"      - {{at: 3s, duration: 3s, host: h1, "
              f"throttle: {{device: {lab.device}, read_iops: 1}}}}\n")  # fmt: skip
    # 10 s: the stall shows at 4-7 s of h1's log, its backlog drains in the second after it,
    # and fio's catch-up must land before the end (at 8 s it did not: h1's I/Os were lost)
    plan = _plan(lab, tmp_path, 2, events, "10s")
    results = tmp_path / "res"
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stdout + done.stderr
    shown = main_cli("show", "latest", "--results", str(results), "--format", "json")
    [point] = json.loads(shown.stdout)["points"]
    ol = point["open_loop"]
    assert ol["resolution_s"] == 1
    h0, h1 = ol["hosts"]["h0"], ol["hosts"]["h1"]
    assert h0["intended_iops"] == h1["intended_iops"] == RATE and ol["intended_iops"] == 2 * RATE
    assert len(h1["stalls"]) == 1, (h1, done.stdout[-2000:])
    [stall] = h1["stalls"]
    assert STALL_S - 1.2 <= stall["length_s"] <= STALL_S + 1.2, h1  # to the second
    assert stall["cause"] == "storage" and h0["stalls"] == [], (h0, h1)
    assert [s["host"] for s in ol["stalls"]] == ["h1"]
    assert ol["longest_stall_s"] == h1["longest_stall_s"]
    assert abs(h1["unserved_peak_ios"] - RATE * STALL_S) <= 0.3 * RATE * STALL_S, h1
    # the total's backlog is the sum of the hosts' at each moment: at its peak, h1's peak
    # plus whatever h0 owed then (at most its own peak); each schedule's origin is its own
    # (the 1st percentile of its completions' offsets), so the sum holds to a few I/Os:
    # 2,683 for h1 against 2,681.1 for the total seen
    assert h1["unserved_peak_ios"] <= ol["unserved_peak_ios"] + 0.01 * RATE * STALL_S
    assert ol["unserved_peak_ios"] <= h1["unserved_peak_ios"] + h0["unserved_peak_ios"] + 1
    assert ol["ios"] == h0["ios"] + h1["ios"]
    report = tmp_path / "r.md"
    done = main_cli("report", "latest", "--results", str(results), "-o", str(report))
    assert done.returncode == 0, done.stderr
    rows = [line for line in report.read_text().splitlines() if line.startswith("| rr/")]
    [on_h1] = [r for r in rows if " on h1 |" in r]
    [on_h0] = [r for r in rows if " on h0 |" in r]
    assert "storage" in on_h1 and "| none |" in on_h0, rows
