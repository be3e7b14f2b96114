"""Plan text that reaches a terminal: names, labels, prompt texts, commands, paths. A plan
is refused at load when any of its strings (a key or a value) holds a character that makes a
terminal do something instead of showing it: a C0 control other than a line break, a tab
or NUL (the models refuse NUL where it matters, with their own words) -- ESC starts OSC and
ANSI sequences (set the window title, clear the screen, move the cursor), BEL rings, CR
overwrites the line --, DEL, a C1 control (0x9b is CSI to many terminals), or a bidi or line
override (a line that shows other text than it holds)."""

from __future__ import annotations

import re
from collections.abc import Callable

from arraybench.plan.overrides import KeyPath

UNSAFE = re.compile("[\x01-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def unsafe_character(text: str) -> str | None:
    """The first character of `text` a terminal would act on, escaped (`\\x1b`), or None."""
    found = UNSAFE.search(text)
    if found is None:
        return None
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def first_unsafe(data: object, path: KeyPath = ()) -> tuple[KeyPath, str] | None:
    """(where, the character) of the first string in the plan's data holding one."""
    if isinstance(data, str):
        bad = unsafe_character(data)
        return (path, bad) if bad else None
    items: list[tuple[object, object]] = []
    if isinstance(data, dict):
        items = list(data.items())
    elif isinstance(data, list):
        items = list(enumerate(data))
    for key, value in items:
        if isinstance(key, str) and (bad := unsafe_character(key)):
            return (*path, key), bad
        found = first_unsafe(value, (*path, key if isinstance(key, int) else str(key)))
        if found:
            return found
    return None


def check_terminal_text(data: object, located: Callable[[KeyPath], str]) -> str | None:
    """The error line for the plan's first unsafe string (`located` says where a key path
    is), None when every string is safe to show."""
    found = first_unsafe(data)
    if found is None:
        return None
    path, bad = found
    return f"{located(path)}: the text holds the control character {bad}, which a terminal acts on"
