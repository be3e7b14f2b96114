"""The metadata test's rates in the report: a rate that is a count over a few of fio's 1 ms
ticks says so (100 files in 2 ms or 3 ms is 50k or 33k ops/s, nothing between). The
response-time curve's "Reached": a step over its rate or off its mix is not reached."""

from __future__ import annotations

from arraybench.analysis.metadata import MetadataRow
from arraybench.analysis.validity import rate_misses
from arraybench.finding_kinds import CURVE, METADATA
from arraybench.report.sections.ratecurve import curve_report
from arraybench.report.sections.special import metadata_report
from arraybench.store.db import Finding


def _finding(elapsed: list[int]) -> Finding:
    rows = [MetadataRow("create", t, 100 * 1000 / ms, 10.0, 20.0, 100, ms)
            for t, ms in zip((1, 2, 4), elapsed, strict=True)]  # fmt: skip
    data = {"threads": 4, "rows": [r.__dict__ for r in rows]}
    return Finding(None, METADATA.name, data)


def test_short_phases_are_said_to_be_quantised() -> None:
    rates, latency = metadata_report([_finding([2, 4, 250])])
    assert rates.caption.startswith("2 of 3 rates are counts over less than 100 ms")
    assert "(the shortest 2 ms)" in rates.caption and "±50 %" in rates.caption
    assert latency.caption == ""  # the latency is fio's own timing of each call
    [long_rates, _] = metadata_report([_finding([150, 200, 250])])
    assert long_rates.caption == ""


def _curve(percent: int, achieved: float, read: float | None, **extra: object) -> Finding:
    planned = percent * 33.9  # of a 3,390 IOPS maximum
    data = {"workload": "rw70", "percent": percent, "max_iops": 3390.0, "max_key": "rw70/w2",
            "planned_iops": planned, "achieved_iops": achieved, "lat_mean_us": 100.0,
            "lat_p99_us": 300.0, "tolerance_pct": 5.0, **extra}  # fmt: skip
    if read is not None:
        misses = rate_misses(planned, 70, achieved, read, 5.0, 5.0)
        data |= {"reached": not misses, "planned_read_pct": 70.0, "achieved_read_pct": read,
                 "misses": misses}  # fmt: skip
    return CURVE.new(data)  # type: ignore[arg-type]


def test_a_curve_step_over_its_rate_or_off_its_mix_is_not_reached() -> None:
    # issue 35's curve: the "10 %" step planned 339 IOPS and ran twice that at 50/50
    [table], [figure] = curve_report([_curve(10, 678.0, 50.0), _curve(50, 1700.0, 69.6),
                                      _curve(70, 2373.0, 55.0)])  # fmt: skip
    assert table.columns[3] == "Reads (planned 70 %)"
    doubled, kept, skewed = table.rows
    assert doubled[3] == "50.0 %" and doubled[-1] == (
        "NO: 678 IOPS, 200 % of the 339 planned; 50.0 % reads, planned 70 % (tolerance 5 %)"
    )
    assert kept[-1] == "yes" and kept[3] == "69.6 %"
    assert skewed[-1] == "NO: 55.0 % reads, planned 70 % (tolerance 5 %)"
    assert figure.series[0].flagged == [True, False, True]  # red crosses, by IOPS achieved
    # a step stored before the mix was kept: its own verdict, the total only
    [old], _ = curve_report([_curve(10, 300.0, None, reached=False)])
    assert (
        old.columns[3] == "Reads"
        and old.rows[0][3] == "–"
        and old.rows[0][-1].startswith("NO: 88 % of the planned rate")
    )
