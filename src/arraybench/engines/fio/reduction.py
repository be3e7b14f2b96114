"""Data an array reduces: fio's options for a requested compression and dedupe ratio, and
whether fio can reach it (`datasample` measures the ratio it does reach).

The measurement (`datasample.measure`) is the array's: the data cut into aligned granules,
the dedupe ratio is granules / distinct granules (a 128-bit BLAKE2b of each), the compression
ratio is the unique granules' bytes / their bytes compressed one by one with zlib at level 1
(a granule that does not shrink is stored as it is). zlib at level 1 is in the standard
library, and is a fast LZ77 like the LZ4 and zstd-fast of arrays: all three see fio's
zero-filled part of a granule as nothing and its random part as incompressible, which is all
fio's data holds (docs/data.md gives the figures measured).
"""

from __future__ import annotations

import math
import random
import zlib
from functools import cache

from arraybench.plan.workload import DataPattern
from arraybench.units import fio_size, format_size

ZLIB_LEVEL = 1
TOLERANCE = 0.10  # a miss larger than this is a validity flag (docs/validity.md)


def chunk(data: DataPattern, bs: int) -> int:
    """fio's buffer_compress_chunk: the granule's pattern repeated in each buffer (a buffer
    smaller than the granule carries its share of it)."""
    return math.gcd(bs, data.granule)


def _compressed(granule: int, zero_pct: int) -> int:
    """zlib's size of one granule whose chunks are `zero_pct` % zeros after random bytes
    (seeded: `plan check` and the run choose the same percentage)."""
    size = granule * (100 - zero_pct) // 100
    block = random.Random(granule * 100 + zero_pct).randbytes(size) + bytes(granule - size)
    return min(granule, len(zlib.compress(block, ZLIB_LEVEL)))


@cache
def _reachable_ratios(granule: int) -> tuple[float, ...]:
    """The compression ratio each of fio's whole percentages gives, measured as `measure`
    does (zlib's own bytes count: a fully random granule is 1:1, not less)."""
    return tuple(granule / _compressed(granule, pct) for pct in range(100))


def compress_percentage(data: DataPattern, bs: int) -> int:
    """fio's buffer_compress_percentage nearest the requested ratio (in log terms)."""
    if data.compression <= 1.0:
        return 0
    ratios = _reachable_ratios(chunk(data, bs))
    return min(range(100), key=lambda p: abs(math.log(ratios[p] / data.compression)))


def dedupe_percentage(ratio: float) -> int:
    """fio's dedupe_percentage: each buffer repeats the previous unique one with this
    probability, so unique buffers are 1 - p of all: ratio = 1 / (1 - p)."""
    return min(99, round(100 * (1 - 1 / ratio))) if ratio > 1.0 else 0


def data_options(data: DataPattern, bs: int) -> list[str]:
    """fio's options for the written buffers (docs/data.md: measured on fio 3.33 and 3.42)."""
    if data.zeros:
        return ["zero_buffers=1"]
    options = ["refill_buffers=1"]  # fresh random bytes per write: incompressible, no dedupe
    if (pct := compress_percentage(data, bs)) > 0:
        options += [f"buffer_compress_percentage={pct}",
                    f"buffer_compress_chunk={fio_size(chunk(data, bs))}"]  # fmt: skip
    if (dedupe := dedupe_percentage(data.dedupe)) > 0:
        options += [f"dedupe_percentage={dedupe}", "dedupe_mode=repeat"]
    return options


def unreachable(data: DataPattern, bs: int) -> str | None:
    """Why fio cannot write this data with blocks of `bs` bytes; None when it can."""
    granule = format_size(data.granule)
    if data.dedupe > 1.0 and bs % data.granule:
        return (f"dedupe {data.dedupe:g}:1 at {granule} granules needs a block size that is a "
                f"multiple of the granule, not {format_size(bs)}: fio repeats whole buffers, "
                "and a granule cut across buffers is new")  # fmt: skip
    if data.compression > 1.0:
        if chunk(data, bs) < 512:
            return (f"compression at {granule} granules with {format_size(bs)} blocks: fio's "
                    "compressible chunk would be under 512 B")  # fmt: skip
        best = _reachable_ratios(chunk(data, bs))[compress_percentage(data, bs)]
        if abs(best / data.compression - 1) > TOLERANCE:
            return (f"compression {data.compression:g}:1 at {granule} granules: fio's nearest "
                    f"is {best:.1f}:1 (buffer_compress_percentage is a whole percent, "
                    "measured with zlib level 1)")  # fmt: skip
    return None
