"""The host's view of one point: sample the targets' devices and the CPU while fio runs,
then set the kernel's figures beside fio's over the same seconds (`comparison`); judging the
gap is analysis.kernelcheck's and analysis.validity's (the job and the target kind decide)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType

from arraybench.monitor import sampler as host
from arraybench.monitor.compare import PointComparison, compare_point, kernel_series
from arraybench.records import CpuSample, HostSample, Sample
from arraybench.system.blockdev import block_name

# the comparison is made on any second in common and stored: whether it rests on enough
# seconds to be judged is analysis.kernelcheck's rule (MIN_SECONDS there), said in the report
MIN_SECONDS = 1


@dataclass
class MonitorResult:
    host: list[HostSample] = field(default_factory=list)
    cpu: list[CpuSample] = field(default_factory=list)
    kernel_iops: float | None = None
    kernel_mbps: float | None = None
    cpu_busy_pct: float | None = None
    flags: list[str] = field(default_factory=list)  # the monitor's own lines: warnings
    devices: list[str] = field(default_factory=list)
    # fio's and the kernel's means over the same seconds: judged in analysis (kernelcheck,
    # validity) against the job and the target, not here
    comparison: PointComparison | None = None


def target_devices(paths: Sequence[str]) -> list[str]:
    """Kernel block devices behind the targets (files on tmpfs/overlay have none)."""
    return sorted({d for d in (block_name(p, nearest=True) for p in paths) if d})


class PointMonitor:
    """Context manager around one fio run; `result(fio_samples)` afterwards."""

    def __init__(self, paths: Sequence[str], enabled: bool = True) -> None:
        self.devices = target_devices(paths) if enabled else []
        self.enabled = enabled
        self.sampler: host.HostSampler | None = None
        self.samples: list[host.HostSample] = []
        self.warnings: list[str] = []

    def live_iops(self) -> list[float]:
        """Per-second IOPS of the targets' devices so far (read + write, summed)."""
        if self.sampler is None:
            return []
        return [sum(d.read_iops + d.write_iops for d in s.disks.values())
                for s in self.sampler.samples]  # fmt: skip

    def __enter__(self) -> PointMonitor:
        if self.enabled:
            try:
                self.sampler = host.HostSampler(self.devices).start()
            except host.MonitorError as exc:
                self.warnings.append(f"host monitoring is off for this point: {exc.message}")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.sampler is None:
            return
        try:
            self.samples = self.sampler.stop()
        except host.MonitorError as failure:
            self.samples = failure.samples
            self.warnings.append(f"host monitoring failed: {failure.message}")
        self.warnings += self.sampler.warnings

    def result(self, fio: Sequence[Sample]) -> MonitorResult:
        out = MonitorResult(devices=self.devices)
        for s in self.samples:
            out.cpu.append(
                CpuSample(s.t, s.cpu.user_pct, s.cpu.system_pct, s.cpu.iowait_pct, s.cpu.busy_pct)
            )
            for name, d in s.disks.items():
                out.host.append(HostSample(s.t, name, d.read_iops, d.write_iops, d.read_mbps,
                                           d.write_mbps, d.avg_wait_ms, d.util_pct))  # fmt: skip
        if out.cpu:
            out.cpu_busy_pct = statistics.fmean(c.busy_pct for c in out.cpu)
        if self.devices and self.samples and len(fio) >= MIN_SECONDS:
            self._compare(out, fio)
        out.flags = self.warnings + out.flags
        return out

    def _compare(self, out: MonitorResult, fio: Sequence[Sample]) -> None:
        fio_iops = {s.t: (s.read_iops or 0.0) + (s.write_iops or 0.0) for s in fio}
        fio_mbps = {s.t: (s.read_mbps or 0.0) + (s.write_mbps or 0.0) for s in fio}
        k_iops, k_mbps = kernel_series(self.samples, self.devices)
        found = compare_point(fio_iops, fio_mbps, k_iops, k_mbps, self.devices)
        out.kernel_iops, out.kernel_mbps = found.kernel_iops, found.kernel_mbps
        if found.seconds:
            out.comparison = found
        else:  # "no second in common": said as the monitor's own line
            out.flags += found.flags
