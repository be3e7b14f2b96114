"""analysis.events on synthetic 1-second series with a known dip and recovery."""

from __future__ import annotations

import pytest

from arraybench.analysis.events import (
    EventWindow,
    event_impact,
    event_start,
    windows_from_records,
)
from arraybench.events.records import Action, EventRecord, Outcome
from arraybench.store.db import Sample


def _samples(values: dict[int, float], lat: dict[int, float] | None = None) -> list[Sample]:
    """Read-only samples: IOPS per second (t = end of the second), MB/s = IOPS x 4 KiB."""
    lat = lat or {}
    return [
        Sample(t, v, None, v * 4096 / 1e6, None, lat.get(t, 100.0), None)
        for t, v in sorted(values.items())
    ]


def _series(*segments: tuple[int, int, float]) -> dict[int, float]:
    """{t: value} from (first t, last t, value) segments."""
    out: dict[int, float] = {}
    for first, last, value in segments:
        out.update(dict.fromkeys(range(first, last + 1), value))
    return out


WINDOW = EventWindow("throttle", "throttle", start_unix=110.0, end_unix=115.0)


def test_dip_and_recovery_after_revert() -> None:
    # 1000 IOPS up to 110, 100 during (110, 115], 500 in the second after, then 1000 again
    values = _series((100, 110, 1000), (111, 115, 100), (116, 116, 500), (117, 130, 1000))
    latency = {t: 5000.0 for t in range(111, 116)} | {113: 8000.0}
    [impact] = event_impact(_samples(values, latency), [WINDOW])
    assert impact.baseline == 1000 and impact.baseline_seconds == 10
    assert impact.low == 100 and impact.low_t == 111
    assert impact.dip_pct == pytest.approx(90.0)
    # the first second back within 5 % is the one ending at 117: it starts at 116
    assert impact.recovery_after_revert_s == pytest.approx(1.0)
    assert impact.recovery_after_start_s == pytest.approx(6.0)
    assert impact.max_latency_us == 8000.0
    assert impact.during_seconds == 5
    assert impact.recovered


def test_baseline_uses_only_the_window_before_the_event() -> None:
    # the second stamped 110 may end at 110.5 (stamps are rounded): partly in the event, left
    # out of the baseline
    values = _series((90, 103, 5000), (104, 109, 1000), (110, 110, 600), (111, 115, 0))
    values |= _series((116, 125, 1000))
    [impact] = event_impact(_samples(values), [WINDOW], baseline_window_s=6)
    assert impact.baseline == 1000 and impact.baseline_seconds == 6
    [unslacked] = event_impact(_samples(values), [WINDOW], baseline_window_s=6, stamp_slack_s=0)
    assert unslacked.baseline == pytest.approx((5 * 1000 + 600) / 6)
    assert impact.dip_pct == 100.0
    assert impact.recovery_after_revert_s == 0.0  # back at once: the second (115, 116]


def test_never_recovers() -> None:
    values = _series((100, 110, 1000), (111, 130, 300))
    [impact] = event_impact(_samples(values), [WINDOW])
    assert impact.dip_pct == pytest.approx(70.0)
    assert impact.recovery_after_revert_s is None and impact.recovery_after_start_s is None
    assert not impact.recovered


def test_within_the_band_is_recovered_and_one_lucky_second_is_not() -> None:
    # back at 96 % (within 5 %), but first a lone good second at 118 between bad ones
    values = _series((100, 110, 1000), (111, 117, 100), (118, 118, 1000), (119, 120, 200))
    values |= _series((121, 130, 960))
    [impact] = event_impact(_samples(values), [WINDOW])
    assert impact.recovery_after_revert_s == pytest.approx(120 - 115)
    [strict] = event_impact(_samples(values), [WINDOW], recover_pct=1)
    assert strict.recovery_after_revert_s is None
    [single] = event_impact(_samples(values), [WINDOW], hold_s=1)
    assert single.recovery_after_revert_s == pytest.approx(117 - 115)


def test_failover_recovers_before_the_revert() -> None:
    # a path fails at 110: 2 s of stall, then the other path carries the load
    values = _series((100, 110, 1000), (111, 112, 0), (113, 130, 990))
    [impact] = event_impact(_samples(values), [WINDOW])
    assert impact.dip_pct == 100.0
    assert impact.recovery_after_start_s == pytest.approx(2.0)
    assert impact.recovery_after_revert_s == 0.0


