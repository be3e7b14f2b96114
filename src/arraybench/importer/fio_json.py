"""fio's JSON and json+ output (one document or several in a row, ``client_stats`` of
client/server runs), read by engines/fio/parse.py. JSON is held whole, so a file above
MAX_JSON_BYTES is refused; a file that only looked like JSON but is fio's normal text
(its job options printed as JSON) goes on to the text reader."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arraybench.errors import OutputParseError
from arraybench.importer.fio_text import why_no_results
from arraybench.importer.format import Format, NotThisFormat, Skip, Sniffed
from arraybench.importer.lines import WHAT
from arraybench.userfiles import open_regular

if TYPE_CHECKING:
    from arraybench.engines.measurement import EngineDocument

MAX_JSON_BYTES = 32 << 20
NAME = "json"
_KEYS = ('"fio version"', '"jobs"', '"client_stats"')


def _detect(sniffed: Sniffed) -> bool:
    return any(k in sniffed.head for k in _KEYS) or sniffed.path.suffix.lower() == ".json"


def _read(sniffed: Sniffed) -> list[EngineDocument]:
    # imported here, not at the top: the CLI reads the registry for its help (fio_terse.py)
    from arraybench.engines.fio.parse import parse_fio_json
    from arraybench.engines.fio.textparse import looks_like_fio_text

    if sniffed.size > MAX_JSON_BYTES:
        raise Skip(
            f"{sniffed.size >> 20} MiB of JSON, larger than the {MAX_JSON_BYTES >> 20} MiB "
            "limit for JSON (it is read whole)"
        )
    with open_regular(sniffed.path, WHAT) as handle:
        text = handle.read(MAX_JSON_BYTES + 1).decode("utf-8", errors="replace")
    try:
        return parse_fio_json(text)
    except OutputParseError as exc:
        if not looks_like_fio_text(text):
            raise Skip(why_no_results(text) or exc.message) from exc
        raise NotThisFormat from exc


FORMAT = Format(
    name=NAME,
    tool="fio",
    label="fio",
    what="JSON, json+",
    how="--output-format=json, json+",
    detect=_detect,
    read=_read,
)
