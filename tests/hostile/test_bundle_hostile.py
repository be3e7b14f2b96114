"""Hostile bundles given to `arraybench import` and `bundle verify` (docs/bundle.md): each is
refused with one line, exit 2, and nothing is written outside the results folder (nor, for
an import refused whole, inside it).

Each bundle is made here, member by member, with a manifest that lists its members truly, so
that the one hostile thing in it is what gets it refused.
"""

from __future__ import annotations

import hashlib
import json
import stat
import struct
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

import pytest

from arraybench.bundle import limits
from tests.conftest import main_cli

RUN_ID = "20260101-000000-evil"
PLAN = b"name: evil\n"


def _info(name: str, mode: int = stat.S_IFREG | 0o644) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.create_system, info.external_attr = 3, mode << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def _jsonl(*lines: object) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _rows(run_id: str = RUN_ID) -> bytes:
    return _jsonl({"schema": 7, "columns": {"runs": ["id"]}}, ["runs", [run_id]])


def _bundle(
    path: Path,
    members: Sequence[tuple[zipfile.ZipInfo, bytes]],
    run_id: str = RUN_ID,
    listed: Sequence[dict[str, object]] | None = None,
    rows: bytes | None = None,
) -> Path:
    """A zip of `members` beside a plan and rows, and a manifest listing them all (or
    `listed`)."""
    every = [(_info("plan/given.yaml"), PLAN), (_info(limits.ROWS), rows or _rows(run_id)),
             *members]  # fmt: skip
    entries = [{"name": i.filename, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()}
               for i, d in every]  # fmt: skip
    manifest = {"format": limits.FORMAT, "version": limits.VERSION, "run_id": run_id,
                "plan_sha256": hashlib.sha256(PLAN).hexdigest(),
                "members": entries if listed is None else listed}  # fmt: skip
    with zipfile.ZipFile(path, "w") as z:
        for info, data in every:
            z.writestr(info, data)
        z.writestr(_info(limits.MANIFEST), json.dumps(manifest))
    return path


def _declared(path: Path, name: str, size: int) -> Path:
    """The zip at `path` with `name`'s uncompressed size in the central directory (what a
    reader trusts) set to `size`: what a bomb declares, or a member that lies."""
    raw = bytearray(path.read_bytes())
    at = raw.find(b"PK\x01\x02")  # the central directory's first entry
    while at >= 0:
        n = struct.unpack_from("<H", raw, at + 28)[0]
        if raw[at + 46 : at + 46 + n].decode() == name:
            struct.pack_into("<I", raw, at + 24, size)
        at = raw.find(b"PK\x01\x02", at + 46)
    path.write_bytes(bytes(raw))
    return path


def _refused(tmp_path: Path, bundle: Path, *words: str) -> None:
    """Both commands refuse it in one line, exit 2; nothing was written anywhere."""
    before = {p for p in tmp_path.rglob("*")}
    for args in (["import", str(bundle), "--results", str(tmp_path / "res")],
                 ["bundle", "verify", str(bundle)]):  # fmt: skip
        done = main_cli(*args)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert len(lines) == 1 and lines[0].startswith("error: "), lines
        assert "Traceback" not in done.stderr
        assert all(w in lines[0] for w in words), lines[0]
    after = {p for p in tmp_path.rglob("*") if not p.is_dir()}
    assert after <= before, sorted(after - before)
    assert not (tmp_path.parent / "evil").exists() and not Path("/tmp/evil-bundle").exists()


