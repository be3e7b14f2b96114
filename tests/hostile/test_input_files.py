"""Files that are no files, and numbers that are no numbers, where arraybench expects an input
file: FIFOs (opening one waits for a writer), sockets, devices (/dev/zero never ends), loops
of symbolic links, files above the stated size limit, for `attach`, `import`, plans and a
signal event's pid file; NaN, inf and out-of-range values in an array monitor's CSV and its
--offset. Each is refused at once with one line and exit 2 (a value at FILE:LINE:COLUMN), and
a refused attach or import leaves the store and the results folder as they were."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.events.errors import InjectorError
from arraybench.events.procs import read_pid_file
from arraybench.monitor.arrayside import MAX_CSV_BYTES
from tests.conftest import DATA, main_cli
from tests.hostile.stores import SAMPLE, mkfifo, refused, results_with_a_run, snapshot

MAP = "time=Time,iops=Total IOPS"
pytestmark = pytest.mark.timeout(60)  # a FIFO waited on would hang: fail, never block CI


@pytest.fixture
def specials(tmp_path: Path) -> Iterator[dict[str, tuple[Path, str]]]:
    """Special files (name -> (path, what the refusal says)), a listening socket among them."""
    folder = tmp_path / "specials"
    folder.mkdir()
    (folder / "loop-a").symlink_to("loop-b")
    (folder / "loop-b").symlink_to("loop-a")
    (folder / "zero").symlink_to("/dev/zero")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "sock"))
    try:
        yield {
            "fifo": (mkfifo(folder / "fifo"), "a FIFO (named pipe), not a regular file"),
            "socket": (folder / "sock", "a socket, not a regular file"),
            "/dev/zero": (Path("/dev/zero"), "a character device, not a regular file"),
            "link to /dev/zero": (folder / "zero", "a character device, not a regular file"),
            "link loop": (folder / "loop-a", "a loop of symbolic links"),
            "directory": (folder, "a directory, not a regular file"),
        }
    finally:
        sock.close()


def _csv(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.write_text("Time,Total IOPS,Comment\n" + "".join(f"{t},{v},ok\n" for t, v in rows))
    return path


NOW = 1_795_510_865  # a Unix second of the run's era


def test_attach_refuses_what_is_no_regular_file(tmp_path: Path, specials) -> None:
    results = tmp_path / "results"
    run = results_with_a_run(results)
    before = snapshot(results)
    for name, (path, said) in specials.items():
        started = time.monotonic()
        line = refused(["attach", run, str(path), "--map", MAP, "--results", str(results)], said)
        assert "give the array monitor CSV as a regular file" in line, name
        assert time.monotonic() - started < 5, name
    assert snapshot(results) == before


def test_attach_states_its_size_limit(tmp_path: Path) -> None:
    results = tmp_path / "results"
    run = results_with_a_run(results)
    before = snapshot(results)
    big = _csv(tmp_path / "big.csv", [(str(NOW), "100")])
    with big.open("r+b") as fh:  # sparse: 200 MiB without writing them
        fh.truncate(200 << 20)
    said = f"200 MiB, larger than the {MAX_CSV_BYTES >> 20} MiB limit for the array monitor CSV"
    refused(["attach", run, str(big), "--map", MAP, "--results", str(results)], said)
    assert snapshot(results) == before


@pytest.mark.parametrize(
    ("rows", "said"),
    [
        ([(str(NOW), "100"), (str(NOW + 1), "nan")],
         "3:2: 'Total IOPS' = 'nan' is no usable number: not a finite"),
        ([(str(NOW), "inf")], "2:2: 'Total IOPS' = 'inf' is no usable number: not a finite"),
        ([(str(NOW), "-Infinity")], "2:2: 'Total IOPS' = '-Infinity' is no usable number"),
        ([(str(NOW), "-5")], "2:2: 'Total IOPS' = '-5' is no usable number: out of range"),
        ([(str(NOW), "1e300")], "2:2: 'Total IOPS' = '1e300' is no usable number: out of range"),
        ([(str(NOW), "1" * 400)], "2:2: 'Total IOPS' = '111111111111"),
        ([("nan", "100")], "2:1: 'Time' = 'nan' is no usable time: not a finite number"),
        ([("inf", "100")], "2:1: 'Time' = 'inf' is no usable time"),
        ([("1e30", "100")], "2:1: 'Time' = '1e30' is no usable time: outside the years"),
        ([("-86400", "100")], "2:1: 'Time' = '-86400' is no usable time: outside the years"),
        ([("0001-01-01T00:00:00", "100")], "2:1: 'Time' = '0001-01-01T00:00:00' is no usable"),
    ],
)  # fmt: skip
def test_attach_refuses_a_value_that_is_no_finite_number_at_its_line_and_column(
    tmp_path: Path, rows: list[tuple[str, str]], said: str
) -> None:
    results = tmp_path / "results"
    run = results_with_a_run(results)
    before = snapshot(results)
    export = _csv(tmp_path / "array.csv", rows)
    line = refused(["attach", run, str(export), "--map", MAP, "--results", str(results)], said)
    assert f"{export}:" in line
    assert snapshot(results) == before


@pytest.mark.parametrize("offset", ["nan", "inf", "-inf", "1e12", "NaN"])
def test_attach_refuses_an_offset_that_is_no_finite_number_of_seconds(
    tmp_path: Path, offset: str
) -> None:
    results = tmp_path / "results"
    run = results_with_a_run(results)
    before = snapshot(results)
    export = _csv(tmp_path / "array.csv", [(str(NOW), "100")])
    argv = ["attach", run, str(export), "--map", MAP, f"--offset={offset}", "--results",
            str(results)]  # fmt: skip
    refused(argv, "give a finite number of seconds")
    assert snapshot(results) == before


def test_a_report_skips_stored_samples_that_are_not_finite(tmp_path: Path) -> None:
    """A series attached before NaN was refused (or a hand-edited store): the report is
    written, the damaged samples left out, never a crash."""
    results = tmp_path / "results"
    run = results_with_a_run(results)
    export = _csv(tmp_path / "array.csv", [(str(NOW), "100"), (str(NOW + 1), "120")])
    assert (
        main_cli("attach", run, str(export), "--map", MAP, "--results", str(results)).returncode
        == 0
    )
    damaged = {"file": str(export), "map": {"time": "Time", "iops": "Total IOPS"},
               "offset_s": "soon",
               "samples": [[float("nan"), {"iops": 1.0}], [NOW, {"iops": float("nan")}],
                           [1e300, {"iops": 5.0}], ["x", {}], [NOW + 1, {"iops": 7.0}],
                           3]}  # fmt: skip
    with sqlite3.connect(results / "arraybench.db") as db:
        db.execute("UPDATE findings SET data_json = ? WHERE kind = 'array_series'",
                   (json.dumps(damaged),))  # fmt: skip
    db.close()
    out = tmp_path / "r.html"
    done = main_cli("report", run, "--results", str(results), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr and out.stat().st_size > 0


def test_import_refuses_a_named_input_that_is_no_regular_file(tmp_path: Path, specials) -> None:
    results = tmp_path / "results"
    results_with_a_run(results)
    before = snapshot(results)
    for name, (path, said) in specials.items():
        if name == "directory":
            continue  # a folder is walked
        started = time.monotonic()
        line = refused(["import", str(path), "--results", str(results)], said)
        assert "give result files (regular files) or folders" in line
        assert time.monotonic() - started < 5, name
    assert snapshot(results) == before


def test_import_walks_past_special_files_in_a_folder(tmp_path: Path, specials) -> None:
    """A folder holding a real fio output beside a FIFO, a socket, links to a device and a
    loop: the output is imported, each special file skipped with what it is, none opened."""
    folder = specials["directory"][0]
    (folder / "result.json").write_bytes(
        (DATA / "20_fioplot_fio3.16_json_randread.json").read_bytes()
    )
    started = time.monotonic()
    done = main_cli("import", str(folder), "--results", str(tmp_path / "results"))
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 10
    assert "imported 1 point(s)" in done.stdout
    for name in ("fifo", "socket", "link to /dev/zero", "link loop"):
        path, said = specials[name]
        assert any(path.name in line and said in line for line in done.stdout.splitlines()
                   if line.startswith("skipped")), (name, done.stdout)  # fmt: skip


def test_import_skips_a_file_above_its_limit_without_reading_it(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    big = folder / "huge.json"
    with big.open("wb") as fh:
        fh.truncate(300 << 20)  # sparse
    (folder / "ok.json").write_bytes((DATA / "20_fioplot_fio3.16_json_randread.json").read_bytes())
    done = main_cli("import", str(folder), "--results", str(tmp_path / "results"))
    assert done.returncode == 0, done.stderr
    assert "huge.json: 300 MiB, larger than the 256 MiB import limit" in done.stdout


def test_a_long_line_costs_no_memory_beyond_its_cut(tmp_path: Path) -> None:
    """16 MiB of one line of text (no newline) before a real fio output's lines: read in
    pieces, nothing held but the cut; the file is skipped or imported, quickly."""
    text = (DATA / "18_fioblog_fio3.30_normal_nsec_multi_runs.txt").read_text()
    path = tmp_path / "long.txt"
    with path.open("w") as fh:
        fh.write("{" * (16 << 20) + "\n" + text)
    started = time.monotonic()
    done = main_cli("import", str(path), "--results", str(tmp_path / "results"))
    assert done.returncode in (0, 2) and "Traceback" not in done.stderr
    assert time.monotonic() - started < 30


def test_plan_check_refuses_a_fifo(tmp_path: Path) -> None:
    fifo = mkfifo(tmp_path / "plan.yaml")
    refused(["plan", "check", str(fifo)], "a FIFO (named pipe), not a regular file")


def test_a_pid_file_that_is_a_fifo_or_a_device_is_refused_at_once(tmp_path: Path) -> None:
    for path in (mkfifo(tmp_path / "pid"), Path("/dev/zero"), Path("/dev/urandom")):
        started = time.monotonic()
        with pytest.raises(InjectorError, match="cannot read a pid from"):
            read_pid_file(str(path))
        assert time.monotonic() - started < 2
    big = tmp_path / "big.pid"
    big.write_text(f"{os.getpid()}\n" + "x" * 10_000)
    with pytest.raises(InjectorError, match="larger than"):
        read_pid_file(str(big))


def test_a_log_above_its_limit_is_skipped_with_the_limit_not_read(tmp_path: Path) -> None:
    """A real result and its logs, one of them grown to 200 MiB (sparse): the point is
    imported (without the logs' samples: they are attached together or not at all), the
    big log named with the limit, never read into memory."""
    folder = tmp_path / "in"
    folder.mkdir()
    for source in DATA.glob("12_samyaple_fio3.33_*.log"):
        (folder / source.name).write_bytes(source.read_bytes())
    result = DATA / "11_samyaple_fio3.33_json_steadystate_randwrite_qd32.json"
    (folder / "12_samyaple_fio3.33.json").write_bytes(result.read_bytes())
    with (folder / "12_samyaple_fio3.33_lat.1.log").open("r+b") as fh:
        fh.truncate(200 << 20)
    started = time.monotonic()
    done = main_cli("import", str(folder), "--results", str(tmp_path / "results"))
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 20
    assert "larger than the 128 MiB limit for a fio log" in done.stdout, done.stdout


def test_names_that_are_no_utf8_are_imported_shown_with_their_bytes(tmp_path: Path) -> None:
    """A folder and a file whose names hold bytes that are no UTF-8 (as any Linux name may),
    one of them a label by --pattern: imported, stored, shown and reported, each such byte as
    `\\xNN` (errors.utf8_safe: the byte stays recognisable); never an encoding error half-way
    through the store, never U+FFFD."""
    folder = os.fsdecode(bytes(tmp_path) + b"/arch\xff")
    os.mkdir(folder)
    name = os.fsdecode(b"run-\xfe-array.json")
    (Path(folder) / name).write_bytes(SAMPLE.read_bytes())
    results = tmp_path / "results"
    done = main_cli("import", folder, "--pattern", r"run-(?P<label_array>[^-]+)-",
                    "--results", str(results))  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = main_cli("show", "latest", "--results", str(results), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    assert "arch\\\\xff" in shown.stdout and "\\ufffd" not in shown.stdout  # JSON-escaped
    with sqlite3.connect(results / "arraybench.db") as db:
        [(labels,)] = db.execute("SELECT labels_json FROM points").fetchall()
    assert json.loads(labels)["array"] == "\\xfe"  # (and `latency: clat`: a json+ import)
    report = tmp_path / "r.html"
    done = main_cli("report", "latest", "--results", str(results), "-o", str(report))
    assert done.returncode == 0, done.stderr
    html = report.read_text(encoding="utf-8")
    assert "arch\\xff" in html and "\ufffd" not in html


def test_a_path_with_a_byte_that_is_no_utf8_in_an_error_line(tmp_path: Path) -> None:
    plan = os.fsdecode(bytes(tmp_path) + b"/plan\xff.yaml")
    done = main_cli("run", plan, "--results", str(tmp_path / "res"))
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert f"{tmp_path}/plan\\xff.yaml: no such plan file" in line, line
