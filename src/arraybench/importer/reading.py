"""Reading one result file: which tool wrote it, its documents, and the import bounds.

Bounds (hostile input is normal input, issue 12): a file above MAX_FILE_BYTES is refused
with one line, JSON above MAX_JSON_BYTES too (it is held whole); text is read line by line
with lines cut at MAX_LINE_CHARS, so time is linear and memory follows the results found.
Which documents of a file are separate runs and which are status dumps of one is decided
here too (_pick_docs).
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TextIO

from arraybench.engines.fio.parse import parse_fio_json
from arraybench.engines.fio.results import DIRECTIONS, FioDocument
from arraybench.engines.fio.terse import looks_like_terse, parse_fio_terse
from arraybench.engines.fio.textparse import NO_RESULTS, looks_like_fio_text, parse_fio_lines
from arraybench.errors import FioParseError
from arraybench.importer.diskspd import TOOL as DISKSPD
from arraybench.importer.diskspd import looks_like_diskspd, parse_diskspd
from arraybench.importer.elbencho import TOOL as ELBENCHO
from arraybench.importer.elbencho import looks_like_elbencho, parse_elbencho
from arraybench.importer.vdbench import TOOL as VDBENCH
from arraybench.importer.vdbench import looks_like_vdbench, parse_vdbench
from arraybench.userfiles import open_regular, open_text

# Import bounds (issue 12): a result file is refused above MAX_FILE_BYTES; JSON is held
# whole, so it is refused above MAX_JSON_BYTES; text is streamed with lines cut at
# MAX_LINE_CHARS (no fio line comes near it).
MAX_FILE_BYTES = 256 << 20
MAX_JSON_BYTES = 32 << 20
MAX_LINE_CHARS = 4096
_SNIFF_BYTES = 64 << 10
WHAT = "a result file to import"


class Skip(Exception):
    """A file (or part of one) that is not imported; the message says why."""


def read_docs(path: Path) -> tuple[list[FioDocument], str]:
    """The fio documents of one result file and its format; _Skip when it holds none.

    Bounded: a file is refused above MAX_FILE_BYTES, JSON above MAX_JSON_BYTES (it must be
    held whole), and normal/terse text is read line by line, so memory follows the results
    found, not the size of the file.
    """
    with open_regular(path, WHAT) as handle:  # a FIFO swapped in is refused, never waited on
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_FILE_BYTES:
            raise Skip(f"{size >> 20} MiB, larger than the {MAX_FILE_BYTES >> 20} MiB "
                       "import limit")  # fmt: skip
        head = handle.read(_SNIFF_BYTES)
    if b"\0" in head[:4096]:
        raise Skip("binary file, not fio output")
    text_head = head.decode("utf-8", errors="replace")
    if looks_like_diskspd(text_head):
        return _read_lines(path, parse_diskspd), DISKSPD
    if looks_like_vdbench(text_head):
        return _read_lines(path, parse_vdbench), VDBENCH
    if looks_like_elbencho(text_head):
        return _read_lines(path, parse_elbencho), ELBENCHO
    if looks_like_terse(text_head):
        return _read_lines(path, parse_fio_terse), "terse"
    json_like = any(k in text_head for k in ('"fio version"', '"jobs"', '"client_stats"'))
    if json_like or path.suffix.lower() == ".json":
        if size > MAX_JSON_BYTES:
            raise Skip(
                f"{size >> 20} MiB of JSON, larger than the {MAX_JSON_BYTES >> 20} MiB "
                "limit for JSON (it is read whole)"
            )
        with open_regular(path, WHAT) as handle:
            text = handle.read(MAX_JSON_BYTES + 1).decode("utf-8", errors="replace")
        try:
            return parse_fio_json(text), "json"
        except FioParseError as exc:
            if not looks_like_fio_text(text):
                raise Skip(_why_no_results(text) or exc.message) from exc
    try:
        return _read_lines(path, parse_fio_lines), "text"
    except FioParseError as exc:
        if NO_RESULTS not in exc.message:
            raise Skip(exc.message) from exc  # a results line fio wrote that cannot be read
        raise Skip(_why_no_results_file(path) or _not_fio(path)) from exc


def _read_lines(
    path: Path, parser: Callable[[Iterable[str], str], list[FioDocument]]
) -> list[FioDocument]:
    with _text(path) as handle:
        return parser(_bounded_lines(handle), path.name)


def _text(path: Path) -> TextIO:
    return open_text(path, WHAT)


def _bounded_lines(handle: TextIO) -> Iterator[str]:
    """Lines cut to MAX_LINE_CHARS, the rest of a longer line skipped unread into memory:
    one endless line (200 MiB of "{") costs no more than a short one."""
    while line := handle.readline(MAX_LINE_CHARS):
        if not line.endswith("\n"):
            while (rest := handle.readline(MAX_LINE_CHARS)) and not rest.endswith("\n"):
                pass
        yield line


_FIO_SAID_RE = re.compile(r"^(?:<[^<>\s]+> )?(fio: .*|fio-\d+\.\d+\S*|Starting \d+ \w+)")


def _why_no_results(text: str) -> str | None:
    return _why_no_results_lines(text.splitlines()[:2000])


def _why_no_results_file(path: Path) -> str | None:
    with _text(path) as handle:
        return _why_no_results_lines(itertools.islice(_bounded_lines(handle), 2000))


def _why_no_results_lines(lines: Iterable[str]) -> str | None:
    """A fio run that printed no results (failed before or during the run): what fio said."""
    said = [m.group(1).strip() for line in lines if (m := _FIO_SAID_RE.match(line.strip()))]
    if not said:
        return None
    errors = [s for s in said if s.startswith("fio: ")]
    shown = (errors or said)[0]
    return f"a fio run that printed no results (failed?): fio said {shown[:100]!r}"


def _not_fio(path: Path) -> str:
    with _text(path) as handle:
        first = next((line.strip() for line in _bounded_lines(handle) if line.strip()), None)
    if first is None:
        return "empty file"
    return f"not fio output (no fio JSON document or job results); it starts with {first[:60]!r}"


def _status_dump_of(prev: FioDocument, doc: FioDocument) -> bool:
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


def pick_docs(docs: list[FioDocument], fmt: str) -> tuple[list[FioDocument], list[str]]:
    """Status dumps of one run -> the last (figures are cumulative); separate runs -> all.

    Text: fio says which is which (a new run prints its version, "Starting N processes" or
    its job list; a status dump only its results again). JSON: same jobs, and the clock
    moved on by the time the jobs ran in between.
    """
    kept: list[FioDocument] = []
    chain = 1
    notes = []
    for doc in docs:
        dump = doc.status_dump if fmt != "json" else bool(kept) and _status_dump_of(kept[-1], doc)
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
