"""`arraybench import BUNDLE`: the run recreated in this results folder, its folder under
runs/RUN and its rows in the store, so `show`, `report` and `compare` read it as on the
machine that ran it.

Nothing is trusted before it is checked: the bundle's directory and manifest first
(archive.py), then each member written under a fresh staging folder inside runs/ (never
through a link: every name is created new, O_EXCL | O_NOFOLLOW) and hashed as it is written;
a member that differs from the manifest, a member added or missing, rows the store refuses:
the staging folder is removed and nothing is stored. Only then is it renamed to runs/RUN
and the rows stored, in one transaction. A host-tuning journal is kept under another name
(`host-tuning.journal.imported`): `arraybench revert` here must never write another
machine's sysfs values on this one.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from arraybench.bundle import limits
from arraybench.bundle.archive import (
    Bundle,
    BundleRefused,
    chunks,
    digest,
    lines,
    open_bundle,
)
from arraybench.bundle.verify import plan_problem
from arraybench.events.tuning import JOURNAL_NAME
from arraybench.store.db import Store
from arraybench.store.portable import IMPORTED_MARK, MAX_LINE_BYTES, add_run_lines

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
IMPORTED_JOURNAL = f"{JOURNAL_NAME}.imported"


@dataclass(frozen=True)
class Loaded:
    run_id: str
    points: int
    files: int


def is_bundle(path: Path) -> bool:
    """A zip file: what `arraybench import` reads as a bundle (no result file of a tool it
    imports starts so)."""
    try:
        if not path.is_file():  # a FIFO is never opened, so never waited on
            return False
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as file:
        return file.read(4) == b"PK\x03\x04"


def load_bundle(path: Path, results: Path) -> Loaded:
    """The bundle's run stored in the store of `results` (made if new)."""
    with open_bundle(path) as bundle:
        run_id = bundle.manifest.run_id
        if missing := sorted(bundle.manifest.members.keys() - bundle.members.keys()):
            raise _refused(bundle, f"its manifest names {missing[0]!r}, which it does not hold")
        if added := sorted(bundle.members.keys() - bundle.manifest.members.keys()):
            raise _refused(bundle, f"member {added[0]!r} is not in its manifest")
        if limits.ROWS not in bundle.members:
            raise _refused(bundle, f"it holds no {limits.ROWS}")
        if results.exists() and not results.is_dir():
            Store(results)  # its one line: a file, not a directory
        runs = results / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        final = runs / run_id
        if os.path.lexists(final):
            raise BundleRefused(
                f"{final} already exists: run {run_id} was imported or run here",
                "import it into another results folder (--results DIR)",
            )
        staging = Path(tempfile.mkdtemp(prefix=".import-", dir=runs))
        try:
            files = _extract(bundle, staging)
            _others_checked(bundle)
            _mark(staging, bundle)
            with contextlib.closing(Store(results)) as store:
                os.rename(staging, final)
                try:
                    points = add_run_lines(store, _rows(bundle), run_id)
                except BaseException:
                    shutil.rmtree(final, ignore_errors=True)
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return Loaded(run_id, points, files)


def _others_checked(bundle: Bundle) -> None:
    """The members not extracted (the plan, findings, provenance) against the manifest, and
    the plan's own SHA-256."""
    for name, info in bundle.members.items():
        if name.startswith(limits.RUN_DIR) or name == limits.ROWS:
            continue  # checked as they are read
        if digest(bundle.path, bundle.zip, info) != bundle.manifest.members[name].sha256:
            raise _refused(bundle, f"changed: {name} (its SHA-256 is not the manifest's)")
    if why := plan_problem(bundle):
        raise _refused(bundle, why)


def _refused(bundle: Bundle, why: str) -> BundleRefused:
    return BundleRefused(
        f"{bundle.path}: {why}", "check it with `arraybench bundle verify`; nothing was written"
    )


def _rows(bundle: Bundle) -> Iterator[bytes]:
    """The rows' lines, read as they are stored; BundleRefused after the last one when they
    are not what the manifest hashed (the transaction storing them then stores nothing)."""
    sha = hashlib.sha256()
    info = bundle.members[limits.ROWS]
    yield from lines(bundle.path, bundle.zip, info, MAX_LINE_BYTES, sha)
    if sha.hexdigest() != bundle.manifest.members[limits.ROWS].sha256:
        raise _refused(bundle, f"changed: {limits.ROWS} (its SHA-256 is not the manifest's)")


def _extract(bundle: Bundle, staging: Path) -> int:
    """The run's folder's members written under `staging`, each hashed against the manifest."""
    count = 0
    for name, info in sorted(bundle.members.items()):
        if not name.startswith(limits.RUN_DIR):
            continue
        rel = name[len(limits.RUN_DIR) :].split("/")
        if rel[-1] == JOURNAL_NAME:
            rel[-1] = IMPORTED_JOURNAL
        target = staging.joinpath(*rel)
        sha = hashlib.sha256()
        try:
            _make_dirs(staging, rel[:-1])
            fd = os.open(target, _CREATE, 0o644)
        except OSError as exc:
            raise _refused(bundle, f"member {name!r} cannot be written ({exc.strerror})") from None
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks(bundle.path, bundle.zip, info):
                sha.update(chunk)
                out.write(chunk)
        if sha.hexdigest() != bundle.manifest.members[name].sha256:
            raise _refused(bundle, f"changed: {name} (its SHA-256 is not the manifest's)")
        count += 1
    return count


def _mark(staging: Path, bundle: Bundle) -> None:
    """Where the run came from, in its folder (a bundle of an imported run holds the mark of
    its own import: replaced)."""
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    mark = {"bundle": str(bundle.path), "run_id": bundle.manifest.run_id,
            "manifest_sha256": hashlib.sha256(bundle.manifest_bytes).hexdigest(),
            "signed": bundle.signature is not None, "imported": now}  # fmt: skip
    spare = staging / f".{IMPORTED_MARK}.tmp"
    with os.fdopen(os.open(spare, _CREATE, 0o644), "w") as out:
        json.dump(mark, out, indent=1)
    os.replace(spare, staging / IMPORTED_MARK)


def _make_dirs(staging: Path, parts: list[str]) -> None:
    """Each folder made new or found a real folder (never a link) under `staging`."""
    here = staging
    for part in parts:
        here = here / part
        try:
            os.mkdir(here, 0o755)
        except FileExistsError:
            if not here.is_dir() or here.is_symlink():
                raise NotADirectoryError(20, "a file stands where a folder must be") from None
