"""The import as a whole: the paths gathered (regular files only, folders walked), scanned
into points to be, each built and range-checked (`prepare_import`, nothing written), then
stored as one run in one transaction (`store_import`, storing.py)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arraybench.errors import ArraybenchError, utf8_safe, utf8_safe_all
from arraybench.importer.candidate import Skipped
from arraybench.importer.pattern import compile_pattern
from arraybench.importer.registry import described
from arraybench.importer.scan import Scan
from arraybench.importer.storing import Ready, ready, store_run
from arraybench.store.db import Store
from arraybench.userfiles import InputFileError, not_regular

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


@dataclass(frozen=True)
class ImportResult:
    run_id: str
    points: list[str]  # point keys, in the order stored
    skipped: list[Skipped]
    notes: list[str] = field(default_factory=list)  # what was inferred or chosen, per file
    files_examined: int = 0


@dataclass(frozen=True)
class PreparedImport:
    """An import read, checked and built, nothing written yet (prepare_import)."""

    run_name: str
    paths: list[Path]
    points: list[Ready]
    scan: Scan
    files_examined: int

    @property
    def description(self) -> dict[str, Any]:
        """What the run keeps of its sources (its `import.yaml` and plan text)."""
        return {"sources": [str(p) for p in self.paths], "root": str(self.scan.root),
                "points": len(self.points), "notes": self.scan.notes,
                "skipped": [f"{s.path}: {s.reason}" for s in self.scan.skipped]}  # fmt: skip


def prepare_import(
    paths: list[Path], *, run_name: str, name_pattern: str | None = None
) -> PreparedImport:
    """Read fio results under ``paths`` and build every point to store; ImportRefused (one
    located line) when a number is out of range. Writes nothing: a refusal leaves the store
    and the results folder as they were."""
    if not _NAME_RE.match(run_name):
        raise ArraybenchError(
            f"run name {run_name!r} is not usable", "use letters, digits, '.', '_' and '-'"
        )
    regex = compile_pattern(name_pattern)
    files, skipped = _gather(paths)
    root = _root(paths)
    scan = Scan(root, regex, skipped)
    for path in files:
        scan.add(path)
    candidates = scan.finish()
    scan.attach_logs(candidates)
    candidates += scan.log_candidates({c.key for c in candidates})
    if not candidates:
        raise _nothing_error(len(files), scan.skipped)
    points = [ready(seq, c) for seq, c in enumerate(candidates, start=1)]
    return PreparedImport(run_name, list(paths), points, scan, len(files))


def store_import(store: Store, prepared: PreparedImport) -> ImportResult:
    """Store a prepared import as one new run: one transaction, all or nothing."""
    run_id = store_run(store, prepared.run_name, prepared.points, prepared.description)
    scan = prepared.scan
    keys = [r.candidate.key for r in prepared.points]
    skipped = [Skipped(utf8_safe(s.path), utf8_safe(s.reason)) for s in scan.skipped]
    return ImportResult(run_id, keys, skipped, utf8_safe_all(scan.notes), prepared.files_examined)


def import_paths(
    store: Store, paths: list[Path], *, run_name: str, name_pattern: str | None = None
) -> ImportResult:
    """Read fio results under ``paths`` and store them as one new run named ``run_name``."""
    prepared = prepare_import(paths, run_name=run_name, name_pattern=name_pattern)
    return store_import(store, prepared)


def _gather(paths: Sequence[Path]) -> tuple[list[Path], list[Skipped]]:
    files: list[Path] = []
    skipped: list[Skipped] = []
    for path in paths:
        if path.is_dir():
            files += _walk(path, skipped)
        elif path.is_file():
            files.append(path)
        elif path.exists() or path.is_symlink():  # a FIFO, socket, device, link loop
            raise InputFileError(f"{path}: {not_regular(path)}",
                                 "give result files (regular files) or folders")  # fmt: skip
        else:
            skipped.append(Skipped(str(path), "no such file or directory"))
    unique = list(dict.fromkeys(files))
    return unique, skipped


def _walk(folder: Path, skipped: list[Skipped]) -> list[Path]:
    """The regular files under `folder` (links to files followed, links to folders not:
    rglob never follows them, so a loop of links cannot make the walk endless); a FIFO,
    socket, device or broken link found there is skipped with its reason, never opened."""
    files = []
    for path in sorted(folder.rglob("*")):
        why = not_regular(path)
        if why is None:
            files.append(path)
        elif not path.is_dir():
            skipped.append(Skipped(str(path), why))
    return files


def _root(paths: Sequence[Path]) -> Path:
    folders = [str((p if p.is_dir() else p.parent).resolve()) for p in paths if p.exists()]
    return Path(os.path.commonpath(folders)) if folders else Path.cwd()


def _nothing_error(examined: int, skipped: list[Skipped]) -> ArraybenchError:
    shown = "; ".join(f"{s.path}: {s.reason}" for s in skipped[:3])
    more = f" (and {len(skipped) - 3} more)" if len(skipped) > 3 else ""
    return ArraybenchError(
        f"nothing to import: {examined} file(s) examined, none holds results to import"
        + (f" ({shown}{more})" if shown else ""),
        f"give results as files or folders: {described(how=True)}",
    )
