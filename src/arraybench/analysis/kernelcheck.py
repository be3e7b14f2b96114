"""fio against the kernel's counters of the target devices: one comparison, one number.

The monitor (`monitor/compare.py`) sets fio's 1-second IOPS and MB/s beside the kernel's
(/proc/diskstats) over the seconds both have, the first and the last dropped, and stores the
four means with how many seconds they rest on (`KernelView`, in the point's `monitor`
finding). Everything that speaks of the comparison reads that one record: the validity flag
(`analysis.validity.fio_kernel`), the points table's "kernel vs fio" column in every format,
the run's note. Its number is the **bytes'**: (kernel MB/s - fio MB/s) / fio MB/s over those
seconds (bytes first: the request count differs legitimately, docs/validity.md).

A comparison is judged only when it rests on `MIN_SECONDS` whole seconds or more, and only
when a gap of the means holds second by second (the median of the per-second ratios beyond the
tolerance too): a short point, or a load that swung in one of its seconds, is said not judged
(`not_judged`), neither flagged nor passed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from arraybench.finding_kinds import MONITOR, KernelCheckData
from arraybench.monitor.point import MonitorResult
from arraybench.records import Finding

TOLERANCE = 0.10  # fio and the kernel apart by more than this share of fio's figure: a gap
# fewer seconds in common than this (edges dropped): not judged. Measured here: a 5-second
# point's 3 inner seconds of merged reads swinging 330 -> 98 MB/s read 25 % apart in the means
MIN_SECONDS = 5
# a file in a filesystem: the filesystem's own journal and metadata writes reach the device
# beside fio's, so a writing workload's device carries more bytes than fio wrote; up to this
# share more is expected (a remark), beyond it other I/O is on the device. Measured here (ext4
# on a loop device, direct libaio, 8 s): 4 KiB random writes into a fresh file's unwritten
# extents +4.0 %, into a written file +1.0 %, 64-128 KiB writes +0.0 %; the edges of the
# seconds move a short point's bytes by up to 8 % more (docs/validity.md)
FILE_WRITE_BAND = 0.25


@dataclass(frozen=True)
class KernelView:
    """fio's and the kernel's means over the same `seconds` (monitor/compare.py), and whether a
    gap of the means held second by second (the median of the per-second ratios)."""

    seconds: int
    fio_iops: float
    kernel_iops: float
    fio_mbps: float
    kernel_mbps: float
    iops_held: bool = True
    mbps_held: bool = True
    devices: tuple[str, ...] = ()

    def as_data(self) -> KernelCheckData:
        return {"seconds": self.seconds, "fio_iops": self.fio_iops,
                "kernel_iops": self.kernel_iops, "fio_mbps": self.fio_mbps,
                "kernel_mbps": self.kernel_mbps, "iops_held": self.iops_held,
                "mbps_held": self.mbps_held}  # fmt: skip

    @classmethod
    def of(cls, data: KernelCheckData, devices: tuple[str, ...] = ()) -> KernelView:
        return cls(int(data["seconds"]), float(data["fio_iops"]), float(data["kernel_iops"]),
                   float(data["fio_mbps"]), float(data["kernel_mbps"]),
                   bool(data.get("iops_held", True)), bool(data.get("mbps_held", True)),
                   devices)  # fmt: skip

    @property
    def bytes_pct(self) -> float | None:
        """THE number: the kernel's bytes against fio's, in % (+ = the kernel saw more)."""
        return relative_pct(self.fio_mbps, self.kernel_mbps)

    @property
    def requests_pct(self) -> float | None:
        """The kernel's requests against fio's I/Os, in %."""
        return relative_pct(self.fio_iops, self.kernel_iops)

    @property
    def where(self) -> str:
        return f" on {'+'.join(self.devices)}" if self.devices else ""


def kernel_view(seen: MonitorResult) -> KernelView | None:
    """The monitor's comparison of a point as the record every reader reads (None: none made:
    no device behind the targets, too few samples, or an integrity writer on the device)."""
    c = seen.comparison
    if c is None or None in (c.fio_iops, c.kernel_iops, c.fio_mbps, c.kernel_mbps):
        return None
    return KernelView(len(c.seconds), c.fio_iops or 0.0, c.kernel_iops or 0.0,
                      c.fio_mbps or 0.0, c.kernel_mbps or 0.0, c.iops_held, c.mbps_held,
                      tuple(seen.devices))  # fmt: skip


def views_by_point(findings: Iterable[Finding]) -> dict[int, KernelView]:
    """Stored `monitor` findings -> each point id's comparison (points stored before it was
    kept have none)."""
    found: dict[int, KernelView] = {}
    for f in findings:
        if f.kind == MONITOR.name and f.point_id is not None:
            data = MONITOR.of(f)
            if "check" in data:
                found[f.point_id] = KernelView.of(data["check"], tuple(data.get("devices", [])))
    return found


def relative_pct(fio: float, kernel: float) -> float | None:
    return (kernel - fio) / fio * 100 if fio else None


def not_judged(view: KernelView) -> str | None:
    """Why this comparison is not judged (None: it is): too few seconds, or a gap of the means
    that a few seconds alone make."""
    if view.seconds < MIN_SECONDS:
        return f"{view.seconds} s in common (fewer than {MIN_SECONDS})"
    if bytes_apart(view) and not view.mbps_held:
        return "the bytes' gap is in a few seconds only (a load that swung)"
    return None


def _apart(fio: float, kernel: float) -> bool:
    """More than TOLERANCE apart; fio's nothing against the kernel's something is apart, both
    nothing agree."""
    if not fio:
        return kernel > 0
    return abs(kernel - fio) / fio > TOLERANCE


def bytes_apart(view: KernelView) -> bool:
    return _apart(view.fio_mbps, view.kernel_mbps)


def requests_apart(view: KernelView) -> bool:
    return _apart(view.fio_iops, view.kernel_iops) and view.iops_held


def describe(metric: str, fio: float, kernel: float, view: KernelView) -> str:
    """ "kernel saw 16.3 % more MB/s than fio on vda" (the analysis.findings pattern), the
    figure with one decimal, as the points table's column shows it."""
    pct = relative_pct(fio, kernel)
    if pct is None:
        return f"kernel saw {kernel:.0f} {metric}{view.where} where fio reported none"
    return (f"kernel saw {abs(pct):.1f} % {'fewer' if pct < 0 else 'more'} {metric} than fio"
            f"{view.where}")  # fmt: skip


def column_pct(
    view: KernelView | None, fallback: tuple[float | None, float | None]
) -> float | None:
    """The points table's "kernel vs fio" (%): the stored comparison's bytes; a point stored
    before it was kept (`fallback`: the kernel's MB/s and fio's whole-run MB/s) reads those."""
    if view is not None:
        return view.bytes_pct
    kernel, fio = fallback
    return None if kernel is None or not fio else relative_pct(fio, kernel)
