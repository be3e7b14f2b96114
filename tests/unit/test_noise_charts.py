"""Flagged points leave the headline figures, levels differ only beyond their noise, and the
curves draw the repeats' 95 % interval and mark flagged points (issue 18)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from arraybench.analysis.adaptive import AdaptiveSearch
from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.headline import headline as summarize
from arraybench.analysis.noise import Level, differ, optimal_confidence, samples_spread_pct
from arraybench.analysis.repeats import level_wins
from arraybench.analysis.statistics import spread
from arraybench.engines.fio.jobfile import render_jobfile
from arraybench.errors import PlanError
from arraybench.plan.confidence import steady_limit
from arraybench.plan.expand import expand
from arraybench.plan.load import parse_plan_text
from arraybench.report.charts.curve import curve_chart, point_tip
from arraybench.report.charts.timechart import TimeSeries, xy_chart
from arraybench.report.model import CurvePanel
from arraybench.report.render.html.page import render_html
from arraybench.report.sections.headlines import run_headlines
from arraybench.report.sections.scaling import scaling_overlay, scaling_tables
from arraybench.report.sections.seedtables import maximum_recorded
from arraybench.report.sections.spread import LevelFacts
from arraybench.run.adaptive_series import NOISE_SOURCE, run_adaptive
from arraybench.store.db import PointRecord, RunRecord, Sample
from benchmarks.adaptive_sim import closed_loop_curve, simulate
from tests.records import BLANK_POINT, keyed
from tests.unit.test_html import make_model
from tests.unit.test_plan_scenarios import RUN


def curve(flag_at: float | None = None) -> list[CurvePoint]:
    # throughput rises to 16 jobs; 16 is the maximum and the optimal point unless flagged
    rows = [(1, 100.0, 10.0), (2, 190.0, 10.5), (4, 300.0, 13.0), (8, 380.0, 21.0),
            (16, 450.0, 35.0)]  # fmt: skip
    return [CurvePoint(level, t, lat, None, f"w{level}", flagged=level == flag_at)
            for level, t, lat in rows]  # fmt: skip


def test_flagged_point_leaves_the_headline_figures_unless_asked() -> None:
    plain = summarize(curve())
    assert plain.maximum and plain.maximum.key == "w16" and plain.left_out == ()
    flagged = summarize(curve(flag_at=16))
    assert flagged.maximum and flagged.maximum.key == "w8"
    assert flagged.optimal and flagged.optimal.key != "w16"
    assert [p.point.key for p in flagged.left_out] == ["w16"]
    kept = summarize(curve(flag_at=16), include_flagged=True)
    assert kept.maximum and kept.maximum.key == "w16" and kept.left_out == ()


def test_every_point_flagged_names_them_all() -> None:
    everything = [CurvePoint(p.level, p.throughput, p.lat_mean_us, None, p.key, True)
                  for p in curve()]  # fmt: skip
    found = summarize(everything)
    assert found.maximum and found.maximum.key == "w16" and found.left_out == ()


def test_levels_differ_only_beyond_their_intervals() -> None:
    assert differ(Level("a", 100.0, 2.0), Level("b", 103.0, 2.0)) is False  # 98-102 vs 101-105
    assert differ(Level("a", 100.0, 2.0), Level("b", 110.0, 2.0)) is True
    assert differ(Level("a", 100.0, None), Level("b", 300.0, 1.0)) is None  # no spread


def test_per_second_samples_give_a_spread() -> None:
    assert samples_spread_pct([5.0, 100.0, 100.0, 100.0, 100.0]) is None  # 4 after the first
    steady = samples_spread_pct([5.0, 100.0, 101.0, 99.0, 100.0, 100.0])
    noisy = samples_spread_pct([5.0, 80.0, 120.0, 90.0, 110.0, 100.0])
    assert steady is not None and noisy is not None and steady < 1.5 < 10 < noisy


def test_optimal_confidence_says_which_neighbours_are_within_noise() -> None:
    levels = [Level("4", 300.0, 3.0), Level("8", 380.0, 3.0), Level("16", 385.0, 3.0)]
    assert optimal_confidence(levels, "8", 2, 3) == (
        "optimal 8 (in 2 of 3 repetitions); 16 is within noise of it"
    )
    apart = [Level("4", 300.0, 1.0), Level("8", 380.0, 1.0), Level("16", 450.0, 1.0)]
    assert "differ from it beyond noise" in optimal_confidence(apart, "8")
    assert optimal_confidence([Level("8", 1.0, None), Level("16", 2.0, None)], "8") == ""
    alone = [Level("8", 1.0, None)]
    assert optimal_confidence(alone, "8", 3, 3) == "optimal 8 (in all 3 repetitions)"
    assert optimal_confidence(alone, "8", 0, 2) == (
        "optimal 8 (on the medians; none of the 2 repetitions alone had it)"
    )


def panel(**kw: object) -> CurvePanel:
    base: dict[str, object] = dict(
        mix_label="Read", x_label="workers", x_values=[1.0, 2.0, 4.0], x_ticks=["1", "2", "4"],
        throughput_unit="IOPS", throughput=[1000.0, 1900.0, 2500.0],
        lat_mean_us=[100.0, 105.0, 160.0], lat_p99_us=[200.0, 210.0, 400.0], optimal_index=1,
        max_index=2, min_latency_index=0,
    )  # fmt: skip
    return CurvePanel(**(base | kw))  # type: ignore[arg-type]


def test_once_measured_curve_has_no_band_and_no_flag_marker() -> None:
    svg = curve_chart(panel())
    assert "band-tput" not in svg and "errbar" not in svg and "mark-flagged" not in svg
    assert "95 % interval" not in svg and "flagged: see table" not in svg


def test_repeated_curve_draws_its_interval_and_flagged_points() -> None:
    cis = [(950.0, 1050.0), (1800.0, 2000.0), (2300.0, 3200.0)]
    svg = curve_chart(panel(throughput_ci=cis, lat_mean_ci=[(90.0, 110.0), None, (150.0, 170.0)],
                            repeats=3, flagged=["", "", "generator-bound"]))  # fmt: skip
    assert svg.count('class="band-tput"') == 1 and svg.count('class="errbar-lat"') == 2
    assert "95 % interval of 3 repeats (band, bars)" in svg and "flagged: see table" in svg
    assert svg.count('class="mark-flagged"') == 1
    # the axis reaches the interval's top (3,200), not only the median (2,500)
    assert ">3.5k<" in svg or ">4k<" in svg
    tip = point_tip(panel(throughput_ci=cis, flagged=["", "", "generator-bound"]), 2, "4")
    assert "95 %: 2.3 kIOPS to 3.2 kIOPS" in tip and "flagged: generator-bound" in tip


def test_a_repeated_point_between_single_ones_gets_an_error_bar() -> None:
    svg = curve_chart(panel(throughput_ci=[None, (1800.0, 2000.0), None], repeats=2))
    assert 'class="errbar-tput"' in svg and "band-tput" not in svg


PLATEAU = {1: 100.0, 2: 200.0, 4: 380.0, 8: 400.0, 16: 410.0, 32: 405.0, 64: 395.0}


def search_plateau(noise: float | None) -> AdaptiveSearch:
    search = AdaptiveSearch(list(PLATEAU))
    while (level := search.next_level()) is not None:  # latency by Little's law
        search.record(level, PLATEAU[level], level / PLATEAU[level] * 1e6, noise_pct=noise)
    return search


def test_search_does_not_refine_between_levels_within_noise() -> None:
    exact = search_plateau(None)
    assert exact.estimate() == (4, 16) and exact.confidence() == ""
    noisy = search_plateau(4.0)  # ±4 %: 380, 395 and 410 cannot be told apart
    assert len(noisy.tried) < len(exact.tried)
    assert "4 and 64 are within noise of each other" in noisy.explanation
    assert noisy.confidence() == "optimal 4; 64 is within noise of it"
    assert noisy.confidence({4: "w4-qd1", 64: "w64-qd1"}).startswith("optimal w4-qd1; w64")


def test_a_gain_inside_the_noise_is_flat_for_the_stop_rule() -> None:
    curve = closed_loop_curve(100_000, 8, sharpness=1.5)  # creeps up slowly past the knee
    ladder = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
    exact, noisy = simulate(curve, ladder), simulate(curve, ladder, spread_pct=5.0)
    assert exact.stopped_by == "ladder_end" and noisy.stopped_by == "flat"
    assert "or within noise" in noisy.reason and len(noisy.tried) < len(exact.tried)
    assert noisy.optimal_level == exact.optimal_level  # the knee is well beyond the noise
    # a spread far below the steps changes nothing
    assert simulate(curve, ladder, spread_pct=0.5).tried == exact.tried


W = "workloads: [{name: a, pattern: random, bs: 4k, read: 100}]\n"


def test_steady_limit_guarantees_the_asked_interval() -> None:
    for window in (3, 5, 10, 60):
        limit = steady_limit(3.0, window)
        # the widest scatter fio's test lets through: half the samples at +limit, half at -
        worst = [100 + limit * (1 if i % 2 else -1) for i in range(window)]
        found = spread(worst).half_width_pct
        assert found is not None and found <= 3.0 + 1e-9, (window, limit, found)
    assert round(steady_limit(3.0, 60), 1) == 11.4  # 3 x sqrt(59) / t(40) = 2.021


def test_steady_interval_tightens_fios_limit_in_the_job_file() -> None:
    plan = parse_plan_text("name: t\ntiming: {duration: 60s, steady: {window: 60s, interval: 3}}\n"
                           + W, "p.yaml")  # fmt: skip
    text = render_jobfile(expand(plan)[0], {})
    assert "steadystate=iops:11.4%" in text
    loose = parse_plan_text("name: t\ntiming: {duration: 60s, steady: {window: 60s, limit: 5, "
                            "interval: 3}}\n" + W, "p.yaml")  # fmt: skip
    assert "steadystate=iops:5%" in render_jobfile(expand(loose)[0], {})  # already tighter
    with pytest.raises(PlanError, match="interval needs a window of at least 3 s"):
        parse_plan_text("name: t\ntiming: {duration: 10s, steady: {window: 2s, interval: 3}}\n"
                        + W, "p.yaml")  # fmt: skip


def hosts_point(key: str, hosts: int, iops: float, seq: int) -> PointRecord:
    metrics = dict(BLANK_POINT.metrics) | {"total_iops": iops, "total_lat_mean_us": 100.0}
    return keyed(BLANK_POINT, key, id=seq + 1, seq=seq, hosts=hosts, metrics=metrics)


def test_scaling_leaves_a_flagged_maximum_out_and_draws_the_interval() -> None:
    points = [hosts_point("a/h1/w1", 1, 100.0, 0), hosts_point("a/h1/w2", 1, 150.0, 1),
              hosts_point("a/h2/w1", 2, 200.0, 2), hosts_point("a/h2/w2", 2, 320.0, 3)]  # fmt: skip
    facts = LevelFacts(throughput={"a/h2/w1": spread([190.0, 200.0, 210.0])},
                       flagged={"a/h2/w2": ["generator-bound"]})  # fmt: skip
    [table] = scaling_tables(points, facts)
    assert table.rows[1][2] == "200 IOPS"  # not the flagged 320
    # with the series' headlines (as the report passes them): their maxima, the same figure
    heads = run_headlines(points, RUN, facts)
    assert heads["randread-8k (2 hosts)"].maximum.key == "a/h2/w1"  # type: ignore[union-attr]
    assert scaling_tables(points, facts, heads) == [table]
    [chart] = scaling_overlay(points, facts)
    [line] = chart.lines
    assert line.iops == [150.0, 200.0] and line.iops_ci[0] is None
    low_high = line.iops_ci[1]
    assert low_high is not None and low_high[0] < 200.0 < low_high[1]
    keep = replace(facts, include_flagged=True)
    assert scaling_tables(points, keep)[0].rows[1][2] == "320 IOPS (flagged)"
    svg = xy_chart("s", [0.0, 1.0], [TimeSeries("a", line.iops, "IOPS",
                   interval=line.iops_ci)], x_label="hosts")  # fmt: skip
    assert 'class="band' in svg and "95 % interval of the repeats" in svg
    plain = xy_chart("s", [0.0, 1.0], [TimeSeries("a", line.iops, "IOPS")], x_label="hosts")
    assert 'class="band' not in plain and "95 % interval" not in plain


def test_maximum_recorded_leaves_flagged_points_out() -> None:
    points = [hosts_point("a/w1", 1, 100.0, 0), hosts_point("a/w2", 1, 320.0, 1)]
    run = RunRecord(id="r", plan_name="t", scenario="", labels={}, plan_yaml="", folder="/x",
                    scale=1, status="complete", started="", finished=None, total_points=2,
                    engine_version=None, arraybench_version="0", host="h", kernel="k", targets=[],
                    latency_bound_us=1000.0, latency_stat="mean")  # fmt: skip
    flagged = LevelFacts(flagged={"a/w2": ["generator-bound"]})
    [table] = maximum_recorded(points, run_headlines(points, run, flagged))
    assert (
        table.rows[0][1].startswith("100 IOPS") and "1 flagged point(s) left out" in table.caption
    )
    [everything] = maximum_recorded(points, run_headlines(points, run, LevelFacts()))
    assert everything.rows[0][1].startswith("320 IOPS") and "flagged" not in everything.caption


def test_a_flagged_level_wins_no_repetition() -> None:
    points = [hosts_point("a/w1", 1, 100.0, 0), hosts_point("a/w2", 1, 320.0, 1),
              hosts_point("a/w1#2", 1, 110.0, 2), hosts_point("a/w2#2", 1, 300.0, 3)]  # fmt: skip
    [plain] = level_wins(points)
    assert plain.maximum == [("a/w2", 2)]
    [kept_out] = level_wins(points, {"a/w2"})
    assert kept_out.maximum == [("a/w1", 2)] and kept_out.optimal == [("a/w1", 2)]


def test_the_workloads_section_says_whether_its_curves_have_a_spread() -> None:
    model = make_model()
    assert "the curves have no spread (no band is drawn)" in render_html(model)
    section = model.sections[0]
    banded = replace(section.panels[0], throughput_ci=[(1.0, 2.0)] * 3, flagged=["", "x", ""])
    model.sections[0] = replace(section, panels=[banded])
    html = render_html(model)
    assert "the 95 % interval of the mean over the repeats" in html and "Red crosses" in html
    assert "no band is drawn" not in html


def test_an_adaptive_series_reads_each_levels_noise_from_its_seconds() -> None:
    plan = parse_plan_text("name: t\nload: {workers: [1, 2, 4, 8, 16, 32, 64], iodepth: [1], "
                           "adaptive: exact}\n" + W, "p.yaml")  # fmt: skip
    points = expand(plan)
    records = {p.key: replace(hosts_point(p.key, 1, PLATEAU[p.level.workers], i),
                              workers=p.level.workers)
               for i, p in enumerate(points)}  # fmt: skip
    for key, r in records.items():  # Little's law latency, as the plateau above
        records[key] = replace(r, metrics=r.metrics | {"total_lat_mean_us": r.workers
                                                       / r.throughput() * 1e6})  # fmt: skip
    by_id = {r.id: r for r in records.values()}

    def seconds(point_id: int) -> list[Sample]:  # ±4 % around the level, 8 seconds
        level = by_id[point_id].throughput()
        wobble = [0.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0]
        return [Sample(t, level * (1 + 0.04 * w), None, None, None, None, None)
                for t, w in enumerate(wobble)]  # fmt: skip

    found = run_adaptive(points, "exact", 1000.0, "mean", lambda p: records[p.key], seconds)
    assert found.finding["noise"] == NOISE_SOURCE
    assert "within noise" in found.finding["reason"] and found.finding["confidence"]
    plain = run_adaptive(points, "exact", 1000.0, "mean", lambda p: records[p.key])
    assert plain.finding["confidence"] == "" and len(plain.tried) > len(found.tried)
