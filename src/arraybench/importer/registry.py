"""The import formats, in the order a file is tried: the one list of what `import` reads.
The CLI's help, the hint of an import that found nothing and the tools an imported run
names are all read from it; README.md's list is checked against it (a unit test).

A file's name decides first (fio's logs), then its first bytes: the other tools' formats
before fio's (their text would otherwise be taken for fio's), terse before JSON (a terse
line may precede a JSON document), JSON before normal text, which takes every file left
and says why when it holds no results. A new format: a module in importer/ that declares
its `Format` (format.py), one line here."""

from __future__ import annotations

from arraybench.importer import (
    diskspd,
    elbencho,
    fio_json,
    fio_logs,
    fio_terse,
    fio_text,
    mdtest,
    vdbench,
)
from arraybench.importer.format import Format

FORMATS: tuple[Format, ...] = (
    fio_logs.FORMAT,
    diskspd.FORMAT,
    vdbench.FORMAT,
    elbencho.FORMAT,
    mdtest.FORMAT,
    fio_terse.FORMAT,
    fio_json.FORMAT,
    fio_text.FORMAT,
)


def format_named(name: str) -> Format:
    """The format of that name (a `Source.fmt`, an import finding's "format")."""
    return next(f for f in FORMATS if f.name == name)


def tool_of(name: str) -> str:
    """The tool that writes the source format `name`."""
    return format_named(name).tool


def described(how: bool = False) -> str:
    """Every format by tool, fio's first: "fio logs, terse, ...; DiskSpd text; ..."; with
    `how`, each followed by how its tool is told to write it."""
    labels = ["fio"] + [f.label for f in FORMATS if f.label != "fio"]
    by_label = {
        label: [f"{f.what} ({f.how})" if how else f.what for f in FORMATS if f.label == label]
        for label in labels
    }
    return "; ".join(f"{label} {', '.join(whats)}" for label, whats in by_label.items())
