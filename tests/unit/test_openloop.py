"""analysis.openloop on made-up histogram rows: the schedule, stalls, drain, corrected
latency, and the cause of a stall."""

from __future__ import annotations

import pytest

from arraybench.analysis.openloop import HistRow, completion_times, open_loop

RATE = 1000.0  # I/Os a second
H = 100.0  # ms between rows


def _rows(seconds: float, stall: tuple[float, float] | None = None, lat_us: float = 100.0
          ) -> list[HistRow]:  # fmt: skip
    """One job at RATE, a row every H ms; during `stall` (start s, end s) nothing completes,
    then the backlog completes in the next row (fio's catch-up)."""
    rows: list[HistRow] = []
    t0 = 1_000_000.0
    per_row = int(RATE * H / 1000)
    owed = 0
    t = H
    while t <= seconds * 1000 + 1e-9:
        if stall and stall[0] * 1000 < t <= stall[1] * 1000:
            owed += per_row
        elif owed and stall:
            # as fio writes it: the stuck I/O's row at its completion, then the owed I/Os in
            # the next row (the catch-up burst)
            stuck_us = 1e6 * (stall[1] - stall[0])
            rows.append(HistRow(0, t0 + stall[1] * 1000 + 1, [(stuck_us, 1)]))
            rows.append(HistRow(0, t0 + t, [(lat_us, per_row), (stuck_us / 2, owed - 1)]))
            owed = 0
        else:
            rows.append(HistRow(0, t0 + t, [(lat_us, per_row)]))
        t += H
    return rows


def test_an_even_load_keeps_its_schedule() -> None:
    figures = open_loop(_rows(5), RATE, H)
    assert figures is not None
    assert figures.ios == 5000 and figures.stalls == [] and figures.longest_stall_s == 0
    assert figures.drain_s is None and figures.unserved_peak_ios <= RATE * H / 1000
    # nothing late beyond one row's spread: the corrected latency is fio's
    assert figures.corrected_latency_us["p50"] == pytest.approx(100.0)
    assert figures.fio_latency_us["max"] == pytest.approx(100.0)


def test_a_stall_is_measured_and_its_backlog_drains() -> None:
    figures = open_loop(_rows(10, stall=(3.0, 6.0)), RATE, H, stuck_limit_s=2.0)
    assert figures is not None
    [stall] = figures.stalls
    assert stall.length_s == pytest.approx(3.0, abs=0.15)
    assert stall.start_s == pytest.approx(3.0, abs=0.15) and stall.cause == "storage"
    assert figures.unserved_peak_ios == pytest.approx(3000, rel=0.1)
    assert stall.drain_s is not None and stall.drain_s <= 0.2
    # 30 % of the I/Os were up to 3 s late: p99 from the intended start is ~3 s, fio's
    # own p99 only where fio saw the wait
    assert figures.corrected_latency_us["p99"] >= 2.5e6
    assert figures.stuck and figures.longest_stall_s > 2.0


def test_a_stall_while_the_generator_was_stopped_is_the_generators() -> None:
    stops = [(1_000_000.0 / 1000 + 3.0, 1_000_000.0 / 1000 + 6.0)]
    figures = open_loop(_rows(10, stall=(3.0, 6.0)), RATE, H, generator_stops=stops)
    assert figures is not None and [s.cause for s in figures.stalls] == ["generator"]
    assert figures.generator_stalled


def test_a_row_that_spans_a_stall_holds_one_late_completion() -> None:
    rows = [HistRow(0, 1000.0, [(50.0, 10)]), HistRow(0, 4000.0, [(50.0, 9), (3e6, 1)])]
    times = completion_times(rows, H)
    assert len(times) == 20 and times[-1] == (4.0, 3e6)
    assert max(t for t, _ in times[:-1]) <= 1.1  # the other 9 in the row's first H ms


def test_no_completion_no_figures_and_bad_input_refused() -> None:
    assert open_loop([], RATE, H) is None
    with pytest.raises(ValueError):
        open_loop([], 0, H)


def test_hosts_stall_alone_and_the_total_owes_their_sum() -> None:
    from arraybench.analysis.openloop import open_loop_hosts

    rows = {"h0": _rows(10), "h1": _rows(10, stall=(3.0, 6.0))}
    found = open_loop_hosts(rows, {"h0": RATE, "h1": RATE}, H)
    assert found is not None
    h0, h1 = found.hosts["h0"], found.hosts["h1"]
    assert h0.stalls == [] and [s.length_s for s in h1.stalls] == [pytest.approx(3.0, abs=0.15)]
    assert found.stall_hosts == ["h1"] and found.total.intended_iops == 2 * RATE
    assert found.total.longest_stall_s == h1.longest_stall_s
    # the total's backlog is the sum of the hosts' at each moment
    total = found.total.unserved_peak_ios
    assert h1.unserved_peak_ios <= total + 1 <= h1.unserved_peak_ios + h0.unserved_peak_ios + 2
    assert found.total.ios == h0.ios + h1.ios


def test_a_long_fast_point_is_thinned_to_the_same_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    from arraybench.analysis import openloop

    rows = _rows(10, stall=(3.0, 6.0))
    whole = open_loop(rows, RATE, H)
    monkeypatch.setattr(openloop, "MAX_IOS", 1000)  # 10,000 I/Os: every 10th placed
    thinned = open_loop(rows, RATE, H)
    assert whole is not None and thinned is not None
    assert thinned.ios == whole.ios == 10_000
    # 100 placed I/Os a second: slots of 0.2 s (20 I/Os), the stall good to one of them
    assert thinned.longest_stall_s == pytest.approx(whole.longest_stall_s, abs=0.25)
    assert thinned.unserved_peak_ios == pytest.approx(whole.unserved_peak_ios, rel=0.02)
    for name in ("p50", "p99", "max"):
        assert thinned.corrected_latency_us[name] == pytest.approx(
            whole.corrected_latency_us[name], rel=0.05, abs=200
        ), name
