"""fio's terse output (``--output-format=terse``, versions 2 to 5), read by
engines/fio/terse.py; tried before JSON, since a terse line may precede a JSON document."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arraybench.importer.format import Format, Sniffed
from arraybench.importer.lines import read_lines

if TYPE_CHECKING:
    from arraybench.engines.measurement import EngineDocument

# fio's readers are imported when a file is read: the CLI reads the registry for its help,
# and every command would pay for them (docs/performance.md, start-up)


def _detect(sniffed: Sniffed) -> bool:
    from arraybench.engines.fio.terse import looks_like_terse

    return looks_like_terse(sniffed.head)


def _read(sniffed: Sniffed) -> list[EngineDocument]:
    from arraybench.engines.fio.terse import parse_fio_terse

    return read_lines(sniffed.path, parse_fio_terse)


FORMAT = Format(
    name="terse",
    tool="fio",
    label="fio",
    what="terse",
    how="--output-format=terse",
    detect=_detect,
    read=_read,
)
