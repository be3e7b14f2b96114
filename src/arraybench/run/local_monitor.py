"""The controller's view of a local point as a sidecar: the targets' devices and the CPU
sampled while fio runs (`monitor/point.py` `PointMonitor`), then the kernel's figures set
beside fio's (`view`), and a `monitor` finding when they disagree."""

from __future__ import annotations

from arraybench.analysis.kernelcheck import kernel_view
from arraybench.finding_kinds import MONITOR, MonitorFinding
from arraybench.monitor.point import MonitorResult, PointMonitor
from arraybench.plan.expand import Point
from arraybench.records import Finding, Sample
from arraybench.run.load import LoadResult
from arraybench.run.sidecar import Sidecar


class LocalMonitor(Sidecar):
    def __init__(self, point: Point, enabled: bool) -> None:
        self.monitor = PointMonitor([t.path for t in point.targets], enabled)
        # the integrity writer's I/O is on the device by design: no fio-kernel gap flagged
        self.keeps_flags = point.workload.verify is None
        self._view: MonitorResult | None = None

    def live_iops(self) -> list[float]:
        """Per-second IOPS of the targets' devices so far (the events' steady trigger)."""
        return self.monitor.live_iops()

    def start(self) -> None:
        self.monitor.__enter__()

    def stop(self) -> None:
        self.monitor.__exit__(None, None, None)

    def view(self, samples: list[Sample]) -> MonitorResult:
        """The kernel's figures beside fio's 1-second samples (computed once)."""
        if self._view is None:
            self._view = self.monitor.result(samples)
            if not self.keeps_flags:
                self._view.flags, self._view.comparison = [], None
        return self._view

    def findings(self, result: LoadResult) -> list[Finding]:
        # not printed per point: the report says it once per run (report.assemble); the
        # comparison is stored whenever made: the flag and the column read it (kernelcheck)
        view = self.view(result.samples)
        check = kernel_view(view)
        if not view.flags and check is None:
            return []
        data: MonitorFinding = {"flags": view.flags, "devices": view.devices}
        if check is not None:
            data["check"] = check.as_data()
        return [MONITOR.new(data)]
