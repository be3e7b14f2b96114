"""Data integrity under load: was any acknowledged write lost?

A writer (``run_writer`` in-process, or ``spawn_writer``/``stop_writer`` as a subprocess, also
``python -m arraybench.integrity.writer``) writes self-checking blocks at random offsets of a
region and journals each write only after the device acknowledged it. After a failure
(controller failover, path loss, power cut, crash), ``check_region`` reads every acknowledged
block back and reports the ones that are lost (older content), corrupt or unreadable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arraybench.integrity.check import BlockProblem, IntegrityReport, check_region
from arraybench.integrity.errors import IntegrityError
from arraybench.integrity.journal import JournalHeader, scan_journal
from arraybench.integrity.layout import BlockHeader, verify_block

if TYPE_CHECKING:
    from arraybench.integrity.writer import (
        WriterConfig,
        WriterStats,
        run_writer,
        spawn_writer,
        stop_writer,
        supports_direct,
    )

# The writer is imported lazily, so ``python -m arraybench.integrity.writer`` does not find its
# own module already imported by this package (runpy warns about that).
_WRITER_NAMES = {
    "WriterConfig",
    "WriterStats",
    "run_writer",
    "spawn_writer",
    "stop_writer",
    "supports_direct",
}


def __getattr__(name: str) -> Any:
    if name in _WRITER_NAMES:
        from arraybench.integrity import writer

        return getattr(writer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BlockHeader",
    "BlockProblem",
    "IntegrityError",
    "IntegrityReport",
    "JournalHeader",
    "WriterConfig",
    "WriterStats",
    "check_region",
    "run_writer",
    "scan_journal",
    "spawn_writer",
    "stop_writer",
    "supports_direct",
    "verify_block",
]
