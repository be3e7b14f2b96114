"""`arraybench watch` against a hostile or stale `live.json` and a run whose process is gone.

live.json is input like any other: a field of the wrong type deep inside (a host's second, a
series row one number short, a note that is no text), a key missing, NaN or 1e999 where a
number belongs, JSON nested past the parser's depth, bytes that are no UTF-8, another
version's snapshot, and in its place a FIFO, a link to /dev/urandom or to a file outside the
run, a directory, a sparse file past the size limit: each ends `watch` at once with one line
naming live.json and exit 2. Whether the run still runs is its lock's word: a snapshot that
says "running" with the pid of a live process (the watcher's own) while no process holds the
run ends as killed (exit 1), with how to resume it; a snapshot that says "complete" while the
run's lock is held and the store says running does not end the watching; a run folder
deleted while a process holds its lock is watched until the lock is let go, and the watching
ends with the store's word (interrupted)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from arraybench.live.state import LIVE_LIMIT, LIVE_NAME, empty_snapshot
from arraybench.store.db import LOCK_NAME
from tests.conftest import main_cli
from tests.hostile.stores import mkfifo, refused, results_with_a_run

pytestmark = pytest.mark.timeout(90)  # a FIFO or /dev/urandom read whole would hang: fail


def _snapshot(run: str, **changed: Any) -> dict[str, Any]:
    snap: dict[str, Any] = dict(empty_snapshot())
    snap.update(run=run, plan="base", state="running", done=1, total=3)
    snap.update(changed)
    return snap


HOST = {"t": 5, "errors": 0,
        "read": {"iops": 10.0, "mbps": 1.0, "lat_mean_us": 5.0, "lat_p99_us": None},
        "write": {"iops": 0.0, "mbps": 0.0, "lat_mean_us": None, "lat_p99_us": None}}  # fmt: skip


def _wrong(run: str) -> dict[str, tuple[bytes, str]]:
    """live.json bodies arraybench never writes -> a word of the one line each must give."""

    def body(**changed: Any) -> bytes:
        return json.dumps(_snapshot(run, **changed)).encode()

    missing = _snapshot(run)
    del missing["updated"]
    bad_host = {"h0": {**HOST, "read": {**HOST["read"], "iops": "fast"}}}
    return {
        "host iops as text": (body(hosts=bad_host), "hosts.h0.read.iops"),
        "series row short": (body(series=[[1, 2.0, 3.0]]), "series[0]"),
        "series host map": (body(series=[[1, 2.0, 3.0, ["h0"]]]), "series[0]"),
        "note not text": (body(lines=["ok", None]), "lines[1]"),
        "done a bool": (body(done=True), "field done"),
        "pid a float": (body(pid=12.5), "field pid"),
        "event counts": (body(event_counts={"x": {"applied": "2"}}), "event_counts.x.applied"),
        "missing key": (json.dumps(missing).encode(), "field updated: field required"),
        "NaN": (body().replace(b'"done": 1', b'"done": NaN'), "NaN is no number"),
        "1e999": (body().replace(b'"total": 3', b'"total": 1e999'), "out of range"),
        "deep": (b"[" * 200_000 + b"]" * 200_000, "nested too deep"),
        "not UTF-8": (b'{"version": 1, "run": "\xff\xfe"}', "not JSON"),
        "an array": (b"[1, 2]", "not a JSON object but list"),
        "version 2": (body(version=2), "snapshot version '2'"),
        "version text": (body(version="1"), "snapshot version '1'"),
    }


def _results(tmp_path: Path) -> tuple[Path, str, Path]:
    results = tmp_path / "results"
    run = results_with_a_run(results)
    return results, run, results / "runs" / run


def test_live_json_of_the_wrong_shape_is_one_line(tmp_path: Path) -> None:
    results, run, folder = _results(tmp_path)
    for name, (raw, said) in _wrong(run).items():
        (folder / LIVE_NAME).write_bytes(raw)
        line = refused(["watch", run, "--results", str(results)], said)
        assert LIVE_NAME in line, name


def _place(tmp_path: Path) -> dict[str, tuple[Callable[[Path], object], str]]:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(_snapshot("other", state="complete")))

    def sparse(p: Path) -> None:
        with p.open("wb") as fh:  # past the limit without writing it
            fh.truncate(LIVE_LIMIT + 1)

    def zero_node(p: Path) -> None:  # /dev/zero's own device, made where live.json belongs
        try:
            os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(1, 5))
        except PermissionError:  # not root: a FIFO in its place, the same refusal's path
            mkfifo(p)

    return {
        "fifo": (mkfifo, "a FIFO (named pipe)"),
        "zero node": (zero_node, ", not a regular file"),
        "urandom": (lambda p: p.symlink_to("/dev/urandom"), "a symbolic link"),
        "outside": (lambda p: p.symlink_to(outside), "a symbolic link"),
        "directory": (lambda p: p.mkdir(), "a directory"),
        "sparse": (sparse, f"larger than the {LIVE_LIMIT >> 20} MiB limit"),
    }


def test_no_regular_live_json_is_refused_without_reading_it(tmp_path: Path) -> None:
    results, run, folder = _results(tmp_path)
    for name, (plant, said) in _place(tmp_path).items():
        path = folder / LIVE_NAME
        plant(path)
        started = time.monotonic()
        line = refused(["watch", run, "--results", str(results)], said)
        assert str(path) in line, name
        assert time.monotonic() - started < 10, name
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def _mark_running(results: Path, run: str, status: str = "running") -> None:
    db = sqlite3.connect(results / "arraybench.db")
    try:
        with db:
            db.execute("UPDATE runs SET status = ?, finished = NULL WHERE id = ?", (status, run))
    finally:
        db.close()


HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.pwrite(fd, f"{os.getpid()}\\n".encode(), 0)
print("locked", flush=True)
time.sleep(600)
"""


