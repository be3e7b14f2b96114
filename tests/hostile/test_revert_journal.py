"""`arraybench revert` treats every journal field as hostile: hand-edited host-tuning journals
and injections rows (edited with sqlite3) are refused entry by entry, each in one line, and
revert still undoes the entries that are sound. Nothing is written outside /sys or a cgroup
mount, no ssh option and no command comes from a journal, no traceback whatever the JSON."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.events.entries import Refused, check_injection
from arraybench.events.tuning import JOURNAL_NAME, TuningJournal
from arraybench.run.injections import run_plan
from arraybench.store.db import DB_NAME, RunRecord, Store
from tests.conftest import main_cli
from tests.loopdev import attached, sparse_file

PLAN = """name: p
hosts:
  - {name: h0, address: 127.0.0.1, ssh: {user: root}, targets: [{path: /dev/null}]}
workloads:
  - name: w
    pattern: random
    bs: 4k
    read: 100
    events:
      - {at: 1s, run: {argv: [/bin/true], revert: [/bin/echo, healed]}}
"""


def _store(results: Path, run_id: str = "r1") -> Store:
    store = Store(results)
    store.create_run(RunRecord(
        id=run_id, plan_name="p", scenario="s", labels={}, plan_yaml=PLAN,
        folder=str(results / "runs" / run_id), scale=1.0, status="interrupted", started="x",
        finished=None, total_points=1, engine_version=None, arraybench_version="0", host="h",
        kernel="k", targets=[], latency_bound_us=1000.0, latency_stat="mean"))  # fmt: skip
    (results / "runs" / run_id).mkdir(parents=True, exist_ok=True)
    return store


def _row(results: Path, kind: object, undo: object, *, host: str = "", reach: object = None,
         label: object = "ev", raw: bool = False) -> None:  # fmt: skip
    """An injections row as a user with sqlite3 would write it (raw: the JSON text as given)."""
    reach = ({"name": host} if host else {}) if reach is None else reach
    with contextlib.closing(sqlite3.connect(results / DB_NAME)) as db, db:
        db.execute(
            "INSERT INTO injections (run_id, point_key, kind, label, host, reach_json, undo_json,"
            " state, created, owner_pid) VALUES ('r1', 'p1', ?, ?, ?, ?, ?, 'applying', 'x', 1)",
            (kind, label, host, reach if raw else json.dumps(reach),
             undo if raw else json.dumps(undo)),
        )  # fmt: skip


def _revert(results: Path) -> tuple[int, list[str], list[str]]:
    done = main_cli("revert", "--results", str(results))
    assert "Traceback" not in done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    return done.returncode, done.stdout.splitlines(), errors


@pytest.fixture
def stopped() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "60"])
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        yield proc
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        proc.kill()
        proc.wait()


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_hostile_injection_rows_are_refused_one_line_each_and_sound_ones_undone(
    tmp_path: Path, stopped: subprocess.Popen[bytes]
) -> None:
    results = tmp_path / "res"
    _store(results).close()
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    fake_cgroup = tmp_path / "notacgroup"
    fake_cgroup.mkdir()
    marker = tmp_path / "proxy-ran"
    hostile = [
        ("scsi_offline", {"state_file": f"/sys/block/../../../../{victim}"}),
        ("scsi_offline", {"state_file": str(victim)}),
        ("scsi_offline", {"state_file": 1}),  # a number taken as a file descriptor
        (
            "throttle",
            {
                "version": 1,
                "root": str(fake_cgroup),
                "folder": str(fake_cgroup / "arraybench-ev-1-1"),
                "device": "7:0",
            },
        ),
        (
            "throttle",
            {"version": 2, "root": "/sys/fs/cgroup", "folder": "/tmp/../etc", "device": "7:0"},
        ),
        ("run", {"revert": "touch owned", "timeout": 5}),  # a string, not an argv
        ("run", {"revert": ["touch", str(tmp_path / "owned")], "timeout": 5}),  # not the plan's
        ("signal", {"pids": [0]}),  # kill(0): the process group
        ("signal", {"pids": [-1]}),  # kill(-1): everything
        ("signal", {"pids": [True]}),
        ("signal", {"pids": str(stopped.pid)}),
        ("netem", {"interface": "../../x"}),
        ("netem", {"interface": "lo", "netns": "../../etc"}),
        ("netem", {"interface": "lo"}),  # a sound name, but no netem event of the plan
        ("reboot", {}),
        ("signal", {"pids": [stopped.pid], "extra": 1}),
        ("signal", {}),
    ]
    for kind, undo in hostile:
        _row(results, kind, undo)
    for reach, undo in [("not json{", '{"pids": []}'), ('{"name": ""}', "[1, 2]"),
                        ("{}", "null"), ("{}", "\x00\xff"),
        ("{}", "[" * 100000 + "]" * 100000)]:  # fmt: skip
        _row(results, "signal", undo, reach=reach, raw=True)
    proxy = {"name": "h9", "ssh": {"options": [f"ProxyCommand=touch {marker}"]}}
    _row(results, "signal", {"pids": [stopped.pid]}, host="h9", reach=proxy)
    _row(results, 5, {"pids": [stopped.pid]})  # an integer kind
    _row(results, "signal", {"pids": [stopped.pid]}, label="sound\x1b]0;owned\x07")  # sound

    code, out, errors = _revert(results)
    assert code == 1
    assert len(errors) == len(hostile) + 5 + 2, "\n".join(errors)
    assert all("refused:" in e for e in errors), errors
    assert any("no revert command of the run's plan" in e for e in errors)
    assert any("is not a host of the run's plan" in e for e in errors)
    assert any("interface lo has no netem event in the run's plan" in e for e in errors)
    assert victim.read_text() == "untouched" and not (tmp_path / "owned").exists()
    assert os.listdir(fake_cgroup) == [] and not marker.exists()
    # the sound row was undone regardless, its label shown escaped
    assert any("SIGCONT sent to 1 of 1" in line and "\\x1b]0;owned\\x07" in line for line in out)
    deadline = time.monotonic() + 5
    while _state(stopped.pid) == "T" and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _state(stopped.pid) != "T"
    # refused rows stay journaled: a second revert says the same, the undone one is gone
    code, out, again = _revert(results)
    assert code == 1 and len(again) == len(errors) and not any("SIGCONT" in x for x in out)
    # the note's way out, once the user has undone them by hand: the entries dropped
    with contextlib.closing(sqlite3.connect(results / DB_NAME)) as db, db:
        db.execute("UPDATE injections SET state = 'reverted' WHERE id > 0")
    code, out, again = _revert(results)
    assert code == 0 and not again and out == [f"nothing to revert in {results}"]


def test_ssh_settings_come_from_the_runs_plan_never_from_the_journal(tmp_path: Path) -> None:
    results = tmp_path / "res"
    store = _store(results)
    reach = {"name": "h0", "address": "10.9.9.9", "port": 1,
             "ssh": {"user": "evil", "options": ["ProxyCommand=sh -c 'touch /tmp/x'"]}}  # fmt: skip
    entry = check_injection("fio_server", "srv", "h0", reach,
                            {"pidfile": "/etc/passwd", "address": "x", "port": 2})  # fmt: skip
    spec = run_plan(store, "r1").hosts[entry.host]
    assert spec.ssh is not None and spec.ssh.options == () and spec.ssh.user == "root"
    assert spec.address == "127.0.0.1"
    with pytest.raises(Refused, match="reach names host"):
        check_injection("signal", "x", "h0", {"name": "h1"}, {"pids": [5]})


def _journal(results: Path, lines: list[str], run: str = "r1") -> Path:
    folder = results / "runs" / run
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / JOURNAL_NAME
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def _set(**fields: object) -> str:
    entry: dict[str, object] = {"op": "set", "device": "loop0", "attribute": "read_ahead_kb",
                                "sysfs": "/sys/block/loop0/queue/read_ahead_kb",
                                "original": "128", "value": "0", "reach": {}}  # fmt: skip
    entry.update(fields)
    return json.dumps({k: v for k, v in entry.items() if v is not None})


def test_hostile_tuning_journal_lines_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    results = tmp_path / "res"
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    marker = tmp_path / "proxy-ran"
    hostile = [
        _set(device="../../../tmp", sysfs=f"/sys/block/../../../{victim}"),
        _set(sysfs=str(victim)),  # the device is sound, the path is not its queue file
        _set(sysfs=1),  # a number taken as a file descriptor
        _set(attribute="uevent", sysfs="/sys/block/loop0/queue/uevent"),
        _set(original="x\ny"),
        _set(original=""),
        _set(extra="key"),
        _set(device=None),
        _set(reach=[]),
        _set(reach={"name": "h0", "ssh": {"options": [f"ProxyCommand=touch {marker}"]}}),
        json.dumps({"op": "restored", "key": 5}),
        json.dumps({"op": "delete"}),
        json.dumps([1, 2]),
        "null",
        "not json at all",
        '"a string"',
    ]
    path = _journal(results, hostile)
    with open(path, "a") as fh:
        fh.write('{"op": "set", "device')  # the last line, cut by a crash: no error
    code, out, errors = _revert(results)
    assert code == 1, (out, errors)
    assert len(errors) == len(hostile), "\n".join(errors)
    # the host's entry is sound but its run's plan (no store here) cannot say how to reach it
    assert [e for e in errors if "refused:" not in e] == [
        "error: h0:loop0 read_ahead_kb: the hosts of run r1 are not known (there is no "
        "results store to read the run's plan from)"
    ]
    assert victim.read_text() == "untouched" and not marker.exists()
    # a journal that names nothing to undo must not hold up a new tuned run silently
    assert TuningJournal(results / "runs" / "r1" / JOURNAL_NAME).read().refused


def test_a_tuning_journal_of_an_unknown_host_refuses_that_entry_only(tmp_path: Path) -> None:
    results = tmp_path / "res"
    _store(results).close()
    marker = tmp_path / "proxy-ran"
    reach = {"name": "h7", "ssh": {"options": [f"ProxyCommand=touch {marker}"]}}
    _journal(results, [_set(reach=reach)])
    code, _, errors = _revert(results)
    assert code == 1 and len(errors) == 1 and "h7 is not a host of the run's plan" in errors[0]
    assert not marker.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root")
def test_sound_tuning_entries_are_restored_beside_refused_ones(tmp_path: Path) -> None:
    results = tmp_path / "res"
    with attached(sparse_file(tmp_path / "backing.img", 16 << 20)) as dev:
        name = Path(dev).name
        queue = Path("/sys/block") / name / "queue" / "read_ahead_kb"
        queue.write_text("0")  # as a killed tuned run left it; its original was 256
        sound = _set(device=name, sysfs=str(queue), original="256")
        _journal(results, [_set(sysfs="/proc/sys/kernel/hostname"), sound])
        code, out, errors = _revert(results)
        assert code == 1 and len(errors) == 1 and "refused" in errors[0]
        assert queue.read_text().strip() == "256"
        assert out == [f"{name} read_ahead_kb restored to 256 (r1)"]


@pytest.mark.parametrize("kind", ["fifo", "zero", "directory"])
def test_a_journal_that_is_no_regular_file_is_refused_without_reading(
    tmp_path: Path, kind: str
) -> None:
    results = tmp_path / "res"
    folder = results / "runs" / "r1"
    folder.mkdir(parents=True)
    path = folder / JOURNAL_NAME
    if kind == "fifo":
        os.mkfifo(path)  # reading it would wait forever for a writer
    elif kind == "zero":
        path.symlink_to("/dev/zero")  # reading it would never end
    else:
        path.mkdir()
    code, _, errors = _revert(results)
    assert code == 1 and len(errors) == 1 and "not a regular file" in errors[0], errors
