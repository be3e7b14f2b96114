"""What an import format declares: its name, the tool that writes it, how a file of it is
recognised and how it is read (`Format`); the registry (registry.py) lists them in the
order they are tried. `Skip` says why a file (or part of one) is not imported."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arraybench.engines.measurement import EngineDocument


class Skip(Exception):
    """A file (or part of one) that is not imported; the message says why."""


class NotThisFormat(Exception):
    """A reader that recognised a file but found it is not its format after all: the next
    format in the registry is tried (fio's JSON falls back to its normal text)."""


@dataclass(frozen=True)
class Sniffed:
    """A result file as detection sees it: its path, its size and its first bytes as text."""

    path: Path
    size: int
    head: str


@dataclass(frozen=True)
class Format:
    """One input format. `name` is the source format an import finding records ("json",
    "diskspd"); `tool` the tool that wrote it ("fio"; the import finding's "tool");
    `label` the tool as people write it, `what` the format as the help lists it and `how`
    how the tool is told to write it (for the hint of an import that found nothing).
    `detect` says from the file's first bytes whether it is this format, `read` returns its
    documents (Skip when it holds none). A format without `read` is recognised by its file
    name alone and read by the scan (fio's interval logs, attached to points)."""

    name: str
    tool: str
    label: str
    what: str
    how: str
    detect: Callable[[Sniffed], bool]
    read: Callable[[Sniffed], list[EngineDocument]] | None = None
    # the format states the host count in its job options ("hosts") but gives no per-host
    # figures (elbencho's CSV): the point's hosts are taken from there
    hosts_in_options: bool = False
