"""fio's figures against the kernel's (/proc/diskstats) for the same seconds and devices.

More: docs/internals.md, `monitor/compare.py`."""

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
