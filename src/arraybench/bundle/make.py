"""`arraybench bundle RUN -o FILE`: a run's evidence in one zip (docs/bundle.md).

Members: the plan as given (`given.yaml` in the bundle's `plan/`, the run's stored plan) and
as resolved (`resolved.yaml` beside it, every default filled in), the store's rows of the run
(`rows.jsonl` in its `store/`), its findings and flags (`findings.json`), its provenance
(`provenance.json`), and the run's folder whole under `run/` (each point's job file, the
engine's raw outputs and logs, the tuning journal, the reports written there). The manifest
(`manifest.json`) lists every member with its size and SHA-256 and the plan's SHA-256; the
optional signature (`manifest.json.sig`) signs the manifest.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import stat
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from arraybench import __version__
from arraybench.bundle import limits, sign
from arraybench.bundle.archive import BundleRefused, name_problem
from arraybench.errors import ArraybenchError
from arraybench.finding_kinds import PROVENANCE
from arraybench.outfiles import replacing
from arraybench.plan.load import parse_plan_text
from arraybench.store.db import LOCK_NAME, RunRecord, Store
from arraybench.store.portable import columns, run_lines, table_rows

SKIPPED = (LOCK_NAME,)  # held by a running process: not evidence


@dataclass(frozen=True)
class Made:
    path: Path
    members: int
    bytes_in: int  # uncompressed, every member
    bytes_out: int  # the bundle's size
    signed: bool
    skipped: list[str]  # files of the run's folder left out, and why


class _Writer:
    """Members into the zip, each one's size and SHA-256 kept for the manifest."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self.archive = archive
        self.listed: list[dict[str, Any]] = []
        self.total = 0

    def _info(self, name: str, mtime: float) -> zipfile.ZipInfo:
        when = time.gmtime(max(mtime, 315532800))[:6]  # zip's dates start in 1980
        info = zipfile.ZipInfo(name, date_time=when)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.create_system = 3  # Unix: the mode below says "a regular file"
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        return info

    def add(self, name: str, chunks: Iterator[bytes] | bytes, mtime: float | None = None) -> None:
        if len(self.listed) >= limits.MAX_MEMBERS:
            raise ArraybenchError(f"the run has more than {limits.MAX_MEMBERS} files, the most "
                                  "a bundle holds")  # fmt: skip
        sha, size = hashlib.sha256(), 0
        info = self._info(name, time.time() if mtime is None else mtime)
        with self.archive.open(info, "w") as out:
            for chunk in [chunks] if isinstance(chunks, bytes) else chunks:
                size += len(chunk)
                if size > limits.MAX_MEMBER_BYTES:
                    raise ArraybenchError(f"{name} is over {limits.MAX_MEMBER_BYTES} bytes, the "
                                          "most one member of a bundle holds")  # fmt: skip
                sha.update(chunk)
                out.write(chunk)
        self.total += size
        if self.total > limits.MAX_TOTAL_BYTES:
            raise ArraybenchError(f"the run's files are over {limits.MAX_TOTAL_BYTES} bytes, "
                                  "the most a bundle holds")  # fmt: skip
        self.listed.append({"name": name, "size": size, "sha256": sha.hexdigest()})


