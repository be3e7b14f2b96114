"""arraybench.monitor: /proc parsers, rates with hand-computed deltas, path -> device on a fake
/sys tree and on this machine, the sampler on a fake /proc, and the fio/kernel comparison."""

from __future__ import annotations

import itertools
import os
import threading
import time
from pathlib import Path

import pytest

from arraybench.monitor.compare import (
    Disagreement,
    compare_fio_kernel,
    compare_point,
    kernel_series,
)
from arraybench.monitor.cpu import CpuCounters, CpuRates, cpu_rates, parse_proc_stat
from arraybench.monitor.diskstats import (
    DiskCounters,
    DiskRates,
    disk_rates,
    parse_diskstats,
)
from arraybench.monitor.sampler import HostSample, HostSampler, MonitorError
from arraybench.system.blockdev import block_name

# Kernel 6.18 (20 fields), copied from the development VM's /proc/diskstats.
DISKSTATS_20 = """\
   7       0 loop0 330383 0 36941630 16270 77489 6393 1957622 2652 0 8568 19243 182 0 10944694 35 983 284
   7       1 loop1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 3990206 10388 215662698 868912 2791618 30702 235044768 488835 0 247400 1359677 14150 74 2559152 1264 9913 664
 253       0 zram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
"""  # noqa: E501
# Kernel 4.19 (18 fields: discards, no flushes), with a partition and a device-mapper device.
DISKSTATS_18 = """\
   8       0 sda 179364 3411 11466754 98156 432131 322539 13584336 1209584 0 317532 1301932 0 0 0 0
   8       1 sda1 179230 3411 11461346 98076 412853 322539 13584336 1193956 0 305616 1292032 0 0 0 0
 253       0 dm-0 182299 0 11459082 101880 754731 0 13584336 2924628 0 318512 3026508 12 0 96 4
"""
# Kernel 3.10 (14 fields: no discard or flush fields).
DISKSTATS_14 = """\
   8      16 sdb 8212 5 1058890 19921 3046 2137 41456 2588 0 12054 22505
   8      17 sdb1 8112 5 1058090 19901 3046 2137 41456 2588 0 12044 22485
"""
# Kernel 2.6.18 partition line (7 fields): no timing, skipped.
DISKSTATS_7 = "   3    1 hda1 35486 38030 38030 38030\n"

REAL_STAT = """\
cpu  22702 213 17368 141817 874 0 1225 58 0 0
cpu0 8535 90 6361 77691 226 0 134 24 0 0
cpu1 14166 122 11006 64126 647 0 1091 33 0 0
intr 1000 0
ctxt 123456
"""


def _disk(name: str = "sdx", **values: int) -> DiskCounters:
    fields = dict.fromkeys(
        ("reads", "reads_merged", "sectors_read", "read_ms", "writes", "writes_merged",
         "sectors_written", "write_ms", "in_flight", "io_ticks_ms", "weighted_ms"), 0,
    )  # fmt: skip
    fields.update(values)
    return DiskCounters(name=name, major=8, minor=0, **fields)


# --------------------------------------------------------------------------- diskstats


def test_parse_20_field_lines() -> None:
    disks = parse_diskstats(DISKSTATS_20)
    assert sorted(disks) == ["loop0", "loop1", "vda", "zram0"]
    vda = disks["vda"]
    assert (vda.major, vda.minor) == (254, 0)
    assert (vda.reads, vda.reads_merged, vda.sectors_read, vda.read_ms) == (
        3990206, 10388, 215662698, 868912)  # fmt: skip
    assert (vda.writes, vda.writes_merged, vda.sectors_written, vda.write_ms) == (
        2791618, 30702, 235044768, 488835)  # fmt: skip
    assert (vda.in_flight, vda.io_ticks_ms, vda.weighted_ms) == (0, 247400, 1359677)
    assert (vda.discards, vda.discard_sectors, vda.discard_ms) == (14150, 2559152, 1264)
    assert (vda.flushes, vda.flush_ms) == (9913, 664)


