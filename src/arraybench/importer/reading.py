"""Reading one result file: which format it is (the registry's, in order), its documents,
and which of them are separate runs and which status dumps of one (`pick_docs`).

Bounds (hostile input is normal input, issue 12): a file above MAX_FILE_BYTES is refused
with one line, JSON above fio_json.py's MAX_JSON_BYTES too (it is held whole); text is read
line by line with lines cut at lines.py's MAX_LINE_CHARS, so time is linear and memory
follows the results found.
"""

from __future__ import annotations

import os
from pathlib import Path

from arraybench.engines.measurement import DIRECTIONS, EngineDocument
from arraybench.importer.fio_json import NAME as JSON
from arraybench.importer.format import NotThisFormat, Skip, Sniffed
from arraybench.importer.lines import WHAT
from arraybench.importer.registry import FORMATS
from arraybench.userfiles import open_regular

MAX_FILE_BYTES = 256 << 20
_SNIFF_BYTES = 64 << 10


def read_docs(path: Path) -> tuple[list[EngineDocument], str]:
    """The fio documents of one result file and its format's name; Skip when it holds none.
    The registry's formats are tried in order: the first that recognises the file reads it
    (one that finds it is not its format after all passes it on)."""
    with open_regular(path, WHAT) as handle:  # a FIFO swapped in is refused, never waited on
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_FILE_BYTES:
            raise Skip(f"{size >> 20} MiB, larger than the {MAX_FILE_BYTES >> 20} MiB "
                       "import limit")  # fmt: skip
        head = handle.read(_SNIFF_BYTES)
    if b"\0" in head[:4096]:
        raise Skip("binary file, not fio output")
    sniffed = Sniffed(path, size, head.decode("utf-8", errors="replace"))
    for fmt in FORMATS:
        if fmt.read is None or not fmt.detect(sniffed):
            continue
        try:
            return fmt.read(sniffed), fmt.name
        except NotThisFormat:
            continue
    raise Skip("not a format arraybench imports")  # fio_text.py takes every file: unreached


def _status_dump_of(prev: EngineDocument, doc: EngineDocument) -> bool:
    """JSON documents: a later status dump of the same run (SIGUSR1, --status-interval)?
    Same jobs, each further on (elapsed grew, no count went down), and the clock moved by
    the time they ran in between. Two runs of one job file have the same elapsed times."""
    if doc.status_dump:
        return True
    shape = [(j.name, j.groupid, j.hostname) for j in prev.jobs]
    if shape != [(j.name, j.groupid, j.hostname) for j in doc.jobs]:
        return False
    pairs = list(zip(prev.jobs, doc.jobs, strict=True))
    if pairs and all(a.elapsed_s is None and b.elapsed_s is None for a, b in pairs):
        return True  # old fio (no elapsed): nothing tells them apart, the cumulative reading
    if not pairs or any((b.elapsed_s or 0) <= (a.elapsed_s or 0) for a, b in pairs):
        return False
    if any(b.direction(d).ios < a.direction(d).ios for a, b in pairs for d in DIRECTIONS):
        return False
    if prev.timestamp is None or doc.timestamp is None:
        return True
    gap = doc.timestamp - prev.timestamp
    return all(abs(gap - ((b.elapsed_s or 0) - (a.elapsed_s or 0))) <= 2 for a, b in pairs)


def pick_docs(docs: list[EngineDocument], fmt: str) -> tuple[list[EngineDocument], list[str]]:
    """Status dumps of one run -> the last (figures are cumulative); separate runs -> all.

    Text: fio says which is which (a new run prints its version, "Starting N processes" or
    its job list; a status dump only its results again). JSON: same jobs, and the clock
    moved on by the time the jobs ran in between.
    """
    kept: list[EngineDocument] = []
    chain = 1
    notes = []
    for doc in docs:
        dump = doc.status_dump if fmt != JSON else bool(kept) and _status_dump_of(kept[-1], doc)
        if kept and dump:
            kept[-1] = doc
            chain += 1
            continue
        if chain > 1:
            notes.append(f"run {len(kept)}: kept the last of {chain} status dumps (cumulative)")
        kept.append(doc)
        chain = 1
    if chain > 1:
        notes.append(f"run {len(kept)}: kept the last of {chain} status dumps (cumulative)")
    if len(kept) > 1:
        notes.append(f"{len(kept)} separate fio runs in one file")
    return kept, notes