def test_no_effect_and_an_open_ended_event() -> None:
    values = _series((100, 130, 1000))
    open_ended = EventWindow("cable", "prompt", start_unix=110.4, end_unix=None, io_errors=3)
    [flat, unended] = event_impact(_samples(values), [WINDOW, open_ended])
    assert flat.dip_pct == 0.0 and flat.recovery_after_start_s == 0.0
    assert unended.during_seconds == 20 and unended.recovery_after_revert_s is None
    assert unended.io_errors == 3
    assert unended.recovered  # nothing fell


def test_a_gap_in_the_data_is_no_recovery_window() -> None:
    values = _series((100, 110, 1000), (111, 115, 100), (116, 116, 1000), (118, 119, 1000))
    [impact] = event_impact(_samples(values), [WINDOW])
    assert impact.recovery_after_revert_s is None  # 116, then 118: not 3 consecutive seconds


def test_without_samples_before_the_event() -> None:
    values = _series((111, 120, 1000))
    [impact] = event_impact(_samples(values), [WINDOW])
    assert impact.baseline is None and impact.dip_pct is None
    assert impact.low == 1000 and impact.recovery_after_revert_s is None


def test_mbps_metric_sums_reads_and_writes() -> None:
    samples = [Sample(t, 10.0, 10.0, 100.0, 50.0, 50.0, 70.0) for t in range(100, 111)]
    samples += [Sample(t, 1.0, 1.0, 10.0, 5.0, 400.0, 900.0) for t in range(111, 116)]
    samples += [Sample(t, 10.0, 10.0, 100.0, 50.0, 50.0, 70.0) for t in range(116, 125)]
    [impact] = event_impact(samples, [WINDOW], metric="mbps")
    assert impact.baseline == 150.0 and impact.low == 15.0 and impact.dip_pct == 90.0
    assert impact.max_latency_us == 900.0  # the slower direction


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="baseline_window_s"):
        event_impact([], [], baseline_window_s=0)
    with pytest.raises(ValueError, match="recover_pct"):
        event_impact([], [], recover_pct=100)
    with pytest.raises(ValueError, match="hold_s"):
        event_impact([], [], hold_s=0)
    with pytest.raises(ValueError, match="stamp_slack_s"):
        event_impact([], [], stamp_slack_s=1)
    assert event_impact([], [WINDOW])[0].baseline is None


def _record(
    index: int, kind: str, action: Action, outcome: Outcome, start: float, end: float
) -> EventRecord:
    return EventRecord(index, kind, f"e{index}", action, outcome, None, start, end, "")


def test_windows_from_records() -> None:
    records = [
        _record(0, "throttle", "apply", "ok", 10.0, 10.1),
        _record(1, "run", "run", "timeout", 11.0, 12.0),
        _record(2, "netem", "apply", "failed", 12.0, 12.0),
        _record(3, "prompt", "prompt", "ok", 12.0, 20.0),  # shown at 12, confirmed at 20
        _record(0, "throttle", "revert", "ok", 14.0, 14.2),
        _record(4, "signal", "skipped", "timeout", 30.0, 30.0),
    ]
    windows = windows_from_records(records, io_errors={0: 7})
    assert [(w.index, w.kind, w.start_unix, w.end_unix, w.io_errors) for w in windows] == [
        (0, "throttle", 10.0, 14.2, 7),
        (1, "run", 11.0, None, None),
        (3, "prompt", 20.0, None, None),
    ]


def test_the_recovery_band_is_the_baselines_own_spread_when_wider() -> None:
    # a noisy baseline (800..1200, mean 1000: its lowest second is 20 % below the mean);
    # after the revert the load is as noisy as before: 850, 1150, 900 ... never within 5 %
    # of 1000 for 3 s in a row on every second, but within its own 20 %
    noisy = {100 + k: v for k, v in enumerate([800, 1200, 1000, 900, 1100] * 2)}
    after = {116 + k: v for k, v in enumerate([850, 1150, 900, 1000, 850, 1100, 950])}
    values = noisy | _series((110, 110, 1000), (111, 115, 50)) | after
    [impact] = event_impact(_samples(values), [WINDOW])
    assert impact.baseline_spread_pct == pytest.approx(20.0)
    assert impact.band_pct == pytest.approx(20.0)
    assert impact.recovery_after_revert_s == pytest.approx(0.0)  # the first second after
    [strict] = event_impact(_samples(values), [WINDOW], recover_pct=25)
    assert strict.band_pct == 25  # the plan's percentage when it is the larger


