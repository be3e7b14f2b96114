"""Write cliff: a sustained drop below (1 - drop) x the level before, lasting >= min_duration_s.

The real case is sample 12 (tests/data/MANIFEST.md rows 12a-c): fio 3.33, 4k randwrite QD32
on a consumer NVMe, 1 s log windows: 370k IOPS -> cliff -> ~400k after recovery.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from arraybench.analysis.cliff import (
    CliffResult,
    find_write_cliff,
    gc_throughput_estimate,
    pause_after,
)

DATA = Path(__file__).resolve().parents[1] / "data"


def read_log(name: str) -> tuple[list[float], list[float]]:
    """(time in s, value) from a fio per-interval log: time_ms, value, ddir, bs, prio."""
    times: list[float] = []
    values: list[float] = []
    for line in (DATA / name).read_text().splitlines():
        if line.strip():
            cols = [c.strip() for c in line.split(",")]
            times.append(int(cols[0]) / 1000)
            values.append(float(cols[1]))
    return times, values


def one_per_second(values: list[float]) -> tuple[list[float], list[float]]:
    return [float(i + 1) for i in range(len(values))], values


# ---------------------------------------------------------------------------- real sample


def real() -> tuple[list[float], list[float], list[float]]:
    t, iops = read_log("12_samyaple_fio3.33_iops.1.log")
    t_bw, bw_kib = read_log("12_samyaple_fio3.33_bw.1.log")
    assert t_bw == t and len(t) == 54
    return t, iops, [b * 1024 for b in bw_kib]  # bw log is KiB/s -> bytes/s


def test_real_write_cliff() -> None:
    t, iops, bw = real()
    c = find_write_cliff(t, iops, bw_bytes=bw)
    assert c is not None
    # Log rows: 1000 ms 370139, 2000 ms 401155, 3000 ms 156837, 4000 ms 33740, 5000 ms 26214.
    # Before 3 s: median(370139, 401155) = 385647 -> threshold 0.5 x 385647 = 192823.5.
    # The 3000 ms sample (156837) is the first below it and the 3 s window 3..5 s has median
    # 33740 < 192823.5. At 2 s: 401155 is not below 0.5 x 370139. -> drop at 3.0 s.
    assert c.time_s == 3.0
    assert c.level_before == 385647
    # The low phase ends where a 3 s window is back above 192823.5: window 42..44 s =
    # 153790, 210736, 294935 (median 210736); its first sample above is 43.001 s (210736).
    assert c.low_end_s == 43.001
    # Low phase 3..42 s = 40 samples; sorted, the 20th and 21st are 31274 and 33740:
    # median (31274 + 33740) / 2 = 32507. The single lowest second is 13891 (17.001 s);
    # the flat bottom 4..22 s sits around 14k-26k, the slow climb 23..42 s at 26k-154k.
    assert c.level_after == 32507
    assert c.level_min == 13891
    assert 13_891 <= c.level_after < 40_000
    assert c.drop_pct == pytest.approx((1 - 32507 / 385647) * 100)  # 91.57 %
    # Written before the 3000 ms sample: (1480492 + 1604640) KiB/s x 1024 x 1 s
    # = 3,159,175,168 bytes.
    assert c.gb_written_at_cliff == pytest.approx(3.159175168)
    # Recovery to >= 0.8 x 385647 = 308517.6: window 44..46 s = 294935, 356740, 406219
    # (median 356740); first sample >= 308517.6 is 45 s (356740).
    assert c.recovered
    assert c.recovery_time_s == 45.0
    # Recovered phase 45..54 s (10 samples); the 5th/6th sorted are 399072 and 399943.
    assert c.level_recovered == pytest.approx((399072 + 399943) / 2)  # 399507.5


def test_real_cliff_from_iops_and_block_size() -> None:
    t, iops, _ = real()
    c = find_write_cliff(t, iops, bytes_per_io=4096)
    assert c is not None and c.time_s == 3.0
    # (370139 + 401155) IOPS x 4096 bytes x 1 s = 3,159,220,224 bytes: agrees with the bw log
    # to 0.002 %.
    assert c.gb_written_at_cliff == pytest.approx(3.159220224)
    # bw_bytes wins when both are given.
    both = find_write_cliff(t, iops, bytes_per_io=4096, bw_bytes=real()[2])
    assert both is not None and both.gb_written_at_cliff == pytest.approx(3.159175168)
    # Neither -> unknown.
    none = find_write_cliff(t, iops)
    assert none is not None and none.gb_written_at_cliff is None


def test_real_gc_throughput_and_pause() -> None:
    t, iops, bw = real()
    c = find_write_cliff(t, iops, bw_bytes=bw)
    gc = gc_throughput_estimate(t, bw, c)
    # bw over the low phase 3..42 s: sorted 20th/21st = 125097 and 134962 KiB/s
    # -> 130029.5 KiB/s x 1024 = 133,150,208 bytes/s (about 133 MB/s).
    assert gc == pytest.approx(130029.5 * 1024)
    assert c is not None and gc is not None
    # Pause after writing what came before the cliff: 3,159,175,168 / 133,150,208 = 23.7 s.
    assert pause_after(3_159_175_168, gc) == pytest.approx(3_159_175_168 / 133_150_208)
    assert gc_throughput_estimate(t, bw, None) is None


def test_real_cliff_in_any_order() -> None:
    t, iops, bw = real()
    order = list(range(len(t)))[::-1]
    c = find_write_cliff(
        [t[k] for k in order], [iops[k] for k in order], bw_bytes=[bw[k] for k in order]
    )
    assert c == find_write_cliff(t, iops, bw_bytes=bw)


# ---------------------------------------------------------------------------- synthetic


def test_flat_series_has_no_cliff() -> None:
    assert find_write_cliff(*one_per_second([100_000.0] * 60)) is None
    # +-10 % noise (deterministic) is not a cliff either.
    noisy = [100_000.0 * (1 + 0.1 * math.sin(k * 1.7)) for k in range(60)]
    assert find_write_cliff(*one_per_second(noisy)) is None


def test_gently_declining_series_has_no_cliff() -> None:
    # 100k -> 60k linearly over 60 s: never below half of anything before it.
    t, v = one_per_second([100_000 - 40_000 * k / 59 for k in range(60)])
    assert find_write_cliff(t, v) is None
    # 100k -> 20k over 600 s: an 80 % loss, but no sudden one. The level before is taken
    # over the last 30 s (10 x min_duration_s), so the steps are ~4 % at most.
    t, v = one_per_second([100_000 - 80_000 * k / 599 for k in range(600)])
    assert find_write_cliff(t, v) is None


def test_cliff_without_recovery() -> None:
    # 20 s at 100k, then 40 s at 30k (samples at 1..60 s).
    t, v = one_per_second([100_000.0] * 20 + [30_000.0] * 40)
    c = find_write_cliff(t, v, bytes_per_io=4096)
    assert c == CliffResult(
        time_s=21.0,  # the first 30k sample
        level_before=100_000,
        level_after=30_000,
        drop_pct=pytest.approx(70.0),
        gb_written_at_cliff=pytest.approx(8.192),  # 20 s x 100k x 4096 B = 8.192e9
        recovered=False,
        recovery_time_s=None,
        level_recovered=None,
        level_min=30_000,
        low_end_s=None,  # the low phase lasts to the end
    )
    bw = [x * 4096 for x in v]
    gc = gc_throughput_estimate(t, bw, c)
    assert gc == pytest.approx(30_000 * 4096)  # 122.88 MB/s
    assert gc is not None
    assert pause_after(8.192e9, gc) == pytest.approx(8.192e9 / 122.88e6)  # 66.7 s


def test_partial_recovery_is_not_recovery() -> None:
    # 100k x 10, 20k x 10, then 70k x 10: 70k ends the low phase (>= 50k) but stays below
    # 80 % of 100k, so the drive has not recovered.
    t, v = one_per_second([100_000.0] * 10 + [20_000.0] * 10 + [70_000.0] * 10)
    c = find_write_cliff(t, v)
    assert c is not None
    assert (c.time_s, c.level_after, c.low_end_s) == (11.0, 20_000, 21.0)
    assert not c.recovered and c.recovery_time_s is None and c.level_recovered is None
    # 85k instead of 70k is a recovery (>= 80k) at 21 s, at 85k.
    t, v = one_per_second([100_000.0] * 10 + [20_000.0] * 10 + [85_000.0] * 10)
    c = find_write_cliff(t, v)
    assert c is not None
    assert (c.recovered, c.recovery_time_s, c.level_recovered) == (True, 21.0, 85_000)


def test_short_stall_is_not_a_cliff_unless_min_duration_allows() -> None:
    # Two seconds at 5k inside 100k: the 3 s window median (5k, 5k, 100k) is low, but the low
    # phase (21 s, 22 s) lasts 2 s < 3 s.
    t, v = one_per_second([100_000.0] * 20 + [5_000.0] * 2 + [100_000.0] * 20)
    assert find_write_cliff(t, v) is None
    c = find_write_cliff(t, v, min_duration_s=2)
    assert c is not None
    assert (c.time_s, c.level_after, c.low_end_s) == (21.0, 5_000, 23.0)
    assert (c.recovered, c.recovery_time_s, c.level_recovered) == (True, 23.0, 100_000)


def test_drop_threshold() -> None:
    # 100k -> 60k is a 40 % drop: no cliff at the default 50 %, a cliff at 30 %.
    t, v = one_per_second([100_000.0] * 20 + [60_000.0] * 20)
    assert find_write_cliff(t, v) is None
    c = find_write_cliff(t, v, drop=0.3)
    assert c is not None and c.time_s == 21.0 and c.drop_pct == pytest.approx(40.0)


def test_drop_too_close_to_the_end_is_not_confirmed() -> None:
    # Only 2 s of data after the drop: it cannot be shown to last 3 s.
    t, v = one_per_second([100_000.0] * 20 + [10_000.0] * 2)
    assert find_write_cliff(t, v) is None
    t, v = one_per_second([100_000.0] * 20 + [10_000.0] * 3)
    c = find_write_cliff(t, v)
    assert c is not None and c.time_s == 21.0


def test_degenerate_input() -> None:
    assert find_write_cliff([], []) is None
    assert find_write_cliff([1.0], [100.0]) is None
    assert find_write_cliff(*one_per_second([0.0] * 10)) is None
    with pytest.raises(ValueError):
        find_write_cliff([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        find_write_cliff([1.0, 2.0], [1.0, 2.0], bw_bytes=[1.0])
    with pytest.raises(ValueError):
        find_write_cliff([1.0, 2.0], [1.0, 2.0], drop=1.0)


def test_pause_after() -> None:
    assert pause_after(1e9, 1e8) == pytest.approx(10.0)
    assert pause_after(0, 1e8) == 0.0
    with pytest.raises(ValueError):
        pause_after(1e9, 0)
