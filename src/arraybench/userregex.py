"""Regular expressions a user gives, matched in time linear in the text (issue 24).

Python's `re` backtracks: `(a+)+$`, `(a|aa)+$` or `(\\w+\\s?)+$` against a few dozen
characters that almost match take minutes, so an `import --pattern` or a `signal` event's
`process` could hang arraybench. Every regular expression a user supplies is compiled here
with RE2 (the `google-re2` package), whose automaton never backtracks: matching takes time
linear in the text whatever the pattern, and memory is bounded (MAX_MEM). We chose it over
a timeout (the `regex` package's `timeout=`), which on a loaded machine either cuts a
legitimate match or still waits for a hostile one, and over refusing nested quantifiers at
load, since no syntactic rule catches every exponential pattern.

The price, said in the refusal and in the docs: RE2 has no backreferences (`\\1`) and no
lookaround (`(?=...)`, `(?<=...)`), and its `\\d`, `\\w`, `\\b` are ASCII only. A pattern it
cannot compile is refused with one line (UserRegexError, a ValueError: the plan's loader
turns it into a located error, the CLI into exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import re2

from arraybench.errors import utf8_safe  # RE2 matches UTF-8: undecodable bytes as \xNN

MAX_MEM = 8 << 20  # bytes RE2 may use for one compiled pattern (its default, stated)
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print its own error line on stderr
_OPTIONS.max_mem = MAX_MEM


class UserRegexError(ValueError):
    """A user's regular expression that cannot be matched in bounded time; says why."""


@dataclass(frozen=True)
class UserRegex:
    """A compiled user pattern: search() in linear time, the named groups of the match."""

    pattern: str
    _compiled: Any

    @property
    def groupindex(self) -> Mapping[str, int]:
        return dict(self._compiled.groupindex)

    def groups(self, text: str) -> dict[str, str] | None:
        """The named groups of the first match in `text` (searched, not anchored); None
        when nothing matches. Groups that took part in no match are left out."""
        match = self._compiled.search(utf8_safe(text))
        if match is None:
            return None
        return {k: v for k, v in match.groupdict().items() if v is not None}

    def found(self, text: str) -> bool:
        return self._compiled.search(utf8_safe(text)) is not None


def compile_user_regex(pattern: str, what: str) -> UserRegex:
    """`pattern` compiled for linear-time matching; UserRegexError naming `what` (the option
    or plan key it came from) when RE2 cannot take it."""
    try:
        compiled = re2.compile(utf8_safe(pattern), options=_OPTIONS)
    except re2.error as exc:
        raise UserRegexError(
            f"{what} {pattern!r} is refused: {_reason(exc)}; patterns are matched in linear "
            "time (RE2), which has no backreferences (\\1) and no lookaround ((?=...))"
        ) from None
    return UserRegex(pattern, compiled)


def _reason(exc: Exception) -> str:
    first = exc.args[0] if exc.args else str(exc)
    return first.decode(errors="replace") if isinstance(first, bytes) else str(first)