@pytest.mark.parametrize(
    ("name", "mode", "words"),
    [
        ("run/../../evil", stat.S_IFREG | 0o644, ["leaving its folder"]),
        ("/tmp/evil-bundle", stat.S_IFREG | 0o644, ["absolute path"]),
        ("C:/evil", stat.S_IFREG | 0o644, ["absolute path"]),
        ("run/a\\..\\..\\evil", stat.S_IFREG | 0o644, ["backslash"]),
        ("run/link", stat.S_IFLNK | 0o777, ["symbolic link"]),
        ("run/dev", stat.S_IFCHR | 0o644, ["character device"]),
        ("run/blk", stat.S_IFBLK | 0o644, ["block device"]),
        ("run/fifo", stat.S_IFIFO | 0o644, ["FIFO"]),
        ("run/dir/", stat.S_IFDIR | 0o755, ["directory"]),
    ],
    ids=["dotdot", "absolute", "drive", "backslash", "symlink", "chardev", "blockdev", "fifo",
         "dir"],
)  # fmt: skip
def test_a_member_that_could_escape_or_is_no_file_is_refused(
    tmp_path: Path, name: str, mode: int, words: list[str]
) -> None:
    data = b"/etc/passwd" if stat.S_ISLNK(mode) else b"x"
    bundle = _bundle(tmp_path / "b.zip", [(_info(name, mode), data)])
    _refused(tmp_path, bundle, "is refused", *words)


def test_a_member_over_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "b.zip", [(_info("run/big.log"), b"small")])
    _declared(bundle, "run/big.log", limits.MAX_MEMBER_BYTES + 1)
    _refused(tmp_path, bundle, "run/big.log", "over the limit")


def test_a_compression_bomb_is_refused_before_it_is_decompressed(tmp_path: Path) -> None:
    zeros = zlib.compress(b"\0" * (8 << 20), 9)  # 8 MiB of zeros: about 8 KiB deflated
    bomb = [(_info(f"run/z{n}.log"), b"\0" * (8 << 20)) for n in range(2)]
    bundle = _bundle(tmp_path / "b.zip", bomb)
    assert bundle.stat().st_size < 2 * len(zeros) + 4096
    for n in range(2):  # each now says it holds 1 GiB: 2 GiB from 16 KiB
        _declared(bundle, f"run/z{n}.log", limits.MAX_MEMBER_BYTES)
    _refused(tmp_path, bundle, "compression bomb")


def test_a_member_holding_more_than_it_declares_is_refused(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "b.zip", [(_info("run/liar.log"), b"\0" * (1 << 20))])
    _declared(bundle, "run/liar.log", 1000)  # 1 MiB behind a declared 1000 bytes
    done = main_cli("import", str(bundle), "--results", str(tmp_path / "res"))
    assert done.returncode == 2 and "run/liar.log" in done.stderr, done.stderr
    assert not [p for p in (tmp_path / "res").rglob("*") if not p.is_dir()]


def test_too_many_members_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_MEMBERS", 5)  # 100,000 real members: too slow a test
    bundle = _bundle(tmp_path / "b.zip", [(_info(f"run/{n}"), b"") for n in range(6)])
    _refused(tmp_path, bundle, "members, over the limit of 5")


