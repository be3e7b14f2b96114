"""Text that came from outside as bytes (a path with a byte that is not UTF-8, read with
Python's surrogate escapes) made safe to write where only UTF-8 goes: the store, a
terminal, a report. The bytes that do not decode are written as `\\xNN`."""

from __future__ import annotations


def utf8_safe(text: str) -> str:
    """`text` if it is valid UTF-8 text, else with each undecodable byte as `\\xNN` (and any
    other lone surrogate as `\\udNNN`)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        data = text.encode("utf-8", "surrogateescape")  # the bytes the path had
    except UnicodeEncodeError:  # a surrogate no byte gave (JSON "\ud800")
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return data.decode("utf-8", "backslashreplace")
