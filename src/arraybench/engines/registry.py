"""Engine name -> a factory of that engine: the plan's `engine:` picks one (default `fio`).

A new engine registers here once (its module's factory, `register`) and nothing in `run/`
or `targets/` changes: they call the engine the campaign took from `engine_for`. The plan's
parser learns every registered name (`plan.engine_choice`), so an unknown `engine:` is
refused with its file and line before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable

from arraybench.engines.base import Engine
from arraybench.engines.fio.engine import FioEngine
from arraybench.engines.mdtest.engine import MdtestEngine
from arraybench.errors import PlanError
from arraybench.plan import engine_choice

Factory = Callable[[], Engine]
DEFAULT = engine_choice.DEFAULT  # the plan's `engine:` when it names none

_FACTORIES: dict[str, Factory] = {}


def register(name: str, factory: Factory) -> None:
    """Make `name` a valid `engine:` value, built by `factory` when a run starts."""
    _FACTORIES[name] = factory
    engine_choice.add_known(name)


def unregister(name: str) -> None:
    """Forget an engine (a test's own, once the test is done); fio stays."""
    if name != engine_choice.DEFAULT:
        _FACTORIES.pop(name, None)
        engine_choice.drop_known(name)


def names() -> list[str]:
    return sorted(_FACTORIES)


def engine_for(name: str) -> Engine:
    """A fresh engine of that name; PlanError (exit 2) for a name nobody registered."""
    factory = _FACTORIES.get(name)
    if factory is None:
        raise PlanError(f"engine: {name!r} is not a known engine",
                        f"use one of: {', '.join(names())}")  # fmt: skip
    return factory()


register(engine_choice.DEFAULT, FioEngine)
register("mdtest", MdtestEngine)  # the metadata test's (`metadata: {engine: mdtest}`)
