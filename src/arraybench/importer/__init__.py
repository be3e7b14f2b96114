"""Import existing fio results as a run in the store, so that `show` and `report` work on them.

More: docs/internals.md, `importer/__init__.py`."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arraybench.importer.candidate import Skipped
    from arraybench.importer.format import Format
    from arraybench.importer.pattern import LABEL_PREFIX, PATTERN_GROUPS
    from arraybench.importer.prepare import (
        ImportResult,
        PreparedImport,
        import_paths,
        prepare_import,
        store_import,
    )
    from arraybench.importer.registry import FORMATS, described

# name -> the module that owns it; loaded when first asked for, so that the CLI can read the
# registry (its help) without loading the import's store writer (pydantic, the plan model)
_OWNERS = {
    "Skipped": "candidate",
    "Format": "format",
    "LABEL_PREFIX": "pattern",
    "PATTERN_GROUPS": "pattern",
    "ImportResult": "prepare",
    "PreparedImport": "prepare",
    "import_paths": "prepare",
    "prepare_import": "prepare",
    "store_import": "prepare",
    "FORMATS": "registry",
    "described": "registry",
}
__all__ = [
    "FORMATS",
    "LABEL_PREFIX",
    "PATTERN_GROUPS",
    "Format",
    "ImportResult",
    "PreparedImport",
    "Skipped",
    "described",
    "import_paths",
    "prepare_import",
    "store_import",
]


def __getattr__(name: str) -> Any:
    owner = _OWNERS.get(name)
    if owner is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{owner}"), name)
