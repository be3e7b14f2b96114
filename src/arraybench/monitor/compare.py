"""fio's figures against the kernel's (/proc/diskstats) for the same seconds and devices.

fio counts the I/Os its jobs submit and complete; the kernel counts the requests that reach
the block device. They legitimately differ when:

* **buffered I/O is served by the page cache** (``direct=0``): cached reads never reach the
  device, and buffered writes reach it later, in bulk, at writeback - the kernel sees far
  fewer IOPS than fio (or a burst after the run);
* **the block layer merges requests**: adjacent sequential I/Os become one request (the
  merge counters rise), so the kernel sees fewer IOPS for the same MB/s;
* **the block layer splits requests**: an I/O larger than the device's ``max_sectors_kb``
  becomes several requests, so the kernel sees more IOPS for the same MB/s;
* **read-ahead** on buffered sequential reads fetches more bytes than fio asked for;
* **the device carries other I/O**: a file target shares its filesystem's device with
  journal and metadata writes and with every other process on it;
* **a stacked device** (dm, md, multipath) is measured one level above or below the layer
  fio writes to, with its own merging and splitting.

With direct I/O to a whole block device nobody else uses, both should agree within a few %:
more than ``threshold`` (10 %) apart is a gap. (A point's means are stored and judged in
``analysis.kernelcheck`` / ``analysis.validity``, where the job and the target kind are known;
the lines `compare_point` words here are for callers with only the two series.) Bytes come
first: MB/s within the threshold and IOPS beyond it is the same bytes in more or fewer requests
(split or merged by the block layer: a remark, `analysis.validity`); MB/s beyond it is other
bytes on the device (or the page cache): a real disagreement. Measured here (docs/validity.md):
1 MiB direct I/O split by a loop device's ``max_sectors_kb`` (64 to 1280) moved 0.98-1.06 x
fio's bytes in 1.7-17 x its requests; merged 4 KiB sequential reads (iodepth 64 in batches,
mq-deadline) 0.91-1.07 x in 0.06 x; a 64 KiB sequential write 0.92 x in both (the edges of the
seconds); a competing ``dd`` writer on the same device 1.15-18.7 x fio's bytes.

Comparisons use the mean over the seconds both sides have. The first and the last of those
seconds are dropped when at least three remain: fio's windows are phase-shifted from the
whole seconds the kernel is sampled on (see ``sampler``), which matters where the load starts
and stops, and where it swings: a gap of the means is flagged only when the median of the
per-second ratios is as far apart (measured here: merged reads on a shared machine swinging
from 330 to 98 MB/s within a 5-second point showed 25 % more MB/s in the means, in one
second; a competing writer shows in every second).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from arraybench.monitor.sampler import HostSample

DEFAULT_THRESHOLD = 0.10
TOLERANCE = f"{DEFAULT_THRESHOLD * 100:.0f} %"


@dataclass(frozen=True)
class Disagreement:
    """fio and the kernel more than the threshold apart on one metric."""

    metric: str  # "IOPS" or "MB/s"
    fio: float
    kernel: float

    @property
    def relative(self) -> float | None:
        """(kernel - fio) / fio, None when fio reported nothing."""
        return (self.kernel - self.fio) / self.fio if self.fio else None

    def describe(self, where: str, hint: str) -> str:
        on = f" on {where}" if where else ""
        rel = self.relative
        if rel is None:
            return (
                f"kernel saw {self.kernel:.0f} {self.metric}{on} where fio reported none ({hint})"
            )
        direction = "fewer" if rel < 0 else "more"
        return f"kernel saw {abs(rel) * 100:.0f} % {direction} {self.metric} than fio{on} ({hint})"


def compare_fio_kernel(
    fio_iops: float, kernel_iops: float, threshold: float = DEFAULT_THRESHOLD, metric: str = "IOPS"
) -> Disagreement | None:
    """A Disagreement when the kernel's figure is more than ``threshold`` (relative to fio's)
    away from fio's, else None. Both zero agree; fio zero and kernel not is a disagreement.
    Works for any rate (``metric`` names it, e.g. "MB/s")."""
    if fio_iops < 0 or kernel_iops < 0 or threshold < 0:
        raise ValueError("rates and threshold must not be negative")
    if fio_iops == 0:
        return Disagreement(metric, fio_iops, kernel_iops) if kernel_iops > 0 else None
    if abs(kernel_iops - fio_iops) / fio_iops > threshold:
        return Disagreement(metric, fio_iops, kernel_iops)
    return None


@dataclass(frozen=True)
class PointComparison:
    """fio against the kernel over one point: means over ``seconds``."""

    seconds: list[int]
    fio_iops: float | None
    kernel_iops: float | None
    fio_mbps: float | None
    kernel_mbps: float | None
    flags: list[str] = field(default_factory=list)
    # a gap of the means held second by second too (the median of the per-second ratios
    # beyond the threshold); True where the means agree (nothing to hold)
    iops_held: bool = True
    mbps_held: bool = True


def kernel_series(
    samples: Sequence[HostSample], devices: Sequence[str]
) -> tuple[dict[int, float], dict[int, float]]:
    """Per second: (IOPS, MB/s) summed over ``devices`` (those with a reading that second)."""
    iops: dict[int, float] = defaultdict(float)
    mbps: dict[int, float] = defaultdict(float)
    for sample in samples:
        for name in devices:
            rates = sample.disks.get(name)
            if rates is not None:
                iops[sample.t] += rates.iops
                mbps[sample.t] += rates.mbps
    return dict(iops), dict(mbps)


def _common_seconds(*series: Mapping[int, float]) -> list[int]:
    seconds = sorted(set.intersection(*(set(s) for s in series)))
    return seconds[1:-1] if len(seconds) >= 3 else seconds


def _mean(series: Mapping[int, float], seconds: list[int]) -> float:
    return sum(series[t] for t in seconds) / len(seconds)


def _apart_each_second(
    fio: Mapping[int, float], kernel: Mapping[int, float], seconds: list[int], threshold: float
) -> bool:
    """Whether the median of the per-second ratios kernel / fio is more than `threshold` from
    1 (a second where fio saw nothing counts as apart when the kernel saw something)."""
    ratios = [kernel[t] / fio[t] if fio[t] else (math.inf if kernel[t] else 1.0)
              for t in seconds]  # fmt: skip
    return abs(statistics.median(ratios) - 1) > threshold if ratios else True


def _hint(metric: str, fewer: bool, other_agrees: bool) -> str:
    if metric == "IOPS" and other_agrees:
        if fewer:
            return f"same bytes in fewer requests: merged I/O (MB/s within {TOLERANCE})"
        return f"same bytes in more requests: split I/O (max_sectors_kb; MB/s within {TOLERANCE})"
    if fewer:
        return "page cache or merged I/O?" if metric == "IOPS" else "page cache?"
    return "other I/O on the device or read-ahead?"


def compare_point(
    fio_iops: Mapping[int, float],
    fio_mbps: Mapping[int, float],
    kernel_iops: Mapping[int, float],
    kernel_mbps: Mapping[int, float],
    devices: Sequence[str] = (),
    threshold: float = DEFAULT_THRESHOLD,
) -> PointComparison:
    """Means of fio's and the kernel's per-second IOPS and MB/s over their common seconds
    (edges dropped, see module doc), and one human flag per metric more than ``threshold``
    apart, e.g. "kernel saw 38 % fewer IOPS than fio on sdb (page cache or merged I/O?)".
    ``devices`` only names the devices in the flags."""
    seconds = _common_seconds(fio_iops, fio_mbps, kernel_iops, kernel_mbps)
    if not seconds:
        flag = "no second in common between fio's logs and the host samples"
        return PointComparison(seconds, None, None, None, None, [flag])
    f_iops, k_iops, f_mbps, k_mbps = (
        _mean(s, seconds) for s in (fio_iops, kernel_iops, fio_mbps, kernel_mbps)
    )
    iops = compare_fio_kernel(f_iops, k_iops, threshold)
    mbps = compare_fio_kernel(f_mbps, k_mbps, threshold, metric="MB/s")
    # a gap of the means must hold second by second: a load that swung in one second shows
    # as a gap there alone (fio's windows and the kernel's seconds are phase-shifted)
    iops_held = iops is None or _apart_each_second(fio_iops, kernel_iops, seconds, threshold)
    mbps_held = mbps is None or _apart_each_second(fio_mbps, kernel_mbps, seconds, threshold)
    iops = iops if iops_held else None
    mbps = mbps if mbps_held else None
    where = "+".join(devices)
    flags = [
        found.describe(where, _hint(found.metric, found.kernel < found.fio, other is None))
        for found, other in ((iops, mbps), (mbps, iops))
        if found is not None
    ]
    return PointComparison(seconds, f_iops, k_iops, f_mbps, k_mbps, flags, iops_held, mbps_held)
