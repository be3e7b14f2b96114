"""The self-describing block format written by the integrity writer.

More: docs/internals.md, `integrity/layout.py`."""

from __future__ import annotations

import hashlib
import mmap
import struct
import zlib
from dataclasses import dataclass

from arraybench.integrity.errors import IntegrityError

MAGIC = b"ABINTEG\x01"
HEADER = struct.Struct("<8sIIQQQII")
HEADER_SIZE = HEADER.size  # 48
CRC_OFFSET = 44
SECTOR = 512
DEFAULT_BLOCK_SIZE = 4096
_SEED = struct.Struct("<IQQ")
_CRC = struct.Struct("<I")
_ZERO_CRC = bytes(4)


@dataclass(frozen=True)
class BlockHeader:
    block_size: int
    stream_id: int
    offset: int
    generation: int
    write_ns: int


def check_block_size(block_size: int) -> None:
    """IntegrityError unless the block size is a positive multiple of 512 bytes."""
    if block_size < SECTOR or block_size % SECTOR:
        raise IntegrityError(
            f"block size {block_size} is not a positive multiple of {SECTOR} bytes",
            "use e.g. 4096",
        )


def filler(stream_id: int, offset: int, generation: int, length: int) -> bytes:
    """The deterministic pseudo-random payload of one block (after the header)."""
    return hashlib.shake_128(_SEED.pack(stream_id, offset, generation)).digest(length)


def fill_block(
    buf: bytearray | memoryview | mmap.mmap,
    *,
    block_size: int,
    stream_id: int,
    offset: int,
    generation: int,
    write_ns: int,
) -> None:
    """Write one complete block (header, filler, checksum) into ``buf[:block_size]``.

    ``buf`` may be an mmap (aligned for O_DIRECT) or any writable buffer.
    """
    view = memoryview(buf)
    view[HEADER_SIZE:block_size] = filler(stream_id, offset, generation, block_size - HEADER_SIZE)
    HEADER.pack_into(view, 0, MAGIC, block_size, stream_id, offset, generation, write_ns, 0, 0)
    _CRC.pack_into(view, CRC_OFFSET, zlib.crc32(view[:block_size]))


def block_crc(block: bytes | bytearray | memoryview) -> int:
    """crc32 of a block with its checksum field taken as zero."""
    view = memoryview(block)
    crc = zlib.crc32(view[:CRC_OFFSET])
    crc = zlib.crc32(_ZERO_CRC, crc)
    return zlib.crc32(view[CRC_OFFSET + 4 :], crc)


def _describe_garbage(view: memoryview) -> str:
    if not any(view):
        return "no integrity header: the block is all zeros"
    first = bytes(view[:1])
    if view.tobytes() == first * len(view):
        return f"no integrity header: the block is filled with byte 0x{first.hex()}"
    return "no integrity header: the block holds other data"


def verify_block(block: bytes | bytearray | memoryview) -> tuple[BlockHeader | None, str]:
    """(header, "") when the block is a self-consistent integrity block, else (None, why).

    Self-consistent: magic, block size equal to ``len(block)``, checksum, and the filler
    matching the header's (stream id, offset, generation). Whether the block is the one
    expected at a place is for the caller to decide (offset, stream, generation).
    """
    view = memoryview(block)
    size = len(view)
    if size < HEADER_SIZE or bytes(view[:8]) != MAGIC:
        return None, _describe_garbage(view)
    _, bs, stream_id, offset, generation, write_ns, _, crc = HEADER.unpack_from(view)
    said = f"header says offset {offset}, generation {generation}"
    if block_crc(view) != crc:
        return None, f"checksum mismatch ({said})"
    if bs != size:
        return None, f"header block size {bs} != {size} ({said})"
    if view[HEADER_SIZE:].tobytes() != filler(stream_id, offset, generation, size - HEADER_SIZE):
        return None, f"payload does not match its header ({said})"
    return BlockHeader(bs, stream_id, offset, generation, write_ns), ""
