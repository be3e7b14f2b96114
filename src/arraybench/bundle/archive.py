"""A bundle read back as hostile input: the zip's directory checked whole (names, kinds,
declared sizes, their sum) before one byte of a member is decompressed, the manifest checked
for shape, and every member read in bounded chunks that stop at its declared size.

Why zip (docs/bundle.md): its central directory names every member with its size and kind
before anything is decompressed, so a path escaping the folder, a link, a device or a member
over the limit is refused up front; any member (the manifest, the report) is read without
reading the others; and every system opens one with no extra tool.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from arraybench.bundle import limits
from arraybench.errors import ArraybenchError
from arraybench.userfiles import open_regular

CHUNK = 1 << 20
_HEX64 = re.compile(r"[0-9a-f]{64}")
_RUN_ID = re.compile(r"[\w+=-][\w.+=-]{0,139}", re.ASCII)  # as store/run_ids.py names them
_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))  # fmt: skip
HINT = "ask for the bundle again from whoever made it; nothing was written"


class BundleRefused(ArraybenchError):
    """A file that is no bundle, or one past its bounds or its manifest: one line, exit 2."""


@dataclass(frozen=True)
class Listed:
    """A member as the manifest lists it."""

    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Manifest:
    run_id: str
    plan_sha256: str
    created: str
    arraybench_version: str
    members: dict[str, Listed]


@dataclass
class Bundle:
    path: Path
    zip: zipfile.ZipFile
    members: dict[str, zipfile.ZipInfo]  # every member but the manifest and its signature
    manifest_bytes: bytes
    manifest: Manifest
    signature: bytes | None


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a member's name (a relative path that stays inside the folder it
    is written to); None when it can."""
    raw = name.encode("utf-8", "surrogateescape")
    if not name or len(raw) > limits.MAX_NAME_BYTES:
        return "an empty or over-long name"
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return "an absolute path"
    if "\\" in name or any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "a backslash or a control character in its name"
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "a path leaving its folder (an empty, `.` or `..` part)"
    if any(len(p.encode("utf-8", "surrogateescape")) > 255 for p in parts):
        return "a part of its path longer than 255 bytes"
    return None


def _refuse(path: Path, what: str) -> BundleRefused:
    return BundleRefused(f"{path}: {what}", HINT)


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    if info.is_dir():
        return "a directory entry"
    if why := name_problem(info.filename):
        return why
    mode = info.external_attr >> 16
    # no file type in the mode (many zip writers leave it out): a regular file
    if info.create_system == 3 and stat.S_IFMT(mode) and not stat.S_ISREG(mode):
        return next((kind for test, kind in _KINDS if test(mode)), "a special file")
    if info.flag_bits & 0x1:
        return "encrypted"
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return f"compressed with method {info.compress_type} (only stored and deflate are read)"
    if info.file_size > limits.MAX_MEMBER_BYTES:
        return f"{info.file_size} bytes uncompressed, over the limit of {limits.MAX_MEMBER_BYTES}"
    if info.file_size > max(info.compress_size, 1) * limits.MAX_RATIO:
        return (f"{info.file_size} bytes from {info.compress_size} compressed, more than deflate "
                "can give (a compression bomb)")  # fmt: skip
    return None


@contextlib.contextmanager
def open_bundle(path: Path) -> Iterator[Bundle]:
    """The bundle at `path`, its directory and manifest checked (BundleRefused otherwise)."""
    with open_regular(path, "the bundle", limits.MAX_TOTAL_BYTES) as file:
        try:
            archive = zipfile.ZipFile(file)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
            raise _refuse(path, f"not a zip archive, so no bundle ({exc})") from None
        with archive:
            yield _checked(path, archive)


