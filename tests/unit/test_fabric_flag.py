"""A figure beyond the declared fabric: the `above-ceiling` flag (analysis/validity.py) from the
ceiling of analysis/fabric.py, the many-host ceiling, and the summary cell that says it."""

from __future__ import annotations

import pytest

from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.fabric import payload_ceiling, workload_ceiling
from arraybench.analysis.headline import Headline
from arraybench.analysis.validity import THRESHOLDS, PointFacts, grade, point_flags
from arraybench.report.build import cell_texts
from arraybench.report.charts.curve import curve_chart
from arraybench.report.model import CurvePanel
from arraybench.report.render.html.lazycharts import panel_record

MiB = 1024 * 1024


def test_the_reviewers_figure_is_flagged_with_both_readings() -> None:
    """2,782 MB/s of 1 MiB reads on one 16GFC link (1,676 MB/s of payload): 166 %."""
    top = workload_ceiling(["1 x FC 16G"], MiB, 100)
    assert top.mb_per_s == pytest.approx(payload_ceiling("1 x FC 16G", MiB).mb_per_s)
    [flag] = point_flags(PointFacts(jobs=4, mb_per_s=2782.0, ceiling=top))
    assert flag.kind == "above-ceiling" and grade(flag.kind) == "invalidating"
    assert f"2,782 MB/s is {2782 / top.mb_per_s:.0%}" in flag.why and "1 x FC 16G" in flag.why
    assert "fabric:" in flag.change and "cache" in flag.change  # both readings
    assert "above-ceiling" in THRESHOLDS  # the appendix's "how graded" row


def test_within_the_models_margin_is_not_flagged() -> None:
    top = workload_ceiling(["1 x FC 16G"], MiB, 100)
    assert point_flags(PointFacts(jobs=4, mb_per_s=1.04 * top.mb_per_s, ceiling=top)) == []
    assert point_flags(PointFacts(jobs=4, mb_per_s=1.06 * top.mb_per_s, ceiling=top))
    assert point_flags(PointFacts(jobs=4, mb_per_s=5000.0)) == []  # no fabric declared


def test_each_host_brings_its_links() -> None:
    """`fabric:` is one host's links: 4 hosts carry 4 times as much (a ladder's S4)."""
    one = workload_ceiling(["2 x 25GbE iSCSI"], 65536, 70, mtu=9000)
    four = workload_ceiling(["2 x 25GbE iSCSI"], 65536, 70, mtu=9000, hosts=4)
    assert four.mb_per_s == pytest.approx(4 * one.mb_per_s) and four.hosts == 4
    assert four.label == "fabric 2 x 25GbE iSCSI, x 4 hosts" and one.label.endswith("iSCSI")
    mixed = payload_ceiling("2 x 25GbE iSCSI", 65536, "mixed", mtu=9000, read_fraction=0.7)
    assert one.iops == pytest.approx(mixed.iops)
    three = 3 * one.mb_per_s  # 3 hosts' worth of data on 4 hosts' links: not beyond them
    facts = PointFacts(jobs=4, mb_per_s=three, ceiling=four)
    assert point_flags(facts) == []


def _headline(mbps: float) -> Headline:
    top = CurvePoint(4.0, mbps, 900.0, 2000.0, key="r/w4")
    low = CurvePoint(1.0, mbps / 2, 300.0, 800.0, key="r/w1")  # the maximum named on its own
    return Headline(optimal=low, maximum=top, min_latency=low, bounded=None, bound_us=1000.0,
                    bound_stat="mean", at_first=low)  # fmt: skip


def test_the_summary_says_a_maximum_beyond_the_fabric() -> None:
    class Run:
        latency_bound_us, latency_stat = 1000.0, "mean"

    _, beyond, _ = cell_texts(_headline(2782.0), "MB/s", Run(), 1676.0)  # type: ignore[arg-type]
    assert "2,782 MB/s max (166% of theoretical: more than the fabric carries)" in beyond
    _, within, _ = cell_texts(_headline(1600.0), "MB/s", Run(), 1676.0)  # type: ignore[arg-type]
    assert "(95% of theoretical)" in within and "more than" not in within


def test_a_curve_chart_drawn_by_the_page_names_its_ceiling_as_the_inline_one() -> None:
    """A big run's lazy curve charts (report/render/html/lazycharts.py) carry the same label."""
    panel = CurvePanel(mix_label="Read", x_label="workers", x_values=[1.0, 2.0],
                       x_ticks=["1", "2"], throughput_unit="MB/s", throughput=[300.0, 600.0],
                       lat_mean_us=[100.0, 150.0], lat_p99_us=[200.0, 300.0], optimal_index=1,
                       max_index=1, min_latency_index=0, ceiling=836.0,
                       ceiling_label="fabric 1 x FC 8G")  # fmt: skip
    assert panel_record(panel)["cl"] == "theoretical 836 MB/s (fabric 1 x FC 8G)"
    assert "theoretical 836 MB/s (fabric 1 x FC 8G)" in curve_chart(panel)
