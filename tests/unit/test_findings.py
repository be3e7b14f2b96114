"""Findings on stored samples: the real write cliff of sample 12, SNIA steady state."""

from __future__ import annotations

import pytest

from arraybench.analysis.findings import cliff_finding, steady_finding
from arraybench.store.db import Sample
from tests.records import sample_12


@pytest.mark.parametrize("iops_only", [False, True])
def test_real_cliff_of_sample_12_with_gc_rate(iops_only: bool):
    found = cliff_finding(sample_12(iops_only), 4096)
    assert found["found"] and found["seconds"] == 54
    assert found["level_before"] == pytest.approx(385_647)
    assert found["level_min"] == 13_891 and found["drop_pct"] > 90
    assert found["recovered"] and found["level_recovered"] == pytest.approx(399_507.5)
    # ~3.16 GB were written before the cliff (bw log or IOPS x 4 KiB: the same within 0.1 %)
    assert found["gb_written_at_cliff"] == pytest.approx(3.159, rel=2e-3)
    # GC rate = the sustained post-cliff write rate: ~32.5k IOPS x 4 KiB ~ 133 MB/s
    assert found["gc_bytes_per_s"] == pytest.approx(133e6, rel=0.02)


def test_no_cliff_on_a_flat_series():
    flat = [Sample(100 + i, None, 50_000.0 + (i % 3) * 100, None, None, None, None)
            for i in range(30)]  # fmt: skip
    assert cliff_finding(flat, 4096) == {"found": False, "seconds": 30}


def test_steady_finding_on_the_recovered_tail():
    found = steady_finding(sample_12(True))  # 54 s: its last fifth, 10 s as 5 rounds of 2 s
    assert found["steady"] and found["window_start"] == 44 and found["samples"] == 54
    assert (found["window"], found.get("rounds")) == (10, 5)
    assert not steady_finding(sample_12(True)[:10])["steady"]  # the cliff is not steady


def test_the_steady_window_scales_with_the_point():
    """An hour of 1-second samples is judged over its last 12 minutes as 5 rounds of 144 s,
    not its last 5 seconds: a slow decline over the last minutes is NOT steady, though each
    of the last 5 seconds is as the one before."""
    hour = [Sample(i, None, 100_000.0 - max(0, i - 2800) * 40.0, None, None, None, None)
            for i in range(3600)]  # fmt: skip
    found = steady_finding(hour)
    assert (found["window"], found["window_start"], found["rounds"]) == (720, 2880, 5)
    assert not found["steady"]  # 100k -> 68k over the window: slope excursion > 10 %
    last5 = [Sample(i, None, 68_000.0, None, None, None, None) for i in range(5)]
    assert steady_finding(last5)["steady"] and steady_finding(last5)["window"] == 5