def test_a_manifest_naming_a_missing_member_is_refused_on_import(tmp_path: Path) -> None:
    listed = [{"name": "run/ghost.log", "size": 1, "sha256": "0" * 64}]
    for name, data in (("plan/given.yaml", PLAN), (limits.ROWS, _rows())):
        listed.append({"name": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    bundle = _bundle(tmp_path / "b.zip", [], listed=listed)
    done = main_cli("import", str(bundle), "--results", str(tmp_path / "res"))
    assert done.returncode == 2 and "'run/ghost.log', which it does not hold" in done.stderr
    verify = main_cli("bundle", "verify", str(bundle))
    assert verify.returncode == 1 and "removed: run/ghost.log" in verify.stderr
    assert not (tmp_path / "res").exists() or not any((tmp_path / "res").rglob("*.db"))


def test_a_manifest_lying_about_a_hash_leaves_nothing_behind(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "b.zip", [(_info("run/points/1/fio.json"), b"{}")])
    with zipfile.ZipFile(bundle) as z:
        manifest = json.loads(z.read(limits.MANIFEST))
        members = [(i, z.read(i)) for i in z.infolist() if i.filename != limits.MANIFEST]
    for m in manifest["members"]:
        if m["name"] == "run/points/1/fio.json":
            m["sha256"] = hashlib.sha256(b"something else").hexdigest()
    with zipfile.ZipFile(bundle, "w") as z:
        for info, data in members:
            z.writestr(info, data)
        z.writestr(_info(limits.MANIFEST), json.dumps(manifest))
    done = main_cli("import", str(bundle), "--results", str(tmp_path / "res"))
    assert done.returncode == 2 and "changed: run/points/1/fio.json" in done.stderr, done.stderr
    assert not [p for p in (tmp_path / "res").rglob("*") if not p.is_dir()]


@pytest.mark.parametrize(
    ("run_id", "words"), [("../../evil", "not a run id"), (".hidden", "not a run id")]
)
def test_a_run_id_that_is_no_folder_name_is_refused(
    tmp_path: Path, run_id: str, words: str
) -> None:
    _refused(tmp_path, _bundle(tmp_path / "b.zip", [], run_id=run_id), words)


HEAD = {"schema": 7, "columns": {"runs": ["id"]}}


@pytest.mark.parametrize(
    ("rows", "words"),
    [
        ([{"schema": 7, "columns": {"runs; DROP TABLE runs": []}}], "which a store has not"),
        ([{"schema": 7, "columns": {"runs": ["id", "evil) VALUES (1); --"]}},
          ["runs", [RUN_ID, 1]]], "this store has not"),
        ([HEAD, ["runs", [{"a": 1}]]], "not text, a number or null"),
        ([HEAD, ["runs", [True]]], "not text, a number or null"),
        ([HEAD, ["points", [1]]], "not named first"),
        ([HEAD, ["runs", ["20260101-000000-other"]]], "not the one row of run"),
        ([{"schema": 99, "columns": {"runs": ["id"]}}], "schema 99"),
        ([HEAD, ["runs", [RUN_ID]]], "break the store's rules"),  # NOT NULL columns missing
        ([HEAD], "do not hold run"),
        (["not a header"], "names no columns"),
    ],
    ids=["table", "column", "nested", "bool", "unnamed", "other-run", "schema", "constraint",
         "no-run", "no-header"],
)  # fmt: skip
def test_rows_the_store_cannot_take_are_refused_whole(
    tmp_path: Path, rows: list[object], words: str
) -> None:
    bundle = _bundle(tmp_path / "b.zip", [(_info("run/points/1/fio.json"), b"{}")],
                     rows=_jsonl(*rows))  # fmt: skip
    done = main_cli("import", str(bundle), "--results", str(tmp_path / "res"))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and words in lines[0], done.stderr
    left = [p for p in (tmp_path / "res").rglob("*") if p.is_file()]
    assert all(p.name.startswith("arraybench.db") for p in left), left  # an empty store at most
    assert not list((tmp_path / "res" / "runs").iterdir())


def test_a_file_that_is_no_zip_or_no_bundle_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "fake.zip"
    fake.write_bytes(b"PK\x03\x04" + b"\0" * 100)
    _refused(tmp_path, fake, "not a zip archive")
    plain = tmp_path / "plain.zip"
    with zipfile.ZipFile(plain, "w") as z:
        z.writestr("hello.txt", "hi")
    _refused(tmp_path, plain, "no manifest.json")


def test_a_link_planted_at_the_run_folder_is_not_followed(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "b.zip", [(_info("run/points/1/fio.json"), b"{}")])
    (outside := tmp_path / "outside").mkdir()
    (tmp_path / "res" / "runs").mkdir(parents=True)
    (tmp_path / "res" / "runs" / RUN_ID).symlink_to(outside)
    done = main_cli("import", str(bundle), "--results", str(tmp_path / "res"))
    assert done.returncode == 2 and "already exists" in done.stderr, done.stderr
    assert not any(outside.iterdir())
