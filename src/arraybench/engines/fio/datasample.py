"""The ratio of reduction fio's data reaches: a sample written by fio with the workload's own
options into a scratch file, measured the way an array would (`reduction` says how)."""

from __future__ import annotations

import hashlib
import os
import random
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from arraybench.engines.fio.reduction import TOLERANCE, ZLIB_LEVEL, chunk, data_options
from arraybench.engines.fio.runner import first_error_line, run_captured
from arraybench.plan.workload import DataPattern
from arraybench.units import fio_size

# a sample of this many bytes per workload: 4096 granules of 8 KiB. fio repeats a buffer with
# a probability (binomial): a 2:1 dedupe ratio measured 8 times here spread 1.1 % (standard
# deviation) at 32 MiB, 3.1 % at 16 MiB; 32 MiB took 0.4-1 s to write and measure
SAMPLE_BYTES = 32 << 20
_READ = 1 << 20
SAMPLE_MAX_BS = 1 << 20


@dataclass(frozen=True)
class Reduction:
    """What an array would make of some data: ratios x:1 at `granule_bytes`."""

    compression: float
    dedupe: float
    granule_bytes: int
    granules: int  # measured (whole granules only)


class _Tally:
    """Granules seen so far: their count, the distinct ones' bytes raw and compressed."""

    def __init__(self, granule: int) -> None:
        self.granule = granule
        self.seen: set[bytes] = set()
        self.count = self.raw = self.packed = 0

    def add(self, block: bytes) -> None:
        """Every whole granule of `block` (which starts on a granule boundary)."""
        g = self.granule
        for at in range(0, len(block) - len(block) % g, g):
            piece = block[at : at + g]
            self.count += 1
            digest = hashlib.blake2b(piece, digest_size=16).digest()
            if digest not in self.seen:
                self.seen.add(digest)
                self.raw += g
                self.packed += min(g, len(zlib.compress(piece, ZLIB_LEVEL)))

    def result(self) -> Reduction:
        if self.count == 0:
            return Reduction(1.0, 1.0, self.granule, 0)
        return Reduction(self.raw / max(self.packed, 1), self.count / len(self.seen),
                         self.granule, self.count)  # fmt: skip


def measure(path: Path, granule: int, regions: list[tuple[int, int]] | None = None) -> Reduction:
    """The ratios of `path` granule by granule: all of it, or the (offset, length) regions
    (granule-aligned) taken together."""
    tally = _Tally(granule)
    with path.open("rb", buffering=0) as f:
        fd = f.fileno()
        for offset, length in regions if regions is not None else [(0, None)]:
            at = offset
            while length is None or at < offset + length:
                want = _READ if length is None else min(_READ, offset + length - at)
                block = os.pread(fd, want - want % granule or granule, at)
                if len(block) < granule:
                    break
                tally.add(block)
                at += len(block) - len(block) % granule
    return tally.result()


def read_back_regions(size: int, amount: int, granule: int, seed: int) -> list[tuple[int, int]]:
    """Where to read `amount` bytes of a target of `size` bytes back: all of it when it is no
    larger, else 1 MiB regions (whole granules) at random aligned offsets, without overlap."""
    region = max(granule, _READ - _READ % granule)
    if amount >= size:
        return [(0, size - size % granule)]
    slots = size // region
    chosen = sorted(random.Random(seed).sample(range(slots), min(slots, max(1, amount // region))))
    return [(slot * region, region) for slot in chosen]


def sample_command(fio: str, data: DataPattern, bs: int, path: Path, size: int) -> list[str]:
    """fio writing `size` bytes of the data once, in order, with the workload's block size and
    the same data options as its job file: the stream an array is given, byte for byte in
    kind (fio's own generator, not a model of it)."""
    return [
        fio,
        "--name=arraybench-data-sample",
        f"--filename={path}",
        "--rw=write",
        f"--bs={fio_size(bs)}",
        f"--size={fio_size(size)}",
        "--ioengine=psync",
        "--randrepeat=0",
        *(f"--{option}" for option in data_options(data, bs)),
        "--output-format=terse",
        "--eta=never",
    ]


def sample_block(data: DataPattern, bs: int) -> int:
    """The sample's block size: the workload's, or under 1 MiB the largest multiple of the
    granule (of fio's compressible chunk when the granule does not divide the block): the
    same buffers in kind (each repeated or not, each chunk as full of zeros), without a
    1 GiB block making the sample 1 GiB."""
    if bs <= SAMPLE_MAX_BS:
        return bs
    step = data.granule if bs % data.granule == 0 else chunk(data, bs)
    return max(step, SAMPLE_MAX_BS // step * step)


@dataclass(frozen=True)
class Sample:
    requested: DataPattern
    bs: int
    achieved: Reduction | None  # None: fio failed (error)
    seconds: float  # generating and measuring
    error: str | None = None

    @property
    def misses(self) -> list[str]:
        """Each ratio achieved more than TOLERANCE from the one requested."""
        if self.achieved is None or self.requested.zeros:
            return []
        pairs = (("compression", self.requested.compression, self.achieved.compression),
                 ("dedupe", self.requested.dedupe, self.achieved.dedupe))  # fmt: skip
        return [f"{name} {got:.2f}:1 of the {asked:g}:1 requested ({got / asked - 1:+.0%})"
                for name, asked, got in pairs if abs(got / asked - 1) > TOLERANCE]  # fmt: skip


def sample_data(
    fio: str, data: DataPattern, bs: int, scratch: Path, size: int = SAMPLE_BYTES
) -> Sample:
    """Have fio write a sample of the data into a scratch file under `scratch` (removed after)
    and measure it. At least 64 granules, whole blocks (of at most 1 MiB: `sample_block`)."""
    block = sample_block(data, bs)
    size = max(size, 64 * data.granule)
    size = max(block, size - size % block)
    start = time.monotonic()
    scratch = scratch.resolve()  # fio runs in the scratch folder: a relative path is not there
    scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="arraybench-data-", dir=scratch) as tmp:
        path = Path(tmp) / "sample"
        code, output = run_captured(sample_command(fio, data, block, path, size), Path(tmp))
        if code != 0:
            return Sample(data, bs, None, time.monotonic() - start, first_error_line(output))
        achieved = measure(path, data.granule)
    return Sample(data, bs, achieved, time.monotonic() - start)
