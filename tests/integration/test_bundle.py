"""A run's bundle (docs/bundle.md): made, verified, imported into another results folder and
read there to the same figures; a member changed, added or removed named by `bundle verify`;
a signed bundle checked with the right SSH key and refused with another.

The campaign runs on the fake engine (tests/fake_engine.py): the bundle is the subject, not fio.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from arraybench.store.db import DB_NAME
from tests.bundles import SHOW_VIEWS, assert_reads_the_same, without_folder
from tests.conftest import main_cli, small_plan
from tests.fake_engine import PLAN_LINES, registered

RUN_FILE = "run/points/001-rand-8k-rw70-w1-qd2/fake.json"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """One campaign's results folder and its bundle."""
    tmp = tmp_path_factory.mktemp("bundle")
    with registered():
        plan = small_plan(tmp, workers="[1, 8]", extra=PLAN_LINES)
        done = main_cli("run", str(plan), "--results", str(tmp / "r"))
        assert done.returncode == 0, done.stderr
        bundled = main_cli(
            "bundle", "latest", "--results", str(tmp / "r"), "-o", str(tmp / "b.zip")
        )
        assert bundled.returncode == 0, bundled.stderr
        yield tmp / "r", tmp / "b.zip"


def _rewritten(src: Path, dst: Path, change: Mapping[str, bytes | None]) -> Path:
    """A copy of the zip `src` with members replaced (bytes), removed (None) or added."""
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            if info.filename not in change:
                new.writestr(info, old.read(info))
            elif (data := change[info.filename]) is not None:
                new.writestr(info, data)
        for name, data in change.items():
            if name not in old.namelist() and data is not None:
                new.writestr(name, data)
    return dst


