"""`verify` on 3 network-namespace hosts declared with `ssh:` (real sshd, key login): the
integrity writer runs on every host over SSH, the read-back names bad blocks per host, a failed
check exits 3, and nothing is left running on any host, also after SIGTERM of the controller.

The hosts share this machine's filesystem, so the venv's Python (with arraybench) is the
hosts' `ssh.python`, and a `run` event on `host: h1` (over SSH, inside h1's namespace) can
damage h1's target file.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from arraybench.cli import main
from tests.conftest import needs_fio, run_cli
from tests.netns import (
    TestHosts,
    namespace_processes,
    needs_netns,
    needs_sshd,
    running_hosts,
    ssh_hosts_yaml,
    wait_until,
)

pytestmark = [needs_fio, pytest.mark.slow, *needs_netns, needs_sshd]
FIO_PORT = 8800  # + host number: the fio servers the campaign starts over SSH (own pidfiles)

# Damages 3 acknowledged blocks of h1's target. It runs on h1 as the `run` event's revert:
# after the writers stopped and before the read-back, so exactly these blocks must be
# reported. It says which network namespace it ran in (h1's, not the controller's).
CORRUPT = """
import glob, json, os, sys
from pathlib import Path
from arraybench.integrity.journal import ACKED, scan_journal
journals, target, out = sys.argv[1:4]
[journal] = glob.glob(os.path.join(journals, "*", "h1", "*.journal"))  # the run's one point
found = set()
scan_journal(Path(journal), lambda offset, g, n, kind: kind == ACKED and found.add(offset))
acked = sorted(found)
bad = acked[:: max(1, len(acked) // 3)][:3]
with open(target, "r+b") as fh:
    for offset in bad:
        fh.seek(offset)
        fh.write(b"\\xab" * 4096)
    fh.flush()
    os.fsync(fh.fileno())
net = os.stat("/proc/self/ns/net").st_ino
Path(out).write_text(json.dumps({"bad": bad, "net": net}))
"""


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestHosts]:
    with running_hosts(3, tmp_path_factory.mktemp("verify-hosts"), port=8797, ssh=True) as test:
        yield test


def _plan(tmp_path: Path, hosts: TestHosts, events: str = "", duration: str = "1s") -> Path:
    declared = ssh_hosts_yaml(hosts, fio_port=FIO_PORT, journals=tmp_path / "journals",
                              target=lambda h: str(tmp_path / f"t-{h.name}.dat"))  # fmt: skip
    text = (
        "name: verify-hosts\n"
        f"hosts:\n{declared}"
        f"host_sets: [[{', '.join(h.name for h in hosts.hosts)}]]\n"
        f"timing: {{ramp: 0s, duration: {duration}}}\n"
        "start_lead: 1s\n"
        "load: {workers: [1], iodepth: [1]}\n"
        "workloads:\n"
        "  - {name: rr, pattern: random, bs: 4k, read: 100, ioengine: psync, rate_iops: 500,\n"
        "     verify: {region: 1m, block_size: 4k, iops: 300}"
        f"{events}}}\n"
    )
    path = tmp_path / "plan.yaml"
    path.write_text(text)
    return path


def _writers_left(hosts: TestHosts) -> list[int]:
    return namespace_processes(hosts.namespaces, b"arraybench.integrity.writer")


def _show(results: Path, *options: str) -> str:
    """`arraybench show latest` in this process (a CLI start-up costs ~2 s on this machine)."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["show", "latest", "--results", str(results), *options]) == 0
    return out.getvalue()


def _checks(results: Path) -> dict[str, dict]:
    rows = json.loads(_show(results, "--format", "json"))["integrity"]
    return {row["host"]: row for row in rows}


def test_corrupt_blocks_on_one_host_are_named_there_and_exit_3(tmp_path: Path, hosts: TestHosts):
    script = tmp_path / "corrupt.py"
    script.write_text(CORRUPT)
    bad_file = tmp_path / "bad.json"
    revert = [sys.executable, str(script), str(tmp_path / "journals"), str(tmp_path / "t-h1.dat"),
              str(bad_file)]  # fmt: skip
    events = (
        ",\n     events: [{at: 0s, label: damage h1, host: h1, run: {argv: ['true'], "
        f"revert: {json.dumps(revert)}}}}}]"
    )
    results = tmp_path / "res"
    done = run_cli("run", str(_plan(tmp_path, hosts, events)), "--results", str(results),
                   timeout=180)  # fmt: skip
    assert done.returncode == 3, done.stderr
    damage = json.loads(bad_file.read_text())
    bad = damage["bad"]
    assert len(bad) == 3
    assert damage["net"] == os.stat(f"/run/netns/{hosts.namespaces[1]}").st_ino  # ran on h1
    with sqlite3.connect(results / "arraybench.db") as db:
        [(data,)] = db.execute("SELECT data_json FROM findings WHERE kind = 'events'")
    records = json.loads(data)["records"]
    assert [(r["action"], r["outcome"]) for r in records] == [("run", "ok"), ("revert", "ok")]
    assert all(r["detail"].startswith("h1: host h1: `") for r in records), records
    said = done.stdout + done.stderr
    assert "host h1: integrity:" in said and ", 0 lost, 3 corrupt, 0 unreadable" in said
    for name in ("h0", "h2"):
        assert f"host {name}: integrity:" in said
    checks = _checks(results)
    assert sorted(checks) == ["h0", "h1", "h2"]
    assert [p["offset"] for p in checks["h1"]["problems"]] == bad
    assert {p["kind"] for p in checks["h1"]["problems"]} == {"corrupt"}
    for name in ("h0", "h2"):
        assert checks[name]["checked"] > 0 and not checks[name]["problems"]
        assert checks[name]["lost"] == checks[name]["corrupt"] == checks[name]["unreadable"] == 0
    shown = _show(results)
    assert "#1 rr/w1-qd1-h3: host h1: integrity: " in shown
    assert f"offset {bad[0]:,}: corrupt" in shown
    report = Path(said.split("HTML report:")[1].split()[0]).read_text()
    assert "integrity on host h1" in report and f"{bad[0]:,}" in report
    assert not _writers_left(hosts)


def _logins(hosts: TestHosts, said: str) -> list[int]:
    """How many SSH connections each host's sshd logged as `said` so far."""
    logs = [hosts.workdir / f"ssh-h{i}" / "sshd.log" for i in range(len(hosts.hosts))]
    return [log.read_text(errors="replace").count(said) for log in logs]


def test_clean_run_on_three_hosts_reports_each_and_exits_0(tmp_path: Path, hosts: TestHosts):
    results = tmp_path / "res"
    before = _logins(hosts, "Accepted publickey")
    done = run_cli("run", str(_plan(tmp_path, hosts)), "--results", str(results), timeout=180)
    assert done.returncode == 0, done.stderr
    # the run's two dozen ssh commands per host shared one connection (system/sshmux.py; two
    # commands started at once may each open one), all closed when the command ended
    opened = [n - b for n, b in zip(_logins(hosts, "Accepted publickey"), before, strict=True)]
    assert all(1 <= n <= 3 for n in opened), opened

    def closed() -> bool:
        return _logins(hosts, "Disconnected from user") == _logins(hosts, "Accepted publickey")

    assert wait_until(closed, 5), (_logins(hosts, "Disconnected from user"), opened)
    checks = _checks(results)
    assert sorted(checks) == ["h0", "h1", "h2"]
    for row in checks.values():
        assert row["checked"] > 0 and not row["problems"] and row["error"] is None
    shown = " ".join(_show(results).split())  # the console wraps lines at its width
    assert shown.count(", 0 lost, 0 corrupt, 0 unreadable") == 3
    # the journals stay on the hosts, one per host and point
    assert len(list((tmp_path / "journals").glob("*/h*/*.journal"))) == 3
    assert not _writers_left(hosts)


def test_sigterm_of_the_controller_leaves_no_writer_on_any_host(tmp_path: Path, hosts: TestHosts):
    command = [sys.executable, "-m", "arraybench", "run", str(_plan(tmp_path, hosts,
               duration="20s")), "--results", str(tmp_path / "res")]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: len(_writers_left(hosts)) == 3, 60), proc.poll()
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert wait_until(lambda: not _writers_left(hosts), 10)
