"""A point key's marks read back: its repetition (`#N`) and its SNIA round (`@rN`).

Apart from `expand.py` (which writes them) so that readers of stored points (`show`, the
report's spread) do not load the plan model, pydantic, for a string split."""

from __future__ import annotations

REPEAT_MARK = "#"  # `rr/w4-qd1#2`: the second repetition of rr/w4-qd1


def repetition_in_key(key: str) -> tuple[str, int]:
    """The level's key without its repetition, and the repetition (1 for a plain key)."""
    base, mark, number = key.rpartition(REPEAT_MARK)
    return (base, int(number)) if mark and number.isdigit() else (key, 1)


def round_in_key(key: str) -> int | None:
    """The SNIA round number a point key carries (`...@r3`), the inverse of Point.key."""
    _, at, number = key.rpartition("@r")
    return int(number) if at and number.isdigit() else None
