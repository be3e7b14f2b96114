"""fio's normal text output (one or many hosts, ``fio --client`` included), read by
engines/fio/textparse.py: the last format tried, so a file no other format claims gets
here, and when it holds no results the skip says what fio printed instead (a failed run),
or how the file starts."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from arraybench.errors import OutputParseError
from arraybench.importer.format import Format, Skip, Sniffed
from arraybench.importer.lines import bounded_lines, read_lines, text

if TYPE_CHECKING:
    from arraybench.engines.measurement import EngineDocument

_FIO_SAID_RE = re.compile(r"^(?:<[^<>\s]+> )?(fio: .*|fio-\d+\.\d+\S*|Starting \d+ \w+)")


def _read(sniffed: Sniffed) -> list[EngineDocument]:
    # imported here, not at the top: the CLI reads the registry for its help (fio_terse.py)
    from arraybench.engines.fio.textparse import NO_RESULTS, parse_fio_lines

    try:
        return read_lines(sniffed.path, parse_fio_lines)
    except OutputParseError as exc:
        if NO_RESULTS not in exc.message:
            raise Skip(exc.message) from exc  # a results line fio wrote that cannot be read
        raise Skip(_why_no_results_file(sniffed.path) or _not_fio(sniffed.path)) from exc


def why_no_results(text: str) -> str | None:
    """A fio run that printed no results (failed before or during the run): what fio said."""
    return _why_no_results_lines(text.splitlines()[:2000])


def _why_no_results_file(path: Path) -> str | None:
    with text(path) as handle:
        return _why_no_results_lines(itertools.islice(bounded_lines(handle), 2000))


def _why_no_results_lines(lines: Iterable[str]) -> str | None:
    said = [m.group(1).strip() for line in lines if (m := _FIO_SAID_RE.match(line.strip()))]
    if not said:
        return None
    errors = [s for s in said if s.startswith("fio: ")]
    shown = (errors or said)[0]
    return f"a fio run that printed no results (failed?): fio said {shown[:100]!r}"


def _not_fio(path: Path) -> str:
    with text(path) as handle:
        first = next((line.strip() for line in bounded_lines(handle) if line.strip()), None)
    if first is None:
        return "empty file"
    return f"not fio output (no fio JSON document or job results); it starts with {first[:60]!r}"


FORMAT = Format(
    name="text",
    tool="fio",
    label="fio",
    what="normal text",
    how="--output-format=normal",
    detect=lambda s: True,
    read=_read,
)