def test_parse_18_field_lines_have_discards_but_no_flushes() -> None:
    disks = parse_diskstats(DISKSTATS_18)
    assert sorted(disks) == ["dm-0", "sda", "sda1"]
    assert disks["sda1"].writes == 412853 and disks["sda1"].weighted_ms == 1292032
    assert disks["dm-0"].discards == 12 and disks["dm-0"].discard_ms == 4
    assert disks["sda"].flushes is None and disks["sda"].flush_ms is None


def test_parse_14_field_lines_have_neither() -> None:
    disks = parse_diskstats(DISKSTATS_14)
    sdb = disks["sdb"]
    assert (sdb.reads, sdb.sectors_read, sdb.io_ticks_ms, sdb.weighted_ms) == (
        8212, 1058890, 12054, 22505)  # fmt: skip
    assert sdb.discards is None and sdb.flushes is None
    assert disks["sdb1"].minor == 17


def test_parse_skips_short_and_garbled_lines_and_filters_names() -> None:
    text = DISKSTATS_7 + "garbage\n   8 0 sdq x y z 1 2 3 4 5 6 7 8\n" + DISKSTATS_14
    assert sorted(parse_diskstats(text)) == ["sdb", "sdb1"]
    assert sorted(parse_diskstats(DISKSTATS_20, names={"vda", "nope"})) == ["vda"]
    assert parse_diskstats("") == {}


def test_parse_this_machines_diskstats() -> None:
    path = Path("/proc/diskstats")
    if not path.exists():
        pytest.skip("no /proc/diskstats (not Linux)")
    text = path.read_text()
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(parse_diskstats(text)) == len(lines)


def test_rates_from_hand_computed_deltas() -> None:
    before = _disk(reads=1000, reads_merged=10, sectors_read=8000, read_ms=500, writes=2000,
                   writes_merged=20, sectors_written=16000, write_ms=1000, io_ticks_ms=3000,
                   weighted_ms=4000)  # fmt: skip
    # over 2 s: +400 reads of 4 KiB (+3200 sectors), +20 read merges, +800 ms reading,
    # +100 writes of 128 KiB (+25600 sectors), +400 ms writing, +1500 ms busy, +2400 weighted
    after = _disk(reads=1400, reads_merged=30, sectors_read=11200, read_ms=1300, writes=2100,
                  writes_merged=20, sectors_written=41600, write_ms=1400, io_ticks_ms=4500,
                  weighted_ms=6400)  # fmt: skip
    r = disk_rates(before, after, 2.0)
    assert (r.read_iops, r.write_iops, r.iops) == (200.0, 50.0, 250.0)
    assert r.read_mbps == pytest.approx(3200 * 512 / 1e6 / 2)  # 0.8192
    assert r.write_mbps == pytest.approx(6.5536)  # 25600 * 512 / 10^6 / 2
    assert (r.read_merges_ps, r.write_merges_ps) == (10.0, 0.0)
    assert r.avg_wait_ms == pytest.approx(1200 / 500)  # 2.4
    assert (r.r_await_ms, r.w_await_ms) == (2.0, 4.0)
    assert r.util_pct == pytest.approx(75.0)  # 1500 of 2000 ms
    assert r.queue == pytest.approx(1.2)  # 2400 / 2000


def test_util_is_capped_and_idle_devices_have_no_wait() -> None:
    r = disk_rates(_disk(io_ticks_ms=0), _disk(io_ticks_ms=1250), 1.0)
    assert r.util_pct == 100.0
    assert r.avg_wait_ms is None and r.r_await_ms is None and r.w_await_ms is None
    assert r == DiskRates(0, 0, 0, 0, 0, 0, None, None, None, 100.0, 0.0)


def test_32_bit_millisecond_counters_wrap() -> None:
    before = _disk(reads=10, read_ms=2**32 - 100, weighted_ms=2**32 - 1)
    after = _disk(reads=110, read_ms=300, weighted_ms=499)
    r = disk_rates(before, after, 1.0)
    assert r.r_await_ms == pytest.approx(4.0)  # 400 ms over 100 reads
    assert r.queue == pytest.approx(0.5)


