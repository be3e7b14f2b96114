"""Saturation and the optimal point's deciding step (analysis/headline.py, docs/headline.md):
a maximum on the ladder's top level that still rose may not be the device's; an optimal point
that rests on one fragile step says which step, and what a repeat would settle."""

from __future__ import annotations

from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.headline import deciding_step, headline, unsaturated
from arraybench.report.build import cell_texts
from arraybench.report.sections.headlines import headline_dict
from arraybench.report.sections.spread import decision_note, saturation_note


def P(level: float, tput: float, lat: float, key: str = "", noise: float | None = None,
      flagged: bool = False) -> CurvePoint:  # fmt: skip
    return CurvePoint(level, tput, lat, lat * 2, key=key or f"w{level:g}", noise_pct=noise,
                      flagged=flagged)  # fmt: skip


# the reviewer's shape: +18 % IOPS for +69 % latency ends the range, then +58 % for +27 %
NOISY = [P(1, 10_000, 100), P(2, 11_800, 169), P(4, 18_644, 214.6), P(8, 19_000, 420)]


class Run:
    latency_bound_us, latency_stat = 1000.0, "mean"


def test_a_maximum_still_rising_at_the_top_may_not_be_saturated() -> None:
    rising = [P(1, 100, 50), P(2, 190, 52), P(4, 300, 66)]
    h = headline(rising)
    assert h.maximum is not None and h.maximum.key == "w4"
    step = h.unsaturated
    assert step is not None and (step.start, step.to) == ("w2", "w4")
    assert round(step.gain_pct) == 58 and round(step.lat_rise_pct or 0) == 27
    [note] = saturation_note("rand-8k", h, {"w2": "2 workers", "w4": "4 workers"})
    assert "top level (4 workers)" in note and "may not be saturated" in note
    assert "2 workers → 4 workers: +58 % throughput for +27 % latency" in note
    _, extremes, _ = cell_texts(h, "IOPS", Run())  # type: ignore[arg-type]
    assert "300 IOPS max (top level, may not be saturated)" in extremes
    said = headline_dict(h)["unsaturated"]  # show --format json
    assert (said["from"], said["to"], round(said["gain_pct"])) == ("w2", "w4", 58)
    assert headline_dict(headline([P(1, 100, 50), P(2, 101, 99)]))["unsaturated"] is None


def test_a_flat_top_or_a_peak_below_it_is_saturated() -> None:
    flat = [P(1, 100, 50), P(2, 190, 52), P(4, 190 * 1.09, 100)]
    assert headline(flat).unsaturated is None  # +9 % for twice the load: flattened
    peak = [P(1, 100, 50), P(2, 190, 52), P(4, 180, 110)]
    assert headline(peak).unsaturated is None
    assert unsaturated([P(1, 100, 50)], P(1, 100, 50)) is None  # one level: no ladder
    _, extremes, _ = cell_texts(headline(peak), "IOPS", Run())  # type: ignore[arg-type]
    assert "saturated" not in extremes


def test_a_flagged_top_is_not_the_ladders_top_taking_part() -> None:
    """The top level left out by its flags: the maximum below it is at the top of the levels
    taking part, and is said so (the top measured nothing the report can name)."""
    pts = [P(1, 100, 50), P(2, 190, 52), P(4, 400, 60, flagged=True)]
    h = headline(pts)
    assert h.maximum is not None and h.maximum.key == "w2" and h.unsaturated is not None


def test_the_reviewers_noisy_step_is_named_with_what_a_repeat_settles() -> None:
    h = headline(NOISY)
    assert h.optimal is not None and h.optimal.key == "w1"  # +18 % for +69 % ends the range
    found = deciding_step(NOISY, h.optimal)
    assert found is not None and found.within_noise is None  # no spread given
    assert (found.ending.start, found.ending.to) == ("w1", "w2")
    assert found.after is not None and (found.after.start, found.after.to) == ("w2", "w4")
    labels = {p.key: f"{p.level:g} workers" for p in NOISY}
    [note] = decision_note("rand-8k", h, NOISY, labels, {})
    assert (
        "the optimal point 1 workers rests on one step measured once, 1 workers → 2 "
        "workers: +18 % throughput for +69 % latency, which ended the healthy range"
    ) in note
    assert (
        "the step after it was healthy again (2 workers → 4 workers: +58 % throughput for "
        "+27 % latency)" in note
    )
    assert "repeat: 3" in note and "whether 2 workers ends the healthy range" in note
    assert "within the noise" not in note


def test_a_step_within_the_seconds_noise_is_said() -> None:
    """No healthy step after it, but the two levels' 1-second intervals overlap: the decision
    is within the noise of one measurement."""
    pts = [P(1, 10_000, 100), P(2, 10_300, 130), P(4, 10_400, 300)]
    h = headline(pts)
    assert h.optimal is not None and h.optimal.key == "w1"
    [note] = decision_note("s", h, pts, {}, {"w1": 4.0, "w2": 4.0})  # 9.6-10.4k, 9.9-10.7k
    assert "w1 and w2 are within each other's noise" in note and "1-second samples" in note
    assert decision_note("s", h, pts, {}, {"w1": 1.0, "w2": 1.0}) == []  # apart: clear


def test_a_clear_decision_says_nothing() -> None:
    knee = [P(1, 10_000, 100), P(2, 19_000, 105), P(4, 20_000, 200), P(8, 20_100, 400)]
    h = headline(knee)
    assert h.optimal is not None and h.optimal.key == "w2"
    assert deciding_step(knee, h.optimal) is None
    assert decision_note("s", h, knee, {}, {"w2": 0.5, "w4": 0.5}) == []
    top = [P(1, 100, 50), P(2, 190, 52)]  # the optimal point is the top level: nothing after
    assert decision_note("s", headline(top), top, {}, {}) == []


def test_a_collapse_that_partly_recovers_is_a_clear_end() -> None:
    """-89 % then +106 %: healthy again, but still far below the optimal point."""
    pts = [P(1, 1000, 100), P(2, 110, 1877), P(4, 227, 1820)]
    h = headline(pts)
    assert h.optimal is not None and h.optimal.key == "w1"
    assert deciding_step(pts, h.optimal) is None


def test_the_walks_noise_skips_are_not_the_deciding_step() -> None:
    """Repeated levels within each other's interval are skipped by the walk: the step that
    ended it is the first level beyond the noise, as analysis.curves walks."""
    pts = [P(1, 1000, 100, noise=10.0), P(2, 1050, 150, noise=10.0), P(4, 1200, 400, noise=1.0),
           P(8, 2000, 410, noise=1.0)]  # fmt: skip
    h = headline(pts)
    assert h.optimal is not None and h.optimal.key == "w1"
    found = deciding_step(pts, h.optimal)
    assert found is not None and found.ending.to == "w4" and found.after is not None
    [note] = decision_note("s", h, pts, {}, {})
    assert "rests on one step, w1 → w4" in note and "more repeats" in note.lower()


def test_the_gain_is_judged_against_the_load_the_step_added() -> None:
    """dbi's ladder ends 75 -> 100 workers (+33 % load): +5 % is still a tenth of it."""
    dbi = [P(50, 1000, 100), P(75, 1400, 110), P(100, 1470, 140)]
    assert headline(dbi).unsaturated is not None
    quick = [P(4, 1000, 100), P(8, 1500, 110), P(16, 1620, 205)]  # +8 % for +86 %: at its limit
    assert headline(quick).unsaturated is None
