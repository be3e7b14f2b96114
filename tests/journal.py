"""An integrity journal read whole, for tests (a run streams it: integrity/journal.py
`scan_journal`)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from arraybench.integrity.journal import JournalScan, scan_journal


class JournalRecord(NamedTuple):
    offset: int
    generation: int
    write_ns: int
    kind: int  # ACKED or FAILED


def read_records(path: Path) -> tuple[JournalScan, list[JournalRecord]]:
    """All valid records of a journal in order."""
    records: list[JournalRecord] = []
    scan = scan_journal(path, lambda o, g, n, k: records.append(JournalRecord(o, g, n, k)))
    return scan, records
