"""A many-host point's logged warm-up, its arithmetic and wording: the pause in the load before
the measured run (from the hosts' logged starts, or the gates without them), a host failed in
the warm-up counted as a failed host of the point, and the lines the report shows."""

from __future__ import annotations

from arraybench.finding_kinds import HostsFinding, WarmupFinding
from arraybench.report.sections.warmup import gap_lines
from arraybench.run.fleet import HostRun
from arraybench.run.point.hosts import failed_hosts, warmup_gap_s


def _run(gate_ms: float, starts: dict[str, float], failures: dict[str, str]) -> HostRun:
    finding: HostsFinding = {
        "hosts": ["a", "b"], "per_host": {}, "start_ms": starts, "start_spread_ms": None,
        "start_gate_ms": gate_ms, "failures": failures, "watchdog": [], "offsets_ms": {},
    }  # fmt: skip
    return HostRun([], [], finding, failed=list(failures))


def test_the_gap_runs_from_the_last_hosts_warmup_end_to_the_first_measured_start():
    warm = _run(1_000_000, {"a": 1_000_002, "b": 1_000_010}, {})
    ran = _run(1_005_100, {"a": 1_005_103, "b": 1_005_101}, {})
    # the warm-up ended at b's start + 3 s = 1_003_010; the measured run began at 1_005_101
    assert warmup_gap_s(warm, ran, 3.0) == 2.091
    # no logged starts: the planned gates
    assert warmup_gap_s(_run(1_000_000, {}, {}), _run(1_005_100, {}, {}), 3.0) == 2.1


def test_a_host_failed_in_the_warmup_is_a_failed_host_of_the_point():
    ran = _run(0, {}, {})
    assert failed_hosts("k", ran, None) == ([], None)
    assert failed_hosts("k", ran, _run(0, {}, {})) == ([], None)
    failed, line = failed_hosts("k", ran, _run(0, {}, {"b": "connection lost"}))
    assert failed == ["b"]
    assert line == "point k: host(s) b failed in the warm-up (connection lost); stored as partial"
    failed, line = failed_hosts("k", _run(0, {}, {"b": "killed"}), _run(0, {}, {"b": "lost"}))
    assert failed == ["b"] and line is not None
    assert "b failed (killed)" in line and "b failed in the warm-up (lost)" in line


def test_the_report_says_the_pause_and_the_failed_hosts():
    local: WarmupFinding = {"seconds": 3.0, "samples": []}
    assert gap_lines(local) == []  # one host: the two runs follow each other directly
    many: WarmupFinding = {"seconds": 3.0, "samples": [], "hosts": ["a", "b"],
                           "failed_hosts": ["b"], "gap_s": 2.091}  # fmt: skip
    assert gap_lines(many) == [
        "the measured run started 2.1 s after the warm-up on 2 hosts ended (the hosts' start "
        "gate): no load in between",
        "warm-up failed on host(s) b: not warmed up before the measured run",
    ]
