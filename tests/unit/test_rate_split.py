"""A rate on a mixed workload is the total of a job at the planned mix, split per direction
(issue 35): `rate_iops: 500` on a 70/30 workload is fio's `rate_iops=350,150`, never
`rate_iops=500` (which fio applies to each direction: 1,000 IOPS at 50 % reads). One function
splits every rate that reaches a job file (plan/rate.py); real fio keeping the split is
tests/integration/test_mixed_rate.py."""

from __future__ import annotations

import pytest

from arraybench.engines.fio.interference import (
    InterferenceSpec,
    bg_job_rate,
    render_interference_jobfile,
)
from arraybench.engines.fio.jobfile import rate_option, render_jobfile
from arraybench.plan.expand import expand
from arraybench.plan.load import parse_plan_text
from arraybench.plan.rate import BYTES, IOPS, MIX_SLACK_PCT, JobRate, job_bandwidth, job_rate

PLAN = """name: rate
targets: [{{path: /tmp/rate-split.dat, size: 16m}}]
timing: {{ramp: 0s, duration: 2s}}
load: {{workers: [2], iodepth: [1]}}
workloads:
  - {{name: w, pattern: {pattern}, bs: 4k, read: {read}, rate_iops: {rate}}}
"""


def _job(read: int, rate: int, pattern: str = "random") -> str:
    plan = parse_plan_text(PLAN.format(read=read, rate=rate, pattern=pattern), "rate.yaml")
    [point] = expand(plan)
    return render_jobfile(point, {})


def _rate_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("rate_iops=", "rate="))]


def test_a_mixed_rate_is_the_total_split_by_the_mix() -> None:
    assert job_rate(500, 70, 4096) == JobRate(350, 150, IOPS, 4096)
    assert _rate_lines(_job(70, 500)) == ["rate_iops=350,150"]
    assert _rate_lines(_job(70, 500, "sequential")) == ["rate_iops=350,150"]
    assert _rate_lines(_job(50, 2000)) == ["rate_iops=1000,1000"]
    # one direction: one value (fio's other direction has no I/O)
    assert _rate_lines(_job(100, 500)) == ["rate_iops=500"]
    assert _rate_lines(_job(0, 500)) == ["rate_iops=500"]


@pytest.mark.parametrize("total", [*range(1, 60), 97, 1697, 3391, 49999])
@pytest.mark.parametrize("read", [1, 10, 30, 50, 67, 70, 90, 99])
def test_the_total_is_exact_and_the_mix_within_a_point(total: int, read: int) -> None:
    rate = job_rate(total, read, 4096)
    assert rate.total_iops == pytest.approx(total, abs=1e-9)
    assert abs(rate.read_pct - read) <= MIX_SLACK_PCT
    assert rate.read >= 1 and rate.write >= 1  # fio reads a 0 as "no limit"


def test_a_small_total_whose_split_is_not_whole_is_written_in_bytes() -> None:
    # 5 IOPS at 70 %: 4 + 1 would be 80 % reads; 3.5 + 1.5 IOPS of 4 KiB in bytes a second
    rate = job_rate(5, 70, 4096)
    assert rate == JobRate(14336, 6144, BYTES, 4096)
    assert (rate.read_iops, rate.write_iops, rate.read_pct) == (3.5, 1.5, 70.0)
    assert rate_option(rate) == "rate=14336,6144"
    assert _rate_lines(_job(70, 5)) == ["rate=14336,6144"]
    assert job_rate(1, 50, 8192) == JobRate(4096, 4096, BYTES, 8192)
    assert job_rate(10, 70, 4096).unit == IOPS  # 7 + 3: whole
    assert job_bandwidth(100 << 20, 70, 1 << 20).read == 73400320  # a MB/s rate: rate=R,W
    for bad in (0, -3):
        with pytest.raises(ValueError, match="at least 1 IOPS"):
            job_rate(bad, 70, 4096)


def test_the_interference_test_splits_through_the_same_function() -> None:
    spec = InterferenceSpec(targets=["/f"], base_read_pct=70, base_rate_iops=2000, base_jobs=2,
                            bg_read_pct=60, bg_rate_iops_per_step=5)  # fmt: skip
    text = render_interference_jobfile(spec, None)
    assert "rate_iops=700,300" in text  # 1,000 per base job at 70 %
    assert bg_job_rate(spec) == job_rate(5, 60, 1 << 20)
    assert rate_option(bg_job_rate(spec)) == "rate_iops=3,2"  # 5 at 60 %: whole
    assert "rate_iops=3,2" in text
