"""One escaping function per report destination, so no plan, path or imported string can act.

- Spreadsheets: a cell whose text would start a formula (`=`, `+`, `-`, `@`, tab, CR) is made
  inert, in CSV by a leading `'` (the usual neutraliser: Excel, LibreOffice and Google Sheets
  show it as text), in Excel by a text cell with Excel's quote-prefix flag; a real number such
  as `-12.5` stays a number.
- HTML: `&`, `<`, `>`, `"` and `'` become entities.
- Markdown: Markdown and HTML specials are backslash-escaped and newlines become `<br>`, so a
  label `<script>` is shown, never run, and `|` cannot open a table cell.
"""

from __future__ import annotations

import math
import re
from html import escape as _html_escape

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|&])")


def _is_number(text: str) -> bool:
    if text != text.strip():  # float() skips blanks: "\t1" is not a number a sheet keeps
        return False
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def starts_formula(text: str) -> bool:
    """Would a spreadsheet read this text as a formula (and not as a number)?"""
    return text.startswith(FORMULA_STARTS) and not _is_number(text)


def for_spreadsheet(value: object) -> object:
    """A CSV cell value: numbers unchanged, formula-starting text made inert with a `'`.
    (Excel cells are typed text and carry Excel's quote-prefix flag instead: `xlsx._put`.)"""
    if isinstance(value, str) and starts_formula(value):
        return "'" + value
    return value


def for_html(text: object) -> str:
    return _html_escape(str(text), quote=True)


def for_markdown(text: object) -> str:
    """Text for a Markdown table cell or line: specials escaped, kept on one line."""
    plain = _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))
    if "\n" in plain or "\r" in plain:
        return "<br>".join(part.strip() for part in plain.splitlines())
    return plain
