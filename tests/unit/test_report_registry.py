"""The registry is the one list of the run report's sections: every section module's
`section` is in it exactly once, so a new module cannot be written and forgotten."""

from __future__ import annotations

import importlib
import pkgutil

from arraybench.report import sections
from arraybench.report.sections.registry import SECTIONS


def test_every_section_is_registered_once() -> None:
    hooks = []
    for info in pkgutil.iter_modules(sections.__path__):
        module = importlib.import_module(f"{sections.__name__}.{info.name}")
        hooks += [getattr(module, name) for name in vars(module)
                  if name.endswith("section") and callable(getattr(module, name))
                  and getattr(module, name).__module__ == module.__name__]  # fmt: skip
    assert hooks and len(SECTIONS) == len(set(SECTIONS))
    assert {f"{h.__module__}.{h.__name__}" for h in hooks} == {
        f"{s.__module__}.{s.__name__}" for s in SECTIONS
    }


def test_the_notes_box_comes_last() -> None:
    """It counts every note the sections before it added."""
    assert SECTIONS[-1].__module__.endswith(".appendix")