def test_an_imported_bundle_shows_and_reports_the_same_figures(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    results, bundle = made
    verified = main_cli("bundle", "verify", str(bundle))
    assert verified.returncode == 0, verified.stderr
    assert "every one as its manifest says; not signed" in verified.stdout
    other = tmp_path / "elsewhere"
    imported = main_cli("import", str(bundle), "--results", str(other))
    assert imported.returncode == 0, imported.stderr
    assert "imported run" in imported.stdout and "4 point(s)" in imported.stdout
    a, _ = assert_reads_the_same(results, other, tmp_path, (*SHOW_VIEWS, ["compare", "latest"]))
    assert "rand-8k-rw70" in a
    # the engine's raw output came along, byte for byte
    raw = RUN_FILE.removeprefix("run/")
    (run,) = (results / "runs").iterdir()
    assert (other / "runs" / run.name / raw).read_bytes() == (run / raw).read_bytes()


OLD_VERSION_COLUMN = "fio_version"  # the tool's version column before migration 8


def _as_schema_7(bundle: Path, dst: Path) -> Path:
    """The bundle as an arraybench before migration 8 wrote it: its rows at schema 7, the
    runs' and points' version column under its old name, the manifest saying so."""
    with zipfile.ZipFile(bundle) as z:
        header, rest = z.read("store/rows.jsonl").split(b"\n", 1)
        manifest = json.loads(z.read("manifest.json"))
    first = json.loads(header)
    first["schema"] = 7
    for table in ("runs", "points"):
        cols = first["columns"][table]
        cols[cols.index("engine_version")] = OLD_VERSION_COLUMN
    rows = json.dumps(first).encode() + b"\n" + rest
    (listed,) = (m for m in manifest["members"] if m["name"] == "store/rows.jsonl")
    listed.update(sha256=hashlib.sha256(rows).hexdigest(), size=len(rows))
    change = {"store/rows.jsonl": rows, "manifest.json": json.dumps(manifest).encode()}
    return _rewritten(bundle, dst, change)


def test_a_bundle_made_before_the_version_column_was_renamed_imports_the_same(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    results, bundle = made
    old = _as_schema_7(bundle, tmp_path / "old.zip")
    assert main_cli("bundle", "verify", str(old)).returncode == 0
    imported = main_cli("import", str(old), "--results", str(tmp_path / "r"))
    assert imported.returncode == 0, imported.stderr
    there = main_cli("show", "latest", "--format", "json", "--results", str(results))
    here = main_cli("show", "latest", "--format", "json", "--results", str(tmp_path / "r"))
    assert json.loads(here.stdout)["run"]["engine_version"] == "fake-1.0", here.stderr
    assert without_folder(tmp_path / "r", here.stdout) == without_folder(results, there.stdout)


def test_a_bundle_holds_the_plan_rows_findings_provenance_and_manifest(
    made: tuple[Path, Path],
) -> None:
    _, bundle = made
    with zipfile.ZipFile(bundle) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("manifest.json"))
        provenance = json.loads(z.read("provenance.json"))
        findings = json.loads(z.read("findings.json"))
        resolved = z.read("plan/resolved.yaml").decode()
        rows = [json.loads(line) for line in z.read("store/rows.jsonl").splitlines()]
    assert {"plan/given.yaml", "plan/resolved.yaml", "store/rows.jsonl", RUN_FILE,
            "run/report.html", "run/plan.yaml"} <= names  # fmt: skip
    assert not any(n.endswith(".arraybench.lock") for n in names)
    assert {"runs", "points", "samples", "findings"} <= rows[0]["columns"].keys()
    assert [r[0] for r in rows[1:]].count("points") == 4  # one line a row, every point
    listed = {m["name"] for m in manifest["members"]}
    assert listed == names - {"manifest.json"}
    assert all(len(m["sha256"]) == 64 for m in manifest["members"])
    assert provenance["engine_version"] == "fake-1.0" and provenance["inventory"]
    assert {f["kind"] for f in findings} >= {"provenance"}
    assert "latency_bound" in resolved or "timing" in resolved  # the defaults filled in


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({RUN_FILE: b'{"changed": 1}'}, f"changed: {RUN_FILE}"),
        ({"run/extra.txt": b"planted"}, "added: run/extra.txt"),
        ({RUN_FILE: None}, f"removed: {RUN_FILE}"),
        ({"plan/given.yaml": b"name: another\n"}, "changed: plan/given.yaml"),
    ],
    ids=["changed", "added", "removed", "plan"],
)
def test_verify_names_each_member_that_differs(
    made: tuple[Path, Path], tmp_path: Path, change: dict[str, bytes | None], said: str
) -> None:
    _, bundle = made
    tampered = _rewritten(bundle, tmp_path / "t.zip", change)
    done = main_cli("bundle", "verify", str(tampered))
    assert done.returncode == 1, done.stdout
    lines = done.stderr.strip().splitlines()
    assert any(said in line for line in lines), lines
    assert all(line.startswith("error: ") for line in lines), lines
    imported = main_cli("import", str(tampered), "--results", str(tmp_path / "r"))
    assert imported.returncode == 2 and len(imported.stderr.strip().splitlines()) == 1
    assert "Traceback" not in imported.stderr
    assert not (tmp_path / "r" / DB_NAME).exists()
    assert not [p for p in (tmp_path / "r").rglob("*") if not p.is_dir()]  # staging gone too


def test_one_byte_flipped_in_the_file_is_named(made: tuple[Path, Path], tmp_path: Path) -> None:
    _, bundle = made
    raw = bytearray(bundle.read_bytes())
    with zipfile.ZipFile(bundle) as z:
        info = z.getinfo("run/report.html")
    # the first byte of the member's compressed data, past its local header
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw[start + 10] ^= 0xFF
    (flipped := tmp_path / "f.zip").write_bytes(bytes(raw))
    done = main_cli("bundle", "verify", str(flipped))
    assert done.returncode == 1
    assert "changed: run/report.html" in done.stderr, done.stderr


def test_a_second_import_into_the_same_folder_is_refused(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    _, bundle = made
    assert main_cli("import", str(bundle), "--results", str(tmp_path / "r")).returncode == 0
    again = main_cli("import", str(bundle), "--results", str(tmp_path / "r"))
    assert again.returncode == 2 and "already exists" in again.stderr, again.stderr


def _key(folder: Path, name: str) -> Path:
    key = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)],
                   check=True)  # fmt: skip
    return key


