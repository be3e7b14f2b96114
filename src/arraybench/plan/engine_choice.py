"""The plan's `engine:` key: which load engine runs the points (`engines.registry`).

The plan sits below the engines, so the registry tells this module the names it registers
(`known`); an unknown name is then refused while the plan is parsed, located like any other
mistake (`plan.yaml:3 engine: ...`, exit 2). `fio` is known from the start: a plan read
before any engine module was imported still parses.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

DEFAULT = "fio"
_known: set[str] = {DEFAULT}


def known() -> list[str]:
    return sorted(_known)


def add_known(name: str) -> None:
    _known.add(name)


def drop_known(name: str) -> None:
    if name != DEFAULT:
        _known.discard(name)


def _check(name: str) -> str:
    if name not in _known:
        raise ValueError(f"{name!r} is not a known engine (known: {', '.join(known())})")
    return name


EngineName = Annotated[
    str, Field(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_-]*$"), AfterValidator(_check)
]
