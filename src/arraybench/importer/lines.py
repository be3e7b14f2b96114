"""Result files read as text, bounded (hostile input is normal input, issue 12): opened as
regular files only (userfiles.py), lines cut at MAX_LINE_CHARS with the rest of a longer
line skipped unread, so time is linear and memory follows the results found."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TextIO

from arraybench.engines.measurement import EngineDocument
from arraybench.userfiles import open_text

MAX_LINE_CHARS = 4096  # no fio line comes near it
WHAT = "a result file to import"


def read_lines(
    path: Path, parser: Callable[[Iterable[str], str], list[EngineDocument]]
) -> list[EngineDocument]:
    """The documents `parser` finds in the bounded lines of `path`."""
    with text(path) as handle:
        return parser(bounded_lines(handle), path.name)


def text(path: Path) -> TextIO:
    return open_text(path, WHAT)


def bounded_lines(handle: TextIO) -> Iterator[str]:
    """Lines cut to MAX_LINE_CHARS, the rest of a longer line skipped unread into memory:
    one endless line (200 MiB of "{") costs no more than a short one."""
    while line := handle.readline(MAX_LINE_CHARS):
        if not line.endswith("\n"):
            while (rest := handle.readline(MAX_LINE_CHARS)) and not rest.endswith("\n"):
                pass
        yield line
