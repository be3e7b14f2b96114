"""Every OS and SQLite failure at the edge is one line with a stated exit code, never a
traceback: results paths that are files, stores that are not stores, read-only and full
filesystems (real tmpfs mounts), report paths that cannot be written, names too long, and
numbers, nesting and markup a user can type."""

from __future__ import annotations

import gc
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.cli import main
from tests.conftest import DATA, needs_fio

SAMPLE = DATA / "09_fioplot_fio3.1_json_ns_keys_randread.json"
as_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None,
                             reason="mounting tmpfs needs root")  # fmt: skip


def one_line(capsys: pytest.CaptureFixture[str], argv: list[str], code: int) -> str:
    """Run the CLI in-process; it must exit with `code` and say exactly one line on stderr."""
    try:
        got = main(argv)
    except SystemExit as exc:  # argparse's own mistakes
        got = int(exc.code or 0)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert got == code, (argv, got, err)
    assert len(lines) == 1 and lines[0].startswith("error: "), (argv, err)
    assert "Traceback" not in out + err
    return lines[0]


def imported(results: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """A real store with one run in it (an imported fio output); the run's id."""
    assert main(["import", str(SAMPLE), "--results", str(results)]) == 0
    capsys.readouterr()
    gc.collect()  # its store closed: a connection left open would serve the WAL's pages
    return next(p.name for p in (results / "runs").iterdir())


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs of our own, unmounted afterwards."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def remount_ro(mnt: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)


@pytest.mark.parametrize("scale", ["inf", "nan", "0", "-1", "1e400", "x", "1e6"])
def test_scale_refused_at_argument_parsing(scale, capsys, tmp_path):
    line = one_line(capsys, ["plan", "check", "quick", "--scale", scale], 2)
    assert "--scale" in line and repr(scale) in line
    if float(scale if scale != "x" else "nan") < 1e3:  # never a real run at a huge scale
        # an unrunnable results path: were the factor taken, the run would stop right there
        argv = ["run", "quick", "--results", str(tmp_path / "f" / "r"), "--scale", scale]
        (tmp_path / "f").write_text("")
        assert "--scale" in one_line(capsys, argv, 2)


def test_results_path_that_is_a_file(tmp_path, capsys):
    results = tmp_path / "afile"
    results.write_text("x")
    for argv in (["runs"], ["run", "quick", "--scale", "0.01"], ["import", str(SAMPLE)]):
        line = one_line(capsys, [*argv, "--results", str(results)], 2)
        assert str(results) in line and "is a file" in line
    line = one_line(capsys, ["run", "quick", "--results", str(results / "sub")], 2)
    assert str(results / "sub") in line and "not a directory" in line


@pytest.mark.parametrize("damage", ["garbage", "truncated", "directory"])
def test_store_that_is_not_a_store(tmp_path, capsys, damage):
    results = tmp_path / "res"
    imported(results, capsys)
    db = results / "arraybench.db"
    for extra in results.glob("arraybench.db-*"):
        extra.unlink()
    if damage == "garbage":
        db.write_bytes(os.urandom(8192))
    elif damage == "truncated":
        db.write_bytes(db.read_bytes()[:100])
    else:
        db.unlink()
        db.mkdir()
    for argv in (["runs"], ["show", "x"], ["import", str(SAMPLE)]):
        line = one_line(capsys, [*argv, "--results", str(results)], 2)
        assert str(db) in line and "--results" in line


def test_name_too_long(tmp_path, capsys):
    long = tmp_path / ("n" * 300)
    line = one_line(capsys, ["import", str(SAMPLE), "--results", str(long)], 2)
    assert "too long" in line and "nnnn" in line


def test_report_output_that_cannot_be_written(tmp_path, capsys):
    results = tmp_path / "res"
    run_id = imported(results, capsys)
    folder = tmp_path / "out.html"
    folder.mkdir()
    afile = tmp_path / "afile"
    afile.write_text("x")
    line = one_line(capsys, ["report", run_id, "--results", str(results), "-o", str(folder)], 2)
    assert str(folder) in line and "is a directory" in line
    argv = ["report", run_id, "--results", str(results), "-o", str(afile / "r.html")]
    line = one_line(capsys, argv, 2)
    assert str(afile) in line and "not a directory" in line


@as_root
def test_read_only_results_filesystem(tmpfs, capsys):
    (tmpfs / "empty").mkdir()
    run_id = imported(tmpfs / "old", capsys)
    remount_ro(tmpfs)
    # a store on read-only media is still read...
    assert main(["runs", "--results", str(tmpfs / "old"), "--format", "json"]) == 0
    assert run_id in capsys.readouterr().out
    # ...and refused in one line where it would be written
    line = one_line(capsys, ["import", str(SAMPLE), "--results", str(tmpfs / "old")], 2)
    assert str(tmpfs / "old" / "arraybench.db") in line
    line = one_line(capsys, ["import", str(SAMPLE), "--results", str(tmpfs / "new")], 2)
    assert "read-only" in line and str(tmpfs / "new") in line
    line = one_line(capsys, ["import", str(SAMPLE), "--results", str(tmpfs / "empty")], 2)
    assert str(tmpfs / "empty" / "arraybench.db") in line and "writable" in line


@as_root
def test_report_to_a_read_only_filesystem(tmpfs, tmp_path, capsys):
    run_id = imported(tmp_path / "res", capsys)
    remount_ro(tmpfs)
    out = tmpfs / "r.html"
    argv = ["report", run_id, "--results", str(tmp_path / "res"), "-o", str(out)]
    line = one_line(capsys, argv, 2)
    assert str(out) in line and "read-only" in line


def fill(folder: Path) -> None:
    """Write zeros until the filesystem has no block left."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)


@as_root
def test_full_results_filesystem_is_a_machine_failure(tmpfs, capsys):
    imported(tmpfs / "old", capsys)  # a store made while there was room
    fill(tmpfs)
    for results in (tmpfs / "old", tmpfs / "new"):
        line = one_line(capsys, ["import", str(SAMPLE), "--results", str(results)], 1)
        assert str(results) in line and "full" in line


def test_nesting_and_infinite_numbers_in_a_plan(tmp_path, capsys):
    deep = tmp_path / "deep.yaml"
    deep.write_text("name: x\nlabels: " + "[" * 50000 + "]" * 50000 + "\n")
    one_line(capsys, ["plan", "check", str(deep)], 2)
    inf = tmp_path / "inf.yaml"
    inf.write_text(
        f"name: x\ntargets:\n  - {{path: {tmp_path / 't.dat'}, size: 1m}}\n"
        "timing: {ramp: 0s, duration: .inf}\n"
        "workloads:\n  - {name: a, pattern: random, bs: 4k, read: 50}\n"
    )
    one_line(capsys, ["plan", "check", str(inf)], 2)


def test_markup_in_arguments_is_shown_as_written(tmp_path, capsys):
    results = tmp_path / "res"
    imported(results, capsys)
    line = one_line(capsys, ["show", "[/]nope[bold]", "--results", str(results)], 2)
    assert "'[/]nope[bold]'" in line
    line = one_line(capsys, ["run", str(tmp_path / "[/]plan\nx.yaml"), "--results", str(results)],
                    2)  # fmt: skip
    assert "[/]plan\\nx.yaml" in line
    assert "[/]x" in one_line(capsys, ["plan", "check", "quick", "--only", "[/]x"], 2)
    assert "[bold]" in one_line(capsys, ["plan", "check", "quick", "--set", "[bold]=1"], 2)


@needs_fio
def test_markup_in_scenario_and_event_label_runs_and_stores(tmp_path, capsys):
    results = tmp_path / "res"
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "name: mk\nscenario: '[/] [bold]scen'\nlabels: {k: '[red]v[/]'}\n"
        f"targets:\n  - path: {tmp_path / 't.dat'}\n    size: 8m\n"
        "timing: {ramp: 0s, duration: 1s}\nload: {workers: [1], iodepth: [1]}\n"
        "workloads:\n  - name: w\n    pattern: random\n    bs: 4k\n    read: 100\n"
        "    events: [{at: 0s, label: '[/]ev[bold]', run: ['false']}]\n"
    )
    assert main(["run", str(plan), "--results", str(results)]) == 0
    out, err = capsys.readouterr()
    assert "[/]ev[bold]" in err and "Traceback" not in out + err
    assert main(["runs", "--results", str(results), "--format", "table"]) == 0
    out, _ = capsys.readouterr()
    assert "[/] [bold]scen" in out and "1/1" in out


def test_out_of_memory_is_one_line(tmp_path):
    """A YAML alias bomb read under a 300 MB address-space limit: a real MemoryError (or a
    refusal before it), one line, never a traceback."""
    lines = ["name: x", 'a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join([*lines, "labels: {k: *a9}"]) + "\n")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (300 << 20, 300 << 20))

    done = subprocess.run([sys.executable, "-m", "arraybench", "plan", "check", str(bomb)],
                          capture_output=True, text=True, timeout=120, preexec_fn=limit,
                          check=False)  # fmt: skip
    assert done.returncode in (1, 2), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_an_error_quoting_a_huge_value_stays_one_readable_line(tmp_path, capsys):
    results = tmp_path / "res"
    imported(results, capsys)
    line = one_line(capsys, ["show", "r" * 5000 + "\n", "--results", str(results)], 2)
    assert len(line) < 1100 and "characters ...]" in line and str(results) in line
