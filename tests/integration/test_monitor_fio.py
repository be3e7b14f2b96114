"""HostSampler beside real fio: the kernel's figures against fio's, on a loop device and a file.

Loop devices: direct 4k random reads to /dev/loopN are counted once in loopN's diskstats line,
whether the loop driver reads its backing file through the page cache (``--direct-io=off``,
the default) or with O_DIRECT (``--direct-io=on``): measured here, fio's total_ios and the
kernel's read count agree exactly in both modes. What does double count is adding the loop
device and the device under its backing file: with real data behind it each I/O shows on both
(here the backing file is sparse, so the holes are read without any I/O below). arraybench
samples only the device fio targets.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.engines.fio.logs import parse_interval_log, per_second
from arraybench.monitor.compare import compare_point, kernel_series
from arraybench.monitor.sampler import HostSample, HostSampler
from arraybench.system.blockdev import block_name
from tests.conftest import needs_fio
from tests.loopdev import attached, sparse_file

pytestmark = [needs_fio, pytest.mark.serial]  # kernel and fio rates agree within 10 %

LOOP_SIZE = 64 << 20
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root")
has_losetup = pytest.mark.skipif(
    shutil.which("losetup") is None, reason="losetup (util-linux) missing"
)


def _attach(tmp_path: Path, direct_io: str) -> Iterator[str]:
    backing = sparse_file(tmp_path / "backing.img", LOOP_SIZE)
    with attached(backing, f"--direct-io={direct_io}") as dev:
        yield dev


@pytest.fixture(params=["off", "on"])
def loopdev(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A 64 MiB loop device on a sparse file, attached with --direct-io=off / on."""
    yield from _attach(tmp_path, request.param)


@pytest.fixture
def plain_loopdev(tmp_path: Path) -> Iterator[str]:
    yield from _attach(tmp_path, "off")


def _fio(target: Path | str, logs: Path, runtime: int, *options: str) -> dict:
    """Run fio with 1-second Unix-epoch iops/bw logs; return its read stats."""
    cmd = [
        "fio", "--name=x", f"--filename={target}", "--rw=randread", "--bs=4k",
        f"--runtime={runtime}", "--time_based", "--output-format=json",
        f"--write_iops_log={logs}", f"--write_bw_log={logs}", "--log_avg_msec=1000",
        "--log_unix_epoch=1", *options,
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout[proc.stdout.index("{") :])["jobs"][0]["read"]


def _fio_per_second(logs: Path) -> tuple[dict[int, float], dict[int, float]]:
    iops = dict(per_second([parse_interval_log(f"{logs}_iops.1.log")], "iops"))
    bw = per_second([parse_interval_log(f"{logs}_bw.1.log")], "bw")
    return iops, {t: kib * 1024 / 1e6 for t, kib in bw}


def _sampled_fio(
    device: str, target: Path | str, logs: Path, runtime: int, *options: str
) -> tuple[dict, list[HostSample], float]:
    """(fio read stats, host samples, seconds stop() took)."""
    sampler = HostSampler([device]).start()
    try:
        read = _fio(target, logs, runtime, *options)
    finally:
        began = time.monotonic()
        samples = sampler.stop()
        stop_s = time.monotonic() - began
    return read, samples, stop_s


DIRECT = ("--direct=1", "--ioengine=libaio", "--iodepth=4")


@pytest.mark.root
@root_only
@has_losetup
def test_kernel_agrees_with_fio_on_direct_io_to_a_loop_device(loopdev: str, tmp_path: Path) -> None:
    name = block_name(loopdev)
    assert name == Path(loopdev).name
    read, samples, stop_s = _sampled_fio(name, loopdev, tmp_path / "x", 3, *DIRECT)
    assert stop_s < 0.5
    kernel_reads = sum(s.disks[name].read_iops * s.span_s for s in samples)
    kernel_iops = kernel_reads / (read["runtime"] / 1000)
    assert kernel_iops == pytest.approx(read["iops"], rel=0.10)
    assert kernel_reads == pytest.approx(read["total_ios"], rel=0.01)  # in fact exact
    assert all(isinstance(s.t, int) for s in samples) and len(samples) >= 3
    assert [b.t - a.t for a, b in itertools.pairwise(samples)] == [1] * (len(samples) - 1)
    assert all(0 <= s.cpu.busy_pct <= 100 for s in samples)
    assert all(s.disks[name].write_iops == 0 for s in samples)


@pytest.mark.slow
@pytest.mark.root
@root_only
@has_losetup
def test_no_flag_on_direct_io_to_a_loop_device(plain_loopdev: str, tmp_path: Path) -> None:
    """Per-second means over a 6 s run (fio 3.33 drops the last window of a time_based run,
    so a 3 s run leaves only 2 rows, too few to drop the edges)."""
    name = Path(plain_loopdev).name
    logs = tmp_path / "x"
    _, samples, _ = _sampled_fio(name, plain_loopdev, logs, 6, *DIRECT)
    fio_iops, fio_mbps = _fio_per_second(logs)
    kernel_iops, kernel_mbps = kernel_series(samples, [name])
    result = compare_point(fio_iops, fio_mbps, kernel_iops, kernel_mbps, [name])
    assert len(result.seconds) >= 2
    assert result.flags == [], result
    assert result.kernel_iops is not None and result.fio_iops
    # second by second, as the check judges a gap: fio's windows and the kernel's seconds are
    # phase-shifted, so one swinging second moved the means 10.7 % apart in a CI run
    ratios = sorted(kernel_iops[t] / fio_iops[t] for t in result.seconds if fio_iops[t])
    assert ratios[len(ratios) // 2] == pytest.approx(1.0, abs=0.10), ratios


def test_buffered_reads_of_a_cached_file_are_flagged(tmp_path: Path) -> None:
    target = tmp_path / "cached.dat"
    with open(target, "wb") as fh:
        for _ in range(32):
            fh.write(os.urandom(1 << 20))
        fh.flush()
        os.fsync(fh.fileno())
    target.read_bytes()  # in the page cache now
    device = block_name(target)
    if device is None:
        pytest.skip(f"{tmp_path} is on a filesystem without a block device")
    logs = tmp_path / "x"
    options = ("--direct=0", "--invalidate=0", "--ioengine=psync", "--size=32m")
    _, samples, _ = _sampled_fio(device, target, logs, 3, *options)
    result = compare_point(*_fio_per_second(logs), *kernel_series(samples, [device]), [device])
    assert result.kernel_iops is not None and result.fio_iops, result
    assert result.kernel_iops / result.fio_iops < 0.5, result
    assert any(f.startswith("kernel saw") and f"fewer IOPS than fio on {device}" in f
               for f in result.flags), result.flags  # fmt: skip
