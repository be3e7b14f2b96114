"""The plan's `engine:` key: which load engine runs the points (`engines.registry`).

The plan sits below the engines, so the registry tells this module the names it registers
(`add_known`); from then on an unknown name is refused while the plan is parsed, located like
any other mistake (`plan.yaml:3 engine: ...`, exit 2). Every process that checks or runs a
plan has the registry loaded first (`run.plan_values` imports it); one that never loads an
engine (a report reading a run's stored plan) reads whatever name the run stored.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

DEFAULT = "fio"
_known: set[str] = {DEFAULT}
_checked = False  # True once the registry has named its engines


def known() -> list[str]:
    return sorted(_known)


def add_known(name: str) -> None:
    global _checked
    _known.add(name)
    _checked = True


def drop_known(name: str) -> None:
    if name != DEFAULT:
        _known.discard(name)


def _check(name: str) -> str:
    if _checked and name not in _known:
        raise ValueError(f"{name!r} is not a known engine (known: {', '.join(known())})")
    return name


EngineName = Annotated[str, Field(min_length=1, max_length=64), AfterValidator(_check)]
