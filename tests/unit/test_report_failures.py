"""The words of an event's recovery in the impact tables (report/sections/failures.py)."""

from __future__ import annotations

from typing import Any

import pytest

from arraybench.report.sections.failures import host_impact_table, recovery_text


def _impact(start: float | None, revert: float | None, **more: Any) -> Any:
    return {"label": "h2 path slow", "kind": "throttle", "start_unix": 1e9,
            "end_unix": 1e9 + 2, "baseline": 400.0, "low": 200.0, "dip_pct": 50.0,
            "baseline_seconds": 3, "recovery_after_start_s": start,
            "recovery_after_revert_s": revert, "max_latency_us": 150.0, **more}  # fmt: skip


@pytest.mark.parametrize(
    ("start", "revert", "said"),
    [
        (0.0, None, "no dip"),  # a host the event spared, its point ended soon after the revert
        (0.0, 0.0, "no dip"),
        (2.0, None, "2.0 s after the start; not after the revert"),
        (None, 1.0, "1.0 s after the revert"),
        (None, None, "not before the point ended"),
    ],
)
def test_a_load_that_never_dipped_is_not_said_to_miss_its_recovery(
    start: float | None, revert: float | None, said: str
) -> None:
    assert recovery_text(_impact(start, revert)) == said


def test_a_dip_within_the_band_is_no_dip_whatever_the_windows_found() -> None:
    """-0.2 % on a host the event spared: 'no dip', also when no 3 s window fitted in the
    event (no recovery after the start) and one did after the revert."""
    assert recovery_text(_impact(None, 0.0, dip_pct=0.2)) == "no dip"
    assert recovery_text(_impact(None, 0.0, dip_pct=12.0, band_pct=15.0)) == "no dip"
    assert recovery_text(_impact(None, 0.0, dip_pct=12.0)) == "0.0 s after the revert"


def test_the_per_host_table_says_which_host_dipped_and_which_did_not() -> None:
    slow = _impact(None, 1.0, low=50.0, dip_pct=87.5)
    spared = _impact(0.0, None, low=399.6, dip_pct=0.1)
    data: Any = {"host_impact": {"h0": [spared], "h2": [slow]},
                 "host_io_errors": {"h0": 0, "h2": 0}}  # fmt: skip
    table = host_impact_table("rr/w1-qd1-h3", "IOPS", data)
    assert [(r[1], r[4], r[5]) for r in table.rows] == [
        ("h0", "-0.1 %", "no dip"), ("h2", "-87.5 %", "1.0 s after the revert")]  # fmt: skip
