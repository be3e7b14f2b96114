"""The grid an import is keyed by, from the dimensions the file-name pattern names.

dbi's archive (`Test03-Typerandread-BS8k-DeviceCount03.txt`) runs N threads on EACH of D
devices: fio counts D x N jobs per group. A campaign with `spread: per_target` records such a
level as N workers on D devices (`w4-qd1-d3`), so the import does the same when the pattern
names `devices` and not the jobs themselves (`workers` or `threads`): every point of the file
gets its jobs divided by the device count, which must divide them all. Then the grid is
devices x threads per device (10 columns for dbi), not total jobs (90 sparse columns), and the
report draws one line per device count on one chart per workload.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol


class _Leveled(Protocol):
    workers: int
    devices: int | None
    labels: dict[str, str]


JOB_GROUPS = ("workers", "threads")


def per_device(cands: Sequence[_Leveled], values: Mapping[str, str], rel: str) -> list[str]:
    """Jobs per device for a file whose name gives its device count; returns notes."""
    if "devices" not in values or any(g in values for g in JOB_GROUPS):
        return []
    counts = {c.devices for c in cands}
    if len(counts) != 1:
        return []
    (devices,) = counts
    if not devices or devices < 2:
        return []
    if any(c.workers % devices for c in cands):
        jobs = ", ".join(str(c.workers) for c in cands)
        return [f"{rel}: {devices} devices, but jobs {jobs} are not all a multiple of it: "
                "the levels are total jobs"]  # fmt: skip
    for c in cands:
        c.workers //= devices
        c.labels["spread"] = "per_target"  # the report names the axis threads per device
    return []
