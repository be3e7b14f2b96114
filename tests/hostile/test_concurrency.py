"""Processes sharing one results folder: a new store opened by many at once, runs started in
the same second, one run held by one process."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from arraybench.errors import RunLockedError
from arraybench.store.db import LOCK_NAME, LOCK_WAIT_S, Store
from arraybench.store.migrations import MIGRATIONS
from arraybench.store.run_ids import new_run_id
from tests.conftest import needs_fio
from tests.hostile.procs import runs, start_cli

OPEN_WHEN_TOLD = """
import os, sys, time
from pathlib import Path
from arraybench.store.db import Store
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.001)
Store(Path(sys.argv[1])).close()
"""


def test_many_processes_open_a_new_store_at_once(tmp_path):
    for round_no in range(3):
        results = tmp_path / f"r{round_no}"
        go = tmp_path / f"go{round_no}"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN_WHEN_TOLD, str(results), str(go)],
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(6)
        ]
        time.sleep(0.6)  # all started and spinning on `go`
        go.touch()
        for proc in procs:
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err  # not "duplicate column name"
        store = Store(results, create=False)
        assert store.schema_version == len(MIGRATIONS)
        store.close()


def test_run_ids_started_in_the_same_second_never_collide(tmp_path):
    ids: list[str] = []
    barrier = threading.Barrier(8)

    def claim() -> None:
        barrier.wait()
        ids.append(new_run_id("same", tmp_path))

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(ids)) == 8
    assert all((tmp_path / "runs" / i).is_dir() for i in ids)


def test_a_run_is_held_by_one_process_until_it_ends(tmp_path):
    first = Store(tmp_path)
    first.lock_run("r1")
    first.lock_run("r1")  # again from the same process: fine
    script = (
        "import sys; from pathlib import Path; from arraybench.store.db import Store\n"
        "from arraybench.errors import RunLockedError\n"
        "try:\n    Store(Path(sys.argv[1])).lock_run('r1')\nexcept RunLockedError as e:\n"
        "    print(e.one_line()); sys.exit(2)\n"
    )
    held = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert held.returncode == 2 and "being run by another" in held.stdout, held
    first.close()  # released: the next process gets it
    free = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert free.returncode == 0, free
    assert issubclass(RunLockedError, Exception)


def test_a_lock_left_to_a_dying_child_for_a_moment_is_waited_for(tmp_path):
    """A run SIGKILLed as it forked a process leaves its lock to the child until the child's
    exec closes it: a resume right then waits (LOCK_WAIT_S), it is not refused."""
    first = Store(tmp_path)
    first.lock_run("r1")
    lock = tmp_path / "runs" / "r1" / LOCK_NAME
    script = (
        "import fcntl, os, sys, time\nfd = os.open(sys.argv[1], os.O_RDWR)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(0.3)\n"
    )
    first.close()
    dead = subprocess.Popen(["true"])
    dead.wait()
    lock.write_text(f"{dead.pid}\n")  # the run that took it is gone (a pid of nobody)
    child = subprocess.Popen([sys.executable, "-c", script, str(lock)], stdout=subprocess.PIPE,
                             text=True)  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        began = time.monotonic()
        Store(tmp_path).lock_run("r1")  # held 0.3 s more by the child: waited for, taken
        assert time.monotonic() - began < LOCK_WAIT_S
    finally:
        child.kill()
        child.wait()


@needs_fio
def test_two_runs_started_together_in_one_folder(tmp_path):
    results = tmp_path / "res"
    procs = []
    for n in (1, 2):
        target = tmp_path / f"t{n}.dat"
        target.write_bytes(b"\1" * (8 << 20))  # ready: no layout, both reach the store at once
        plan = tmp_path / f"plan{n}.yaml"
        plan.write_text(
            f"name: same\nscenario: s{n}\ntargets:\n  - path: {target}\n    size: 8m\n"
            "timing: {ramp: 0s, duration: 1s}\nload: {workers: [1], iodepth: [1]}\n"
            "workloads:\n  - {name: w, pattern: random, bs: 4k, read: 100}\n"
        )
        procs.append(start_cli("run", str(plan), "--results", str(results)))
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    listed = runs(results)
    assert len({r["id"] for r in listed}) == 2
    assert all(r["status"] == "complete" and r["points_done"] == 1 for r in listed)


def test_run_ids_are_folder_names_whatever_the_plan_name(tmp_path):
    for name in ("a/b", "[bold]x[/]", "../up", "line\nbreak", "n" * 300, "é"):
        run_id = new_run_id(name, tmp_path)
        folder = tmp_path / "runs" / run_id
        assert folder.is_dir() and folder.parent == tmp_path / "runs", name
        assert "/" not in run_id and "\n" not in run_id and len(run_id.encode()) <= 255