def make_bundle(store: Store, run: RunRecord, out: Path, key: Path | None) -> Made:
    """The bundle of `run` written to `out` (replacing it whole, never through a link)."""
    folder = Path(run.folder)
    skipped: list[str] = []
    given = run.plan_yaml.encode()
    with replacing(out, "the bundle") as spare, zipfile.ZipFile(spare, "w") as archive:
        writer = _Writer(archive)
        writer.add("plan/given.yaml", given)
        if resolved := _resolved(run):
            writer.add("plan/resolved.yaml", resolved.encode())
        writer.add(limits.ROWS, run_lines(store, run.id))
        writer.add("findings.json", _json(_findings(store, run.id)))
        writer.add("provenance.json", _json(_provenance(store, run)))
        for path, name, why in _run_files(folder, {spare.resolve(), out.resolve()}):
            if why:
                skipped.append(f"{name}: {why}")
                continue
            writer.add(f"{limits.RUN_DIR}{name}", _read(path), path.lstat().st_mtime)
        manifest = _json({
            "format": limits.FORMAT, "version": limits.VERSION, "run_id": run.id,
            "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "arraybench_version": __version__,
            "plan_sha256": hashlib.sha256(given).hexdigest(),
            "limits": {"members": limits.MAX_MEMBERS, "member_bytes": limits.MAX_MEMBER_BYTES,
                       "total_bytes": limits.MAX_TOTAL_BYTES},
            "skipped": skipped, "members": writer.listed,
        })  # fmt: skip
        archive.writestr(writer._info(limits.MANIFEST, time.time()), manifest)
        if key is not None:
            archive.writestr(writer._info(limits.SIGNATURE, time.time()), sign.sign(key, manifest))
    return Made(out, len(writer.listed), writer.total, out.stat().st_size, key is not None,
                skipped)  # fmt: skip


def _json(data: object) -> bytes:
    return json.dumps(data, indent=1, sort_keys=False, ensure_ascii=False).encode()


def _resolved(run: RunRecord) -> str | None:
    """The plan with every default filled in; None when the stored plan no longer parses
    (an imported run's plan, a plan of an older arraybench): given.yaml still holds it."""
    try:
        plan = parse_plan_text(run.plan_yaml, f"{run.folder}/plan.yaml")
    except ArraybenchError:
        return None
    return yaml.safe_dump(plan.model_dump(mode="json"), sort_keys=False)


def _findings(store: Store, run_id: str) -> list[dict[str, Any]]:
    """Every finding and validity flag of the run, with its point's key (null: the run's)."""
    keys: dict[Any, Any] = {}
    cols = columns(store, "points")
    for _, row in table_rows(store, run_id, ["points"]):
        point = dict(zip(cols, row, strict=True))
        keys[point["id"]] = point["key"]
    cols = columns(store, "findings")
    out = []
    for _, row in table_rows(store, run_id, ["findings"]):
        values = dict(zip(cols, row, strict=True))
        try:
            data = json.loads(str(values["data_json"]))
        except ValueError:
            data = values["data_json"]
        out.append({"point": keys.get(values["point_id"]), "kind": values["kind"], "data": data})
    return out


def _provenance(store: Store, run: RunRecord) -> dict[str, Any]:
    found = PROVENANCE.among(store.findings(run.id, PROVENANCE.name))
    return {
        "arraybench_version": run.arraybench_version, "bundled_by": __version__,
        "engine_version": run.engine_version, "host": run.host, "kernel": run.kernel,
        "targets": run.targets, "scale": run.scale, "status": run.status,
        "started": run.started, "finished": run.finished,
        "inventory": [dict(f) for f in found],  # machine, targets, hosts, host tuning
    }  # fmt: skip


def _run_files(folder: Path, bundle: set[Path]) -> Iterator[tuple[Path, str, str | None]]:
    """Every file under the run's folder (links not followed) but the bundle being written
    (`-o` inside the run's folder): path, its member name, and why it is left out (None: it
    is not)."""
    for top, dirs, files in os.walk(folder, followlinks=False):
        dirs.sort()
        for name in sorted(files) + [d for d in dirs if Path(top, d).is_symlink()]:
            path = Path(top, name)
            rel = path.relative_to(folder).as_posix()
            mode = path.lstat().st_mode
            if name in SKIPPED or path.resolve() in bundle:
                continue
            if not stat.S_ISREG(mode):
                yield path, rel, "not a regular file (a link or a special file)"
            elif why := name_problem(rel):
                yield path, rel, why
            else:
                yield path, rel, None


def _read(path: Path) -> Iterator[bytes]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        raise BundleRefused(f"{path}: cannot read it ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise BundleRefused(f"{path}: became a special file while it was bundled")
        while chunk := file.read(1 << 20):
            yield chunk
