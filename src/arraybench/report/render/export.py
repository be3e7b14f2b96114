"""One ReportModel -> a file in the format the user asked for (by --format or by extension):
the formats, their extensions and writers are report/render/formats.py's registry."""

from __future__ import annotations

from pathlib import Path

from arraybench.errors import ArraybenchError
from arraybench.report.gcpause import gc_paused
from arraybench.report.model import ReportModel
from arraybench.report.render.formats import REGISTRY

FORMATS = tuple(f.name for f in REGISTRY)
EXTENSIONS = {ext: f.name for f in REGISTRY for ext in f.extensions}


def format_for(path: Path | None, fmt: str | None) -> str:
    if fmt:
        return fmt
    if path is not None and path.suffix.lower() in EXTENSIONS:
        return EXTENSIONS[path.suffix.lower()]
    if path is not None and path.suffix:
        raise ArraybenchError(f"{path}: unknown report format {path.suffix!r}",
                              f"use one of: {', '.join(EXTENSIONS)} or --format")  # fmt: skip
    return "html"


def write_report(model: ReportModel, path: Path, fmt: str) -> Path:
    """Write `model` to `path` as `fmt`; PDF and PNG are printed from the HTML by Chromium."""
    with gc_paused():  # a big run's millions of parts: see report/gcpause.py
        return _write(model, path, fmt)


def _write(model: ReportModel, path: Path, fmt: str) -> Path:
    chosen = next((f for f in REGISTRY if f.name == fmt), None)
    if chosen is None:
        raise ArraybenchError(f"unknown report format {fmt!r}", f"use one of: {', '.join(FORMATS)}")
    # written beside its name and renamed: see outfiles.py
    chosen.write(model, path, f"the {fmt} report")
    return path