def _checked(path: Path, archive: zipfile.ZipFile) -> Bundle:
    infos = archive.infolist()
    if len(infos) > limits.MAX_MEMBERS + 2:
        raise _refuse(path, f"{len(infos)} members, over the limit of {limits.MAX_MEMBERS}")
    seen: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        if why := _member_problem(info):
            raise _refuse(path, f"member {info.filename!r} is refused: {why}")
        if info.filename in seen:
            raise _refuse(path, f"member {info.filename!r} is in it twice")
        seen[info.filename] = info
    total = sum(i.file_size for i in infos)
    if total > limits.MAX_TOTAL_BYTES:
        raise _refuse(path, f"its members are {total} bytes uncompressed, over the limit of "
                      f"{limits.MAX_TOTAL_BYTES} (a compression bomb?)")  # fmt: skip
    if limits.MANIFEST not in seen:
        raise _refuse(path, f"no {limits.MANIFEST}: not an arraybench bundle")
    manifest_bytes = read_whole(path, archive, seen.pop(limits.MANIFEST),
                                limits.MAX_MANIFEST_BYTES)  # fmt: skip
    sig = seen.pop(limits.SIGNATURE, None)
    signature = read_whole(path, archive, sig, limits.MAX_SIGNATURE_BYTES) if sig else None
    return Bundle(path, archive, seen, manifest_bytes, parse_manifest(path, manifest_bytes),
                  signature)  # fmt: skip


def chunks(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    """The member's bytes, never more than it declared (BundleRefused: more, or damaged)."""
    left = info.file_size
    try:
        with archive.open(info) as member:
            while chunk := member.read(min(CHUNK, left + 1)):
                left -= len(chunk)
                if left < 0:
                    raise _refuse(path, f"member {info.filename!r} holds more than its size")
                yield chunk
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError) as exc:
        raise _refuse(path, f"member {info.filename!r} is damaged ({exc})") from None
    if left:
        raise _refuse(path, f"member {info.filename!r} holds less than its size")


def lines(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, longest: int,
          sha: hashlib._Hash) -> Iterator[bytes]:  # fmt: skip
    """The member's lines, none longer than `longest` bytes; `sha` fed every byte."""
    held = b""
    for chunk in chunks(path, archive, info):
        sha.update(chunk)
        *whole, held = (held + chunk).split(b"\n")
        if len(held) > longest or any(len(line) > longest for line in whole):
            raise _refuse(path, f"member {info.filename!r} has a line over {longest} bytes")
        yield from (line for line in whole if line)
    if held:
        yield held


def read_whole(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    if info.file_size > limit:
        raise _refuse(path, f"member {info.filename!r} is {info.file_size} bytes, over the "
                      f"limit of {limit} for it")  # fmt: skip
    return b"".join(chunks(path, archive, info))


def digest(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str:
    sha = hashlib.sha256()
    for chunk in chunks(path, archive, info):
        sha.update(chunk)
    return sha.hexdigest()


def parse_manifest(path: Path, raw: bytes) -> Manifest:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise _refuse(path, f"{limits.MANIFEST} is not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != limits.FORMAT:
        raise _refuse(path, f"{limits.MANIFEST} does not say `format: {limits.FORMAT}`")
    if data.get("version") != limits.VERSION:
        raise _refuse(path, f"{limits.MANIFEST} is of version {data.get('version')!r}; this "
                      f"arraybench reads version {limits.VERSION}")  # fmt: skip
    run_id, plan = data.get("run_id"), data.get("plan_sha256")
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
        raise _refuse(path, f"{limits.MANIFEST}: run_id {run_id!r:.80} is not a run id")
    if not isinstance(plan, str) or not _HEX64.fullmatch(plan):
        raise _refuse(path, f"{limits.MANIFEST}: plan_sha256 is not a SHA-256")
    listed = data.get("members")
    if not isinstance(listed, list) or len(listed) > limits.MAX_MEMBERS:
        raise _refuse(path, f"{limits.MANIFEST}: `members` is not a list of at most "
                      f"{limits.MAX_MEMBERS}")  # fmt: skip
    members: dict[str, Listed] = {}
    for entry in listed:
        item = _listed(entry)
        if item is None or item.name in members or item.name in (limits.MANIFEST, limits.SIGNATURE):
            raise _refuse(path, f"{limits.MANIFEST} lists a member wrongly: {entry!r:.120}")
        members[item.name] = item
    return Manifest(run_id, plan, str(data.get("created", "")),
                    str(data.get("arraybench_version", "")), members)  # fmt: skip


def _listed(entry: object) -> Listed | None:
    if not isinstance(entry, dict):
        return None
    name, size, sha = entry.get("name"), entry.get("size"), entry.get("sha256")
    if not isinstance(name, str) or name_problem(name) is not None:
        return None
    if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= 1 << 62:
        return None
    if not isinstance(sha, str) or not _HEX64.fullmatch(sha):
        return None
    return Listed(name, size, sha)