def test_rates_refuse_reset_counters_and_bad_intervals() -> None:
    with pytest.raises(ValueError, match="went backwards"):
        disk_rates(_disk(reads=100), _disk(reads=5), 1.0)
    with pytest.raises(ValueError, match="positive"):
        disk_rates(_disk(), _disk(), 0.0)
    other = DiskCounters("sdy", 8, 16, *([0] * 11))
    with pytest.raises(ValueError, match="different devices"):
        disk_rates(_disk(), other, 1.0)


def test_block_name_is_a_diskstats_name_on_this_machine(tmp_path: Path) -> None:
    target = tmp_path / "probe.dat"
    target.write_bytes(b"x")
    name = block_name(target)
    st = os.stat(target)
    if name is None:
        # the stated reason: this filesystem's st_dev has no block device entry
        assert not Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}").exists()
        pytest.skip(f"{tmp_path} is on a filesystem without a block device (tmpfs/overlay?)")
    assert name in parse_diskstats(Path("/proc/diskstats").read_text())


def test_block_name_of_a_real_block_device() -> None:
    node = Path("/dev/loop0")
    if not node.is_block_device():
        pytest.skip("no /dev/loop0 block device here")
    assert block_name(node) == "loop0"


# --------------------------------------------------------------------------- cpu


def test_parse_proc_stat() -> None:
    c = parse_proc_stat(REAL_STAT)
    assert c == CpuCounters(22702, 213, 17368, 141817, 874, 0, 1225, 58, ncpu=2)
    assert c.total == 22702 + 213 + 17368 + 141817 + 874 + 1225 + 58  # guest not added
    old = parse_proc_stat("cpu  100 0 50 800 50 0 0\ncpu0 100 0 50 800 50 0 0\n")  # 2.6.9
    assert old.steal == 0 and old.ncpu == 1
    with pytest.raises(ValueError, match="cpu"):
        parse_proc_stat("intr 0\n")


def test_cpu_rates_from_hand_computed_deltas() -> None:
    before = CpuCounters(100, 0, 50, 800, 50, 0, 0, 0, ncpu=4)
    # deltas: user 200, nice 100, system 100, idle 300, iowait 100, irq 50, softirq 50,
    # steal 100 -> 1000 ticks in all
    after = CpuCounters(300, 100, 150, 1100, 150, 50, 50, 100, ncpu=4)
    r = cpu_rates(before, after)
    assert r == CpuRates(
        user_pct=30.0, system_pct=20.0, iowait_pct=10.0, idle_pct=30.0, steal_pct=10.0,
        busy_pct=60.0, ncpu=4,
    )  # fmt: skip
    assert r.user_pct + r.system_pct + r.iowait_pct + r.idle_pct + r.steal_pct == 100.0


def test_cpu_rates_without_ticks_and_with_iowait_going_back() -> None:
    same = CpuCounters(1, 1, 1, 1, 1, 1, 1, 1, ncpu=2)
    assert cpu_rates(same, same).idle_pct == 100.0 and cpu_rates(same, same).busy_pct == 0.0
    after = CpuCounters(11, 1, 1, 11, 0, 1, 1, 1, ncpu=2)  # iowait 1 -> 0
    r = cpu_rates(same, after)
    assert (r.busy_pct, r.idle_pct, r.iowait_pct) == (50.0, 50.0, 0.0)


# --------------------------------------------------------------------------- sampler


def _fake_proc(root: Path, reads: int = 0, user: int = 0) -> Path:
    root.mkdir(exist_ok=True)
    line = f"   8       0 sdx {reads} 0 {reads * 8} {reads} 0 0 0 0 0 {reads} {reads}"
    _write_atomically(root / "diskstats", line + " 0 0 0 0 0 0\n")
    _write_atomically(root / "stat", f"cpu  {user} 0 0 1000 0 0 0 0 0 0\ncpu0 {user} 0 0 1000 0\n")
    return root


