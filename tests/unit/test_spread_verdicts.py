"""Repeats in verdicts: a bound inside the interval is not decidable, else the margin is said;
repeats collapse to one median point per level."""

from __future__ import annotations

from dataclasses import replace

from arraybench.analysis.acceptance import FAIL, PASS, UNDECIDED, judge_all
from arraybench.analysis.repeats import collapse, point_spreads
from arraybench.analysis.validity import Flag, finding_data
from arraybench.plan.model import Expectation
from arraybench.report.sections.spread import (
    NO_SPREAD,
    flag_table,
    repeat_notes,
    spread_tables,
    thresholds_table,
)
from arraybench.store.db import Finding, PointRecord
from tests.records import BLANK_POINT, keyed

BASE = replace(BLANK_POINT, workload="rr")


def repeats(iops: list[float], workers: int = 1, first_id: int = 1) -> list[PointRecord]:
    """One level measured len(iops) times, keyed as plan.expand keys repetitions."""
    level = f"rr/w{workers}-qd1"
    return [
        keyed(BASE, level if n == 0 else f"{level}#{n + 1}", id=first_id + n, seq=first_id + n,
              workers=workers,
                metrics=dict(BASE.metrics) | {"total_iops": v, "total_lat_mean_us": 100.0})
        for n, v in enumerate(iops)
    ]  # fmt: skip


def test_collapse_gives_each_level_its_median() -> None:
    pts = repeats([100.0, 130.0, 110.0]) + repeats([300.0, 280.0, 290.0], workers=2, first_id=9)
    medians = collapse(pts)
    assert [(p.key, p.metric("total", "iops")) for p in medians] == [
        ("rr/w1-qd1", 110.0), ("rr/w2-qd1", 290.0)]  # fmt: skip
    spreads = point_spreads(pts)
    assert spreads[1].repeats == 3 and spreads[3].repetition == 3
    assert spreads[1].throughput_median == 110.0 and spreads[1].throughput_ci95_pct


def test_bound_inside_the_interval_is_not_decidable() -> None:
    pts = repeats([95_000.0, 105_000.0, 100_000.0])
    e = Expectation(workload="rr", min_iops=98_000)
    [v] = judge_all([e], pts)
    assert v.verdict == UNDECIDED and "not decidable at this noise: repeat" in v.evidence
    assert v.point == "rr/w1-qd1"


def test_clear_verdicts_state_their_margin() -> None:
    pts = repeats([99_000.0, 101_000.0, 100_000.0])
    [passed] = judge_all([Expectation(workload="rr", min_iops=80_000)], pts)
    assert passed.verdict == PASS and "iops by +25 % ±" in passed.evidence
    [failed] = judge_all([Expectation(workload="rr", min_iops=200_000)], pts)
    assert failed.verdict == FAIL and "iops by -50 % ±" in failed.evidence


def test_one_measurement_keeps_the_plain_verdict() -> None:
    [v] = judge_all([Expectation(workload="rr", min_iops=98_000)], repeats([100_000.0]))
    assert v.verdict == PASS and "±" not in v.evidence


def test_report_tables_say_spread_wins_and_flags() -> None:
    pts = repeats([100.0, 130.0, 110.0]) + repeats([300.0, 280.0, 290.0], workers=2, first_id=9)
    spread, won = spread_tables(pts)
    assert spread.rows[0][:2] == ["rr/w1-qd1", "3"] and spread.rows[0][2].startswith("110 IOPS ±")
    assert won.rows == [["rr", "3", "w2-qd1: 3 of 3", "w2-qd1: 3 of 3"]]
    assert repeat_notes(pts) == [] and repeat_notes(pts[:1]) == [NO_SPREAD]
    flag = Flag("generator-bound", "host CPU 97 % busy", "use fewer jobs")
    [table] = flag_table(pts, [Finding(9, "validity", finding_data([flag]))])
    assert table.rows == [["rr/w2-qd1", "generator-bound", "invalidating", "host CPU 97 % busy",
                           "use fewer jobs"]]  # fmt: skip
    assert table.medium == ""  # no remark: the one table, on paper too
    assert flag_table(pts, []) == []
    remark = Flag("split-io", "kernel saw 300 % more IOPS (same bytes ...)", "nothing")
    found = [Finding(9, "validity", finding_data([flag])), Finding(1, "validity",
             finding_data([remark])), Finding(2, "validity", finding_data([remark]))]  # fmt: skip
    screen, paper, kinds = flag_table(pts, found)
    assert (screen.medium, paper.medium, kinds.medium) == ("screen", "print", "print")
    assert len(screen.rows) == 3 and [r[0] for r in paper.rows] == ["rr/w2-qd1"]
    assert [r[:2] for r in kinds.rows] == [["split-io", "2"]]  # the remarks, by kind
    assert screen.rows[0][2] == "remark †" and "2 invalidating" not in screen.caption
    [graded] = thresholds_table(found)  # the kinds the run has, each with its threshold
    assert [r[:2] for r in graded.rows] == [["generator-bound", "invalidating"],
                                            ["split-io", "remark †"]]  # fmt: skip
    assert "MB/s within 10 %" in graded.rows[1][2] and "max_sectors_kb" in graded.rows[1][3]
    assert thresholds_table([]) == []


def test_flagged_levels_make_no_pass() -> None:
    pts = repeats([100_000.0] * 3) + repeats([300_000.0] * 3, workers=2, first_id=9)
    flagged = {"rr/w2-qd1": ["generator-bound"]}  # level keys: every repetition's flags
    e = Expectation(workload="rr", min_iops=200_000)
    [v] = judge_all([e], pts, flagged)
    assert v.verdict == UNDECIDED and v.point == "rr/w2-qd1", v
    assert "only flagged points pass (generator-bound)" in v.evidence, v
    assert "unflagged: best within the latency bound: 100 kIOPS" in v.evidence, v
    [kept] = judge_all([e], pts, flagged, include_flagged=True)
    assert kept.verdict == PASS and "the plan keeps flagged points" in kept.evidence, kept
    [low] = judge_all([Expectation(workload="rr", min_iops=50_000)], pts, flagged)
    assert low.verdict == PASS and low.point == "rr/w1-qd1", low  # proved by the trusted level
    [high] = judge_all([Expectation(workload="rr", min_iops=900_000)], pts, flagged)
    assert high.verdict == FAIL and high.point == "rr/w1-qd1", high  # no point passes at all
    every = flagged | {"rr/w1-qd1": ["ramp"]}
    [none] = judge_all([Expectation(workload="rr", min_iops=50_000)], pts, every)
    assert none.verdict == UNDECIDED, none
    assert "every point of this workload is flagged (ramp, generator-bound)" in none.evidence
