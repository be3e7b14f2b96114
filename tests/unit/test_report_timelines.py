"""Time zero of a point's chart: events sit at their `at:` and the axis says what zero is."""

from __future__ import annotations

import re

from arraybench.report.sections.timelines import event_marks, time_zero
from arraybench.store.db import Finding, PointRecord, Sample


def _record(action: str, at: float | None, started: float, ended: float) -> dict[str, object]:
    return {"action": action, "outcome": "ok", "label": "ctrl B pulled", "planned_at_s": at,
            "started_unix": started, "ended_unix": ended}  # fmt: skip


def _samples(first: int, n: int) -> list[Sample]:
    return [Sample(first + i, 1000.0, None, 8.0, None, 100.0, None) for i in range(n)]


def test_events_sit_at_their_at_and_the_ramp_is_said() -> None:
    # the point started at 1000 with a 3 s ramp: fio logs from 1003 on; the event was at: 5
    records = [_record("apply", 5.0, 1005.0, 1005.2), _record("revert", None, 1009.0, 1009.5)]
    findings = [Finding(7, "events", {"records": records})]
    zero, label = time_zero(_samples(1003, 10), findings)
    assert zero == 1000.0
    assert "3 s ramp" in label and "point started" in label
    marks = event_marks(findings[0].data, zero)
    assert [label for _, label in marks] == ["ctrl B pulled", "ctrl B pulled reverted"]
    # the event at its start, where its impact window starts (analysis/events.py), a revert
    # when it was done
    assert [round(t, 3) for t, _ in marks] == [5.0, 9.5]
    run = [_record("run", 5.0, 1005.0, 1011.0)]  # a command of 6 s: its effect is from 5 s on
    assert [t for t, _ in event_marks({"records": run}, zero)] == [5.0]


def test_without_events_zero_is_the_first_logged_second_and_the_axis_says_so() -> None:
    zero, label = time_zero(_samples(1003, 10), [])
    assert zero == 1003 and "after the ramp" in label


def test_snia_window_is_drawn_with_its_band_and_slope() -> None:
    from arraybench.report.render.html.page import _timeline
    from arraybench.report.sections.rounds import steady_timeline, window_guides

    values = [90_000.0, 70_000.0, 61_000.0, 60_000.0, 59_000.0, 60_500.0, 59_500.0]
    guides = dict(window_guides(values, [3, 4, 5, 6, 7]))
    assert set(guides) == {"window average", "band: average +10 %", "band: average -10 %", "slope"}
    assert guides["window average"][:2] == [None, None]  # outside the window: no line
    assert guides["band: average +10 %"][2] == 60_000.0 * 1.1
    slope = [v for v in guides["slope"] if v is not None]
    assert slope[0] > slope[-1]  # a falling window has a falling slope line
    verdict = {"values": values, "steady": True, "window_start": 2, "window_end": 7,
               "round": 7, "average": 60_000.0, "range_excursion": 0.03,
               "slope_excursion": 0.02, "track": "IOPS", "window": 5}  # fmt: skip
    html = _timeline(steady_timeline(verdict))
    assert "window average" in html and "slope" in html
    assert "latency (" not in html  # no empty latency axis
    # one mark, on the rounds' own line, named for what it is; the band lines carry none
    peaks = re.findall(r'class="label-max[^"]*"[^>]*>([^<]*)<', html)
    assert peaks == ["highest round 90 kIOPS"], peaks


def test_snia_maximum_recorded_agrees_with_the_window_table() -> None:
    """A SNIA run: 4 KiB random writes over 3 rounds (window: all 3, mean 115 kIOPS) and the
    write saturation test at 101 kIOPS. Maximum recorded names the window's 115 kIOPS, as
    the window table does, not the saturation test's 101 kIOPS."""

    from arraybench.finding_kinds import ROUNDS
    from arraybench.plan.model import Rounds
    from arraybench.report.sections.headlines import run_headlines
    from arraybench.report.sections.rounds import matrix_tables, window_means
    from arraybench.report.sections.seedtables import maximum_recorded
    from arraybench.report.sections.spread import LevelFacts
    from arraybench.run.campaign import rounds_verdict
    from tests.records import BLANK_POINT, keyed
    from tests.unit.test_plan_scenarios import RUN

    def point(key: str, iops: float, **kw: object) -> PointRecord:
        metrics = {**BLANK_POINT.metrics, "total_iops": iops, "total_lat_mean_us": 200.0}
        return keyed(
            BLANK_POINT,
            key,
            workload=key.split("/")[0],
            mix="Write",
            read_pct=0,
            family="4K",
            metrics=metrics,
            **kw,
        )  # type: ignore[arg-type]

    rounds = [point(f"iops-4k-w/w4-qd8@r{r}", v) for r, v in ((1, 130e3), (2, 115e3), (3, 100e3))]
    wsat = point("wsat/w4-qd8", 101e3)
    verdict = rounds_verdict(rounds, Rounds(workloads=["iops-*"], track="iops-4k-w", window=3,
                                            max=5), 3)  # fmt: skip
    findings = [Finding(None, ROUNDS.name, verdict)]
    [window] = matrix_tables(rounds, verdict)
    # the grid series (wsat) by their headlines, each SNIA test by its window mean
    heads = run_headlines([wsat], RUN, LevelFacts())
    [recorded] = maximum_recorded([wsat], heads, window_means(rounds, findings))
    [row] = recorded.rows
    assert window.rows[0][1].startswith("115 kIOPS"), window.rows
    assert row[1].startswith("115 kIOPS"), row  # one figure for the 4 KiB write test