def _write_atomically(path: Path, text: str) -> None:
    """As the kernel does: the sampler never sees a half-written file."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def test_sampler_counts_every_io_and_stops_promptly(tmp_path: Path) -> None:
    proc = _fake_proc(tmp_path / "proc")
    sampler = HostSampler(["sdx"], proc_root=proc).start()
    _fake_proc(proc, reads=300, user=500)
    deadline = time.monotonic() + 3
    while not sampler.samples and time.monotonic() < deadline:
        time.sleep(0.05)
    began = time.monotonic()
    samples = sampler.stop()
    assert time.monotonic() - began < 0.2
    assert samples and all(isinstance(s.t, int) for s in samples)
    assert [b.t - a.t for a, b in itertools.pairwise(samples)] == [1] * (len(samples) - 1)
    assert sum(s.disks["sdx"].read_iops * s.span_s for s in samples) == pytest.approx(300)
    assert all(0 < s.span_s < 1.5 for s in samples)
    assert sampler.stop() == samples  # idempotent


def test_sampler_stop_right_after_start(tmp_path: Path) -> None:
    proc = _fake_proc(tmp_path / "proc")
    with HostSampler(["sdx"], proc_root=proc) as sampler:
        pass
    assert len(sampler.samples) <= 1
    assert not any(
        t.name == "arraybench-host-sampler" and t.is_alive() for t in threading.enumerate()
    )


def test_sampler_refuses_unknown_devices_and_missing_proc(tmp_path: Path) -> None:
    proc = _fake_proc(tmp_path / "proc")
    with pytest.raises(MonitorError, match="no block device named sdq"):
        HostSampler(["sdx", "sdq"], proc_root=proc).start()
    with pytest.raises(MonitorError, match="cannot read host counters"):
        HostSampler(["sdx"], proc_root=tmp_path / "nowhere").start()
    with pytest.raises(ValueError, match="whole number"):
        HostSampler(["sdx"], interval_s=0.5)


def test_sampler_failure_in_thread_is_raised_at_stop(tmp_path: Path) -> None:
    proc = _fake_proc(tmp_path / "proc")
    sampler = HostSampler(["sdx"], proc_root=proc).start()
    (proc / "stat").unlink()  # the next reading fails inside the thread
    time.sleep(max(0.0, 1.1 - time.time() % 1))
    with pytest.raises(MonitorError, match="host sampling failed") as info:
        sampler.stop()
    assert info.value.samples == []


def test_device_removed_mid_run_is_left_out(tmp_path: Path) -> None:
    proc = _fake_proc(tmp_path / "proc")
    sampler = HostSampler(["sdx"], proc_root=proc).start()
    _write_atomically(proc / "diskstats", "")
    samples = sampler.stop()
    assert samples and samples[-1].disks == {}
    assert any("missing from diskstats" in w for w in sampler.warnings)


# --------------------------------------------------------------------------- compare


def test_compare_fio_kernel_threshold() -> None:
    assert compare_fio_kernel(100, 91) is None
    assert compare_fio_kernel(100, 110) is None  # exactly 10 % is not "more than"
    found = compare_fio_kernel(100, 89)
    assert found == Disagreement("IOPS", 100, 89)
    assert found.relative == pytest.approx(-0.11)
    assert compare_fio_kernel(100, 130, threshold=0.5) is None
    assert compare_fio_kernel(0, 0) is None
    none_from_fio = compare_fio_kernel(0, 42)
    assert none_from_fio is not None and none_from_fio.relative is None
    assert "where fio reported none" in none_from_fio.describe("sdb", "other I/O?")
    with pytest.raises(ValueError):
        compare_fio_kernel(-1, 5)


def _series(values: list[float], start: int = 100) -> dict[int, float]:
    return {start + i: v for i, v in enumerate(values)}


def test_compare_point_page_cache_flag() -> None:
    # edges (first and last common second) are dropped: 5 and 9999 do not count
    fio_iops = _series([5, 1000, 1000, 1000, 9999])
    kernel_iops = _series([0, 620, 620, 620, 0])
    fio_mbps = _series([0, 4.0, 4.0, 4.0, 0])
    kernel_mbps = _series([0, 2.48, 2.48, 2.48, 0])
    result = compare_point(fio_iops, fio_mbps, kernel_iops, kernel_mbps, ["sdb"])
    assert result.seconds == [101, 102, 103]
    assert (result.fio_iops, result.kernel_iops) == (1000, 620)
    assert result.kernel_iops / result.fio_iops == pytest.approx(0.62)
    assert result.flags == [
        "kernel saw 38 % fewer IOPS than fio on sdb (page cache or merged I/O?)",
        "kernel saw 38 % fewer MB/s than fio on sdb (page cache?)",
    ]


def test_compare_point_merged_and_split_io() -> None:
    mbps = _series([400.0] * 4)
    merged = compare_point(_series([3200] * 4), mbps, _series([800] * 4), mbps, ["sdb", "sdc"])
    assert merged.flags == [
        "kernel saw 75 % fewer IOPS than fio on sdb+sdc (same bytes in fewer requests: merged "
        "I/O (MB/s within 10 %))"
    ]
    split = compare_point(_series([400] * 4), mbps, _series([1600] * 4), mbps)
    assert split.flags == [
        "kernel saw 300 % more IOPS than fio (same bytes in more requests: split I/O "
        "(max_sectors_kb; MB/s within 10 %))"
    ]


def test_compare_point_agreement_and_no_overlap() -> None:
    agree = compare_point(_series([100, 102]), _series([1, 1]), _series([97, 99]), _series([1, 1]))
    assert agree.flags == [] and agree.seconds == [100, 101]  # < 3 seconds: nothing dropped
    apart = compare_point(_series([1]), _series([1]), _series([1], 200), _series([1], 200))
    assert apart.seconds == [] and apart.fio_iops is None
    assert apart.flags == ["no second in common between fio's logs and the host samples"]


def test_kernel_series_sums_devices() -> None:
    cpu = CpuRates(0, 0, 0, 100, 0, 0, 1)
    a = disk_rates(_disk(reads=0), _disk(reads=100, sectors_read=800), 1.0)
    b = disk_rates(_disk(writes=0), _disk(writes=50, sectors_written=1000), 1.0)
    samples = [
        HostSample(t=10, disks={"sda": a, "sdb": b, "sdc": a}, cpu=cpu),
        HostSample(t=11, disks={"sda": a}, cpu=cpu),  # sdb missing that second
    ]
    iops, mbps = kernel_series(samples, ["sda", "sdb"])
    assert iops == {10: 150.0, 11: 100.0}
    assert mbps == pytest.approx({10: (800 + 1000) * 512 / 1e6, 11: 800 * 512 / 1e6})


def test_a_gap_in_one_second_of_a_swinging_load_is_no_disagreement() -> None:
    """Merged reads on a shared machine, measured here: the load fell from 330 to 98 MB/s;
    the kernel's whole second caught more of the high rate than fio's shifted window did.
    The means are 11 % apart, every other second agrees: no flag. A competing writer adds
    bytes in every second: flagged."""
    fio = _series([330.0, 330.0, 320.0, 98.0, 51.0])
    swung = _series([330.0, 330.0, 320.0, 180.0, 54.0])
    found = compare_point(fio, fio, swung, swung)  # seconds 1-3 after the edges
    assert (found.kernel_mbps or 0) / (found.fio_mbps or 1) > 1.10 and found.flags == []
    writer = _series([400.0, 400.0, 390.0, 150.0, 70.0])
    assert [f.split(" than")[0] for f in compare_point(fio, fio, writer, writer).flags] == [
        "kernel saw 26 % more IOPS", "kernel saw 26 % more MB/s"]  # fmt: skip