def test_the_band_is_capped_so_a_stall_in_the_baseline_does_not_hide_the_outage() -> None:
    values = _series((100, 104, 1000), (105, 105, 0), (106, 110, 1000), (111, 115, 50))
    values |= _series((116, 125, 400))  # back to 40 %: not recovered
    [impact] = event_impact(_samples(values), [WINDOW])
    assert impact.baseline_spread_pct == pytest.approx(100.0)
    assert impact.band_pct == 50.0 and impact.recovery_after_revert_s is None


def test_a_catch_up_burst_above_the_band_is_not_recovered_and_its_overshoot_is_said() -> None:
    # issue 35: a stall, then fio catches up on the I/Os it owes: 2.5 x the rate for 8 s
    # after the revert. Back within 5 % from below at once, but not back to the steady state
    # until the burst is over: the recovery is the second after it, the burst its overshoot
    values = _series((100, 110, 1000), (111, 115, 0), (116, 123, 2500), (124, 135, 1000))
    [impact] = event_impact(_samples(values), [WINDOW])
    assert impact.dip_pct == 100.0
    assert impact.recovery_after_revert_s == pytest.approx(123 - 115)  # (123, 124]: back
    assert impact.time_to_recover_s == impact.recovery_after_revert_s
    assert impact.overshoot_pct == pytest.approx(150.0)
    assert impact.overshoot_seconds == 8
    # the burst never ends before the point does: not recovered at all
    [endless] = event_impact(_samples(_series((100, 110, 1000), (111, 115, 0),
                                              (116, 125, 2500))), [WINDOW])  # fmt: skip
    assert endless.recovery_after_revert_s is None and not endless.recovered
    assert endless.overshoot_pct == pytest.approx(150.0) and endless.overshoot_seconds == 10


def test_a_run_event_recovers_from_its_start_and_the_overshoot_ends_at_the_recovery() -> None:
    # a `run` (a controller reboot script): nothing is reverted; a 3 s stall from its start,
    # 2 s at 1.3 x, then steady; a later swing to 1.3 x (after the recovery) is not overshoot
    run = EventWindow("reboot", "run", start_unix=110.0, end_unix=None)
    values = _series((100, 110, 1000), (111, 113, 0), (114, 115, 1300), (116, 125, 1000))
    values |= _series((126, 126, 1300), (127, 130, 1000))
    [impact] = event_impact(_samples(values), [run])
    assert impact.recovery_after_start_s == pytest.approx(115 - 110)  # (115, 116]
    assert impact.time_to_recover_s == impact.recovery_after_start_s
    assert impact.overshoot_pct == pytest.approx(30.0) and impact.overshoot_seconds == 2


def test_no_overshoot_when_nothing_left_the_band() -> None:
    values = _series((100, 130, 1000)) | {120: 1030.0}  # within 5 % above: no overshoot
    [impact] = event_impact(_samples(values), [WINDOW])
    assert impact.overshoot_pct == 0.0 and impact.overshoot_seconds == 0
    [none] = event_impact(_samples(_series((100, 110, 1000))), [WINDOW])
    assert none.overshoot_pct is None  # no second after the start


def test_the_band_takes_the_baselines_swing_upwards_too() -> None:
    # a baseline that rises 16 % above its mean but falls only 4 % below it: seconds 15 %
    # above after the revert are this load's own swing, within its band
    swing = {100 + k: v for k, v in enumerate([960, 960, 960, 960, 1160] * 2)}
    values = swing | _series((110, 110, 1000), (111, 115, 50), (116, 125, 1150))
    [impact] = event_impact(_samples(values), [WINDOW])
    assert impact.baseline == pytest.approx(1000.0)
    assert impact.baseline_spread_pct == pytest.approx(16.0)
    assert impact.band_pct == pytest.approx(16.0)
    assert impact.recovery_after_revert_s == 0.0 and impact.overshoot_seconds == 0


def test_event_start_of_each_kind() -> None:
    # the window starts where the event took effect: a `run` when its command started, not
    # when it returned (the dip of a reboot script begins while it runs)
    records = [
        _record(0, "run", "run", "ok", 20.0, 26.0),
        _record(1, "prompt", "prompt", "ok", 30.0, 31.0),
        _record(2, "throttle", "apply", "ok", 40.0, 40.2),
    ]
    starts = [w.start_unix for w in windows_from_records(records)]
    assert starts == [20.0, 31.0, 40.0]
    assert [event_start(r.action, r.started_unix, r.ended_unix) for r in records] == starts
