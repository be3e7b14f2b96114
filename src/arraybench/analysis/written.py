"""How much of the region a read point reads was written by this run before it.

A block device's blocks that nobody wrote are not media: a thin-provisioned LUN answers them
with zeros from its metadata, an SSD from its mapping table (trimmed or never written), far
faster than a read of stored data. The array templates read the backend region of a fresh LUN
before (or without) writing it, so their read figures may be the metadata's. A file target is
laid out with data when it is created (targets/prepare.py), so only block devices are judged.

More: docs/internals.md, `analysis/written.py`."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

# a read region more unwritten than this is said (a few % is the seconds' random offsets that
# a random fill missed: 1 - e^-3 leaves 5 % after three times the region's size)
UNWRITTEN_SHARE = 0.05


@dataclass(frozen=True)
class Written:
    """An earlier point's writes on one target: the bytes it wrote there, over a region of
    `region_bytes` from the target's start, sequentially or at random offsets."""

    region_bytes: int
    bytes_written: float
    sequential: bool

    def coverage(self, read_bytes: int) -> float:
        """The share of a read region [0, read_bytes) this write is expected to have written."""
        if self.region_bytes <= 0 or read_bytes <= 0 or self.bytes_written <= 0:
            return 0.0
        density = self.bytes_written / self.region_bytes
        covered = min(density, 1.0) if self.sequential else 1.0 - math.exp(-density)
        return covered * min(read_bytes, self.region_bytes) / read_bytes


def unwritten_share(read_bytes: int, writes: Iterable[Written]) -> float:
    """The share of the read region [0, read_bytes) that no earlier write is expected to have
    written (1.0 with none)."""
    left = 1.0
    for w in writes:
        left *= 1.0 - w.coverage(read_bytes)
    return max(left, 0.0)
