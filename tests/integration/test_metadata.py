"""Metadata test (create / stat / delete) on fio's own engines, with real fio in tmp_path."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from arraybench.analysis.metadata import (
    MetadataRow,
    format_ops,
    metadata_results,
    metadata_table,
)
from arraybench.engines.fio.metadata import (
    ALL_OPS,
    DIR_OPS,
    FILE_OPS,
    MetadataSpec,
    leftovers,
    render_metadata_jobfile,
    supported_ops,
)
from arraybench.engines.fio.parse import last_document, parse_fio_json_file
from arraybench.engines.fio.runner import fio_version
from arraybench.errors import FioMissingError, FioRunError
from tests.conftest import fio_jobs, needs_fio

LADDER = (1, 2, 4)
FILES = 200


def _sections(text: str) -> dict[str, list[str]]:
    """Job file text -> {section name: its option lines} (comments and blanks dropped)."""
    sections: dict[str, list[str]] = {}
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(";"):
            continue
        match = re.fullmatch(r"\[(.+)\]", line)
        if match:
            current = match.group(1)
            sections[current] = []
        else:
            sections[current].append(line)
    return sections


def _run_fio(folder: Path, text: str) -> tuple[subprocess.CompletedProcess[str], float]:
    (folder / "job.fio").write_text(text)
    began = time.monotonic()
    done = subprocess.run(
        ["fio", "job.fio", "--output-format=json+", "--output=fio.json"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done, time.monotonic() - began


# --------------------------------------------------------------------------- render (no fio)


def test_render_one_stonewalled_section_per_op_in_run_order(tmp_path: Path) -> None:
    ops = ("delete", "create", "stat")  # any order given; they run create -> stat -> delete
    spec = MetadataSpec(str(tmp_path), threads=4, files_per_thread=300, ops=ops)
    sections = _sections(render_metadata_jobfile(spec))
    assert list(sections) == ["global", "create", "stat", "delete"]
    glob = sections["global"]
    assert f"directory={tmp_path}" in glob
    assert "filesize=4k" in glob and "bs=4k" in glob and "openfiles=1" in glob
    assert "unlink=0" in glob
    assert "file_service_type=sequential" in glob  # roundrobin: O(nrfiles) per file
    for op in FILE_OPS:
        opts = sections[op]
        assert ("stonewall" in opts) == (op != "create")  # between ops, not before the first
        assert "numjobs=4" in opts and "nrfiles=300" in opts
        # the same names in every phase: stat and delete meet the files create made
        assert "filename_format=mdfile.$jobnum.$filenum" in opts
    assert "ioengine=filecreate" in sections["create"]
    assert "ioengine=filestat" in sections["stat"]
    assert "ioengine=filedelete" in sections["delete"]
    for op in ("stat", "delete"):  # no layout of fio's own files before the phase
        assert "create_on_open=1" in sections[op] and "allow_file_create=0" in sections[op]
    assert "create_on_open=1" not in sections["create"]


def test_render_directory_ops_first_with_their_own_names(tmp_path: Path) -> None:
    spec = MetadataSpec(str(tmp_path), threads=2, ops=ALL_OPS)
    sections = _sections(render_metadata_jobfile(spec))
    assert list(sections)[1:] == list(ALL_OPS)
    for op in ("dir-stat", "dir-delete"):  # on the directories their setup makes
        assert "filename_format=mddir.$jobnum.$filenum" in sections[op]
    # dir-create times mkdir at open of names of its own (fio removes them when it ends)
    assert "filename_format=mddir.new.$jobnum.$filenum" in sections["dir-create"]
    assert {"create_on_open=1", "unlink=1"} <= set(sections["dir-create"])
    assert all("nrfiles=1000" in sections[op] for op in DIR_OPS)
    assert "stonewall" not in sections["dir-create"] and "stonewall" in sections["create"]
    assert "ioengine=dircreate" in sections["dir-create"]


def test_render_escapes_colons_in_the_directory() -> None:
    text = render_metadata_jobfile(MetadataSpec("/mnt/a:b", threads=1))
    assert "directory=/mnt/a\\:b" in text


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"threads": 0}, "threads"),
        ({"threads": 1, "files_per_thread": 0}, "files_per_thread"),
        ({"threads": 1, "ops": ("create", "rename")}, "unknown"),
        ({"threads": 1, "ops": ("stat", "delete")}, "need"),
        ({"threads": 1, "ops": ("dir-stat",)}, "need"),
        ({"threads": 1, "ops": ()}, "at least one"),
    ],
)
def test_spec_refuses_what_cannot_run(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MetadataSpec("/tmp/x", **kwargs)


def test_table_rows_per_op_columns_per_thread_count() -> None:
    rows = [
        MetadataRow("stat", 2, 250_000.0, 2.0, 5.0, 400),
        MetadataRow("create", 1, 5_000.0, 150.0, 900.0, 200),
        MetadataRow("create", 2, 9_000.0, 180.0, 12_000.0, 400),
    ]
    assert metadata_table(rows) == [
        ["Operation", "1 thread", "2 threads"],
        ["File creation", "5 k ops/s", "9 k ops/s"],
        ["File stat", "–", "250 k ops/s"],
    ]
    assert metadata_table(rows, "lat_p99_us")[1] == ["File creation", "900 µs", "12 ms"]
    assert format_ops(None) == "–" and format_ops(1_250_000) == "1.25 M ops/s"
    with pytest.raises(ValueError):
        metadata_table(rows, "iops")


# --------------------------------------------------------------------------- real fio


@needs_fio
def test_supported_ops_on_this_fio() -> None:
    ops, notes = supported_ops("fio")
    assert set(FILE_OPS) <= ops  # filecreate/filestat/filedelete exist since fio 3.x
    version = re.search(r"fio-(\d+)\.(\d+)", fio_version("fio"))
    assert version
    has_dir_engines = (int(version.group(1)), int(version.group(2))) >= (3, 37)
    assert (set(DIR_OPS) <= ops) == has_dir_engines
    if not has_dir_engines:  # fio 3.33 here: a note per directory operation, saying why
        assert len(notes) == 3
        assert all("dircreate" in n or "dirstat" in n or "dirdelete" in n for n in notes)
        assert all("3.37" in n and "left out" in n for n in notes)
    with pytest.raises(FioMissingError, match="cannot run"):
        supported_ops("/nonexistent/fio")


@needs_fio
def test_create_stat_delete_ladder(tmp_path: Path) -> None:
    available, _ = supported_ops("fio")
    rows: list[MetadataRow] = []
    for threads in LADDER:
        target = tmp_path / f"md-{threads}"
        target.mkdir()
        spec = MetadataSpec(str(target), threads=threads, files_per_thread=FILES)
        assert set(spec.ordered_ops) <= available
        assert leftovers(spec) == []
        folder = tmp_path / f"run-{threads}"
        folder.mkdir()
        done, wall_s = _run_fio(folder, render_metadata_jobfile(spec))
        assert done.returncode == 0, done.stderr
        assert "Laying out" not in done.stdout + done.stderr  # fio made no files of its own

        # delete removed every file create made, and nothing else was left behind
        assert list(target.iterdir()) == [] and leftovers(spec) == []

        document = last_document(parse_fio_json_file(folder / "fio.json"))
        got = metadata_results(document, spec)
        assert [r.op for r in got] == ["create", "stat", "delete"]
        raw = fio_jobs(folder / "fio.json")

        # stonewall: one group per phase, in order; stat and delete found every file
        # (allow_file_create=0: a missing file is an error), so create had finished
        groups = [{j["groupid"] for j in raw if j["jobname"] == op} for op in FILE_OPS]
        assert [len(g) for g in groups] == [1, 1, 1]
        assert min(groups[0]) < min(groups[1]) < min(groups[2])
        assert all(j["error"] == 0 for j in raw)

        for row in got:
            jobs = [j for j in raw if j["jobname"] == row.op]
            assert len(jobs) == threads
            # operations straight from fio's total_ios: one per file, every thread
            assert sum(j["read"]["total_ios"] for j in jobs) == threads * FILES == row.files
            assert all(j["write"]["total_ios"] == 0 for j in jobs)  # reported as reads
            assert sum(j["read"]["clat_ns"]["N"] for j in jobs) == row.files  # one timing each
            # real rate: operations / the phase's wall time (its longest job)
            elapsed = max(j["read"]["runtime"] for j in jobs)
            assert row.elapsed_ms == elapsed > 0
            assert row.ops_per_s == pytest.approx(row.files * 1000 / elapsed)
            assert row.ops_per_s is not None and row.ops_per_s > 0
            # cross-check with fio's iops: their sum is the same when the jobs ran equally
            # long, more when some finished early; never less
            fio_iops = sum(j["read"]["iops"] for j in jobs)
            assert row.fio_iops == pytest.approx(fio_iops)
            assert row.ops_per_s <= fio_iops * (1 + 1e-6)
            shortest = min(j["read"]["runtime"] for j in jobs)
            assert row.ops_per_s >= fio_iops * shortest / elapsed * (1 - 1e-6)
            assert row.lat_mean_us is not None and row.lat_mean_us > 0
            assert row.lat_p99_us is not None and row.lat_p99_us > 0
        # the phases fit in the wall time the fio process took
        assert sum(r.elapsed_ms for r in got) / 1000 <= wall_s
        rows += got

    assert {(r.op, r.threads) for r in rows} == {(op, n) for op in FILE_OPS for n in LADDER}
    table = metadata_table(rows)
    assert table[0] == ["Operation", "1 thread", "2 threads", "4 threads"]
    assert [line[0] for line in table[1:]] == ["File creation", "File stat", "File removal"]
    assert all(cell.endswith("ops/s") for line in table[1:] for cell in line[1:])


@needs_fio
def test_stat_without_create_fails_instead_of_timing_fio_made_files(tmp_path: Path) -> None:
    """The trap: a stat job lays out (creates and fills) missing files unless told not to."""
    spec = MetadataSpec(str(tmp_path / "empty"), threads=2, files_per_thread=20)
    Path(spec.directory).mkdir()
    text = render_metadata_jobfile(spec)
    # the same job file without its create phase (and its stonewall, now first)
    start, end = text.index("[create]"), text.index("[stat]")
    done, _ = _run_fio(tmp_path, text[:start] + text[end:].replace("stonewall\n", "", 1))
    assert done.returncode != 0
    assert list(Path(spec.directory).iterdir()) == []  # fio created nothing
    document = last_document(parse_fio_json_file(tmp_path / "fio.json"))
    with pytest.raises(FioRunError, match="stat phase failed"):
        metadata_results(document, spec)