@contextmanager
def _lock_held(folder: Path) -> Iterator[subprocess.Popen[str]]:
    """A process holding the run's lock, as the process running it does; killed at the end
    (SIGKILL: the kernel lets the lock go, as for a killed run)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder / LOCK_NAME)],
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _watch(results: Path, run: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "arraybench", "watch", run, "--results",
                             str(results)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, COLUMNS="160"))  # fmt: skip


def test_a_live_pid_in_the_snapshot_of_a_killed_run_ends_as_killed(tmp_path: Path) -> None:
    """pid reuse: the snapshot's pid is alive (here: the watcher itself, then init), but no
    process holds the run's lock: the watching ends at once, saying the run was killed."""
    results, run, folder = _results(tmp_path)
    _mark_running(results, run)
    (folder / LOCK_NAME).write_text("4194303\n")  # left by the killed run, held by none
    for pid in (os.getpid(), 1):
        (folder / LIVE_NAME).write_text(json.dumps(_snapshot(run, pid=pid)))
        started = time.monotonic()
        done = main_cli("watch", run, "--results", str(results))
        assert done.returncode == 1, done.stdout + done.stderr
        last = done.stdout.strip().splitlines()[-1]
        assert last.startswith(f"run {run}: killed") and f"--resume {run}" in last, last
        assert time.monotonic() - started < 5 and "Traceback" not in done.stderr


def test_a_snapshot_saying_complete_does_not_end_a_held_run(tmp_path: Path) -> None:
    results, run, folder = _results(tmp_path)
    _mark_running(results, run)
    (folder / LIVE_NAME).write_text(json.dumps(_snapshot(run, state="complete", pid=1)))
    with _lock_held(folder):
        watch = _watch(results, run)
        with pytest.raises(subprocess.TimeoutExpired):
            watch.wait(timeout=3)  # the lock says running, the store agrees: not the file
    out, err = watch.communicate(timeout=15)  # the holder killed: the lock let go
    assert watch.returncode == 1, out + err
    assert out.strip().splitlines()[-1].startswith(f"run {run}: killed"), out


def test_a_deleted_run_folder_is_watched_until_the_run_lets_go(tmp_path: Path) -> None:
    results, run, folder = _results(tmp_path)
    _mark_running(results, run)
    with _lock_held(folder) as holder:
        (folder / LIVE_NAME).write_text(json.dumps(_snapshot(run, pid=holder.pid)))
        watch = _watch(results, run)
        time.sleep(1.5)
        shutil.rmtree(folder)  # live.json and the lock file's name gone: the run goes on
        time.sleep(2.5)
        assert watch.poll() is None, watch.communicate()
        _mark_running(results, run, "interrupted")  # the run stops as a Ctrl-C stops it
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        out, err = watch.communicate(timeout=15)
    assert watch.returncode == 1, out + err
    assert out.strip().splitlines()[-1] == f"run {run}: interrupted", out
    assert "Traceback" not in err and not folder.exists()