def test_a_signed_bundle_verifies_with_its_key_and_not_with_another(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    results, _ = made
    mine, theirs = _key(tmp_path, "mine"), _key(tmp_path, "theirs")
    signed = tmp_path / "s.zip"
    done = main_cli("bundle", "latest", "--results", str(results), "-o", str(signed),
                    "--sign", str(mine))  # fmt: skip
    assert done.returncode == 0 and ", signed" in done.stdout, done.stderr
    good = main_cli("bundle", "verify", str(signed), "--public-key", f"{mine}.pub")
    assert good.returncode == 0 and "signature good" in good.stdout, good.stderr
    allowed = tmp_path / "allowed"
    allowed.write_text(f"auditor@lab {(tmp_path / 'mine.pub').read_text()}")
    listed = main_cli("bundle", "verify", str(signed), "--allowed-signers", str(allowed))
    assert listed.returncode == 0, listed.stderr
    bad = main_cli("bundle", "verify", str(signed), "--public-key", f"{theirs}.pub")
    assert bad.returncode == 1 and "signature: manifest.json.sig is not signed by" in bad.stderr
    # a manifest rewritten to match a changed member no longer matches its signature
    with zipfile.ZipFile(signed) as z:
        manifest = json.loads(z.read("manifest.json"))
    for m in manifest["members"]:
        if m["name"] == "run/plan.yaml":
            m["sha256"] = "0" * 64
    forged = _rewritten(signed, tmp_path / "forged.zip",
                        {"manifest.json": json.dumps(manifest).encode()})  # fmt: skip
    refused = main_cli("bundle", "verify", str(forged), "--public-key", f"{mine}.pub")
    assert refused.returncode == 1 and "signature:" in refused.stderr, refused.stderr
    unsigned = main_cli("bundle", "verify", str(made[1]), "--public-key", f"{mine}.pub")
    assert unsigned.returncode == 1 and "unsigned:" in unsigned.stderr


def test_links_and_the_bundle_itself_are_left_out_of_the_run_folder(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    results = tmp_path / "r"
    shutil.copytree(made[0], results, symlinks=True)
    (run,) = (results / "runs").iterdir()
    (run / "passwd").symlink_to("/etc/passwd")
    inside = run / "evidence.zip"  # -o in the run's own folder: never read into itself
    done = main_cli("bundle", "latest", "--results", str(results), "-o", str(inside))
    assert done.returncode == 0, done.stderr
    assert "left out of the bundle: passwd: not a regular file" in done.stderr
    with zipfile.ZipFile(inside) as z:
        names = z.namelist()
        manifest = json.loads(z.read("manifest.json"))
    assert not any("passwd" in n or n.endswith(".zip") or ".tmp" in n for n in names), names
    assert manifest["skipped"] == ["passwd: not a regular file (a link or a special file)"]
    assert main_cli("bundle", "verify", str(inside)).returncode == 0


def test_a_fifo_given_to_import_is_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "run.zip"
    os.mkfifo(fifo)
    done = main_cli("import", str(fifo), "--results", str(tmp_path / "r"))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr


def test_an_imported_run_is_marked_and_never_resumed(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    _, bundle = made
    other = tmp_path / "r"
    assert main_cli("import", str(bundle), "--results", str(other)).returncode == 0
    (run,) = (other / "runs").iterdir()
    mark = json.loads((run / "imported-bundle.json").read_text())
    assert mark["bundle"] == str(bundle) and len(mark["manifest_sha256"]) == 64
    resumed = main_cli("run", "--resume", run.name, "--results", str(other))
    assert resumed.returncode == 2, resumed.stdout
    assert "was imported from a bundle" in resumed.stderr and "Traceback" not in resumed.stderr
    # bundled again and imported a third time: the mark says the latest import
    again = tmp_path / "again.zip"
    assert main_cli("bundle", "latest", "--results", str(other), "-o", str(again)).returncode == 0
    assert main_cli("import", str(again), "--results", str(tmp_path / "third")).returncode == 0
    third = json.loads(
        (tmp_path / "third" / "runs" / run.name / "imported-bundle.json").read_text()
    )
    assert third["bundle"] == str(again)
