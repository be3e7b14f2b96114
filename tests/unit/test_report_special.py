"""The metadata test's rates in the report: a rate that is a count over a few of fio's 1 ms
ticks says so (100 files in 2 ms or 3 ms is 50k or 33k ops/s, nothing between)."""

from __future__ import annotations

from arraybench.analysis.metadata import MetadataRow
from arraybench.finding_kinds import METADATA
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
