"""The integrity writer and read-back on a host over a real sshd (a network namespace that
shares this machine's filesystem, so the venv's Python with arraybench runs "on the host"):
blocks named by offset, and no writer left on the host whatever ends the session."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.hosts.server import HostError, HostSpec
from arraybench.integrity.journal import ACKED
from arraybench.integrity.remote import (
    RemoteWriter,
    check_over_ssh,
    probe_over_ssh,
    writer_command,
)
from arraybench.integrity.writer import WriterConfig
from tests.journal import read_records
from tests.netns import (
    SSHD,
    TestHosts,
    namespace_pids,
    namespace_processes,
    started_or_skip,
    wait_until,
)

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(not Path(SSHD).exists(), reason="openssh-server is not installed"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="iproute2 (ip) missing"),
]
PYTHON = sys.executable  # the venv's: arraybench is importable "on the host"
# 4,096 blocks: a resumed writer late to be stopped (400 writes a second) must leave most of
# the blocks acknowledged before the crash unwritten (1 MiB was all rewritten once, CI at load)
REGION = 16 << 20


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestHosts, HostSpec]]:
    folder = tmp_path_factory.mktemp("verify-host")
    hosts = started_or_skip(1, folder / "hosts", port=8785)
    try:
        ssh = hosts.start_sshd(0, folder / "ssh")
        yield hosts, HostSpec("h0", hosts.hosts[0].address, port=8786, ssh=ssh)
    finally:
        hosts.close()


def _writers(hosts: TestHosts) -> list[int]:
    """Integrity writers running on the host (its namespace's processes)."""
    return namespace_processes(hosts.namespaces[:1], b"arraybench.integrity.writer")


def _cfg(target: Path) -> WriterConfig:
    return WriterConfig(path=str(target), length=REGION, offset=REGION, iops=400)


def test_writer_and_read_back_over_ssh_name_blocks_by_offset(host, tmp_path: Path) -> None:
    hosts, spec = host
    target = tmp_path / "target.dat"
    journal = str(tmp_path / "journals" / "run1" / "h0" / "p.journal")  # folders made there
    found = probe_over_ssh(spec, PYTHON, str(target))
    assert (found.kind, found.size) == ("missing", None)
    writer = RemoteWriter(spec, PYTHON, _cfg(target), journal, limit_s=60)
    writer.start()
    assert target.stat().st_size == 2 * REGION  # made whole before the load could lay it out
    assert wait_until(lambda: len(read_records(Path(journal))[1]) >= 20, 10)
    stats = writer.stop()
    assert stats.writes >= 20 and stats.stopped_by == "stdin closed"
    assert wait_until(lambda: not _writers(hosts), 5)
    found = check_over_ssh(spec, PYTHON, str(target), journal, direct=True, timeout_s=60)
    report = found.report
    assert found.clean and report.checked == stats.distinct_offsets
    # damage three acknowledged blocks: the read-back names exactly them
    acked = sorted({r.offset for r in read_records(Path(journal))[1] if r.kind == ACKED})
    bad = acked[:3]
    with open(target, "r+b") as fh:
        for offset in bad:
            fh.seek(offset)
            fh.write(b"\xab" * 4096)
    found = check_over_ssh(spec, PYTHON, str(target), journal, direct=True, timeout_s=60)
    report = found.report
    assert not found.clean and found.data["corrupt"] == 3 and "3 corrupt" in found.summary
    assert [p.offset for p in report.problems] == bad
    assert {p.kind for p in report.problems} == {"corrupt"} and report.checked == len(acked)


def test_remote_words_are_quoted(host, tmp_path: Path) -> None:
    _, spec = host
    odd = "x'; touch PWNED; echo '"
    command = writer_command(spec, "python3", _cfg(tmp_path / odd), f"j {odd}", 10)
    assert command[-2] == f"root@{spec.address}" and command[-3] == "--"
    words = shlex.split(command[-1])  # as the host's shell reads the one remote string
    assert words[:3] == ["python3", "-m", "arraybench.integrity.writer"]
    assert words[words.index("--path") + 1] == str(tmp_path / odd)
    assert words[words.index("--journal") + 1] == f"j {odd}"
    # and for real: the odd name reaches the host as one path, no shell runs it
    found = probe_over_ssh(spec, PYTHON, str(tmp_path / odd))
    assert found.kind == "missing" and not Path("PWNED").exists()


def test_a_host_without_arraybench_is_one_line(host, tmp_path: Path) -> None:
    _, spec = host
    with pytest.raises(HostError, match=r"host h0: verify cannot run `/nonexistent/python3"):
        probe_over_ssh(spec, "/nonexistent/python3", str(tmp_path / "t"))
    writer = RemoteWriter(spec, "/nonexistent/python3", _cfg(tmp_path / "t"), "j", 10)
    with pytest.raises(HostError, match="did not start over ssh"):
        writer.start()


def test_the_campaign_refuses_hosts_without_arraybench_before_any_point(host) -> None:
    from arraybench.plan.model import Host
    from arraybench.run.host_verify import check_hosts_can_verify

    _, spec = host
    good = Host(name="h0", address=spec.address, ssh={"python": PYTHON})  # type: ignore[arg-type]
    check_hosts_can_verify([good], {"h0": spec})
    bad = Host(name="h0", address=spec.address, ssh={"python": "/no/python"})  # type: ignore[arg-type]
    with pytest.raises(HostError) as caught:
        check_hosts_can_verify([bad], {"h0": spec})
    line = caught.value.one_line()
    assert line.startswith("host h0: verify cannot run `/no/python -m arraybench")
    assert "hosts[].ssh.python" in line and "\n" not in line


def test_writer_stops_when_its_ssh_session_dies(host, tmp_path: Path) -> None:
    hosts, spec = host
    writer = RemoteWriter(spec, PYTHON, _cfg(tmp_path / "t.dat"), str(tmp_path / "j"), 60)
    writer.start()
    assert _writers(hosts)
    assert writer.pid is not None
    os.kill(writer.pid, signal.SIGKILL)  # the connection is gone: the host sees stdin end
    assert wait_until(lambda: not _writers(hosts), 10)
    with pytest.raises(HostError):
        writer.stop()
    # the host's sshd itself dying (listener and sessions) ends the writer too
    writer = RemoteWriter(spec, PYTHON, _cfg(tmp_path / "t2.dat"), str(tmp_path / "j2"), 60)
    writer.start()
    sshds = [p for p in namespace_pids(hosts.namespaces[0])
             if b"sshd" in Path(f"/proc/{p}/cmdline").read_bytes()]  # fmt: skip
    for pid in sshds:
        os.kill(pid, signal.SIGKILL)
    try:
        assert wait_until(lambda: not _writers(hosts), 10)
        with pytest.raises(HostError):
            writer.stop()
    finally:
        hosts.stop_sshd(0)
        hosts.start_sshd(0, Path(spec.ssh.identity_file).parent)  # type: ignore[union-attr]


CONTROLLER = """
import sys, time
from pathlib import Path
from arraybench.hosts.server import HostSpec, SshSpec
from arraybench.integrity.remote import RemoteWriter
from arraybench.integrity.writer import WriterConfig
spec = HostSpec("h0", sys.argv[1], ssh=SshSpec(user="root", identity_file=Path(sys.argv[2]),
                options=tuple(sys.argv[3:5])))
cfg = WriterConfig(path=sys.argv[5], length=1 << 20, offset=1 << 20, iops=400)
RemoteWriter(spec, sys.executable, cfg, sys.argv[6], 60).start()
print("ready", flush=True)
time.sleep(60)
"""


def test_writer_stops_when_the_controller_is_killed(host, tmp_path: Path) -> None:
    hosts, spec = host
    assert spec.ssh is not None
    argv = [PYTHON, "-c", textwrap.dedent(CONTROLLER), spec.address, str(spec.ssh.identity_file),
            *spec.ssh.options, str(tmp_path / "t.dat"), str(tmp_path / "j")]  # fmt: skip
    controller = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert controller.stdout is not None and controller.stdout.readline() == "ready\n"
        assert _writers(hosts)
        controller.kill()  # SIGKILL: no cleanup at all; its ssh child loses its stdin
    finally:
        controller.kill()
        controller.wait()
    assert wait_until(lambda: not _writers(hosts), 10)
    assert read_records(tmp_path / "j")[1]  # what it acknowledged is journaled on the host


def test_a_crashed_point_run_again_continues_the_hosts_journal(host, tmp_path: Path) -> None:
    """The controller (or the host) dies mid-point; `--resume` runs the point again with the
    same journal path: the read-back covers the writes acknowledged before the crash."""
    hosts, spec = host
    target, journal = tmp_path / "t.dat", tmp_path / "j"
    first = RemoteWriter(spec, PYTHON, _cfg(target), str(journal), 60)
    first.start()
    assert wait_until(lambda: len(read_records(journal)[1]) >= 20, 10)
    assert first.pid is not None
    os.kill(first.pid, signal.SIGKILL)  # the controller crashes: its ssh client dies with it
    assert wait_until(lambda: not _writers(hosts), 10)
    before = {r.offset: r.generation for r in read_records(journal)[1] if r.kind == ACKED}
    again = RemoteWriter(spec, PYTHON, _cfg(target), str(journal), 60)
    again.start()
    # a third writer on the same journal (an attempt still running) is refused, not mixed in
    third = RemoteWriter(spec, PYTHON, _cfg(target), str(journal), 60)
    with pytest.raises(HostError, match="is in use by another writer"):
        third.start()
    assert again.stream_id == first.stream_id  # the same stream, continued
    assert wait_until(lambda: len(read_records(journal)[1]) >= len(before) + 20, 10)
    again.stop()
    records = read_records(journal)[1]
    latest = {r.offset: r.generation for r in records if r.kind == ACKED}
    # a block acknowledged before the crash and not written since: damage it
    old = sorted(o for o, g in latest.items() if before.get(o) == g)[0]
    with open(target, "r+b") as fh:
        fh.seek(old)
        fh.write(b"\0" * 4096)
    found = check_over_ssh(spec, PYTHON, str(target), str(journal), direct=True, timeout_s=60)
    assert found.report.checked == len(latest)
    assert [(p.offset, p.kind) for p in found.report.problems] == [(old, "corrupt")]


def test_a_host_whose_ssh_is_down_stops_the_point_and_leaves_no_writer(host, tmp_path) -> None:
    """Writers start on every host at once: when one cannot, the others are stopped again."""
    from dataclasses import replace

    import yaml

    from arraybench.plan.expand import expand
    from arraybench.plan.load import parse_plan_text
    from arraybench.run.host_verify import HostsVerify

    hosts, spec = host
    assert spec.ssh is not None
    ssh = {"python": PYTHON, "journals": str(tmp_path / "journals")}
    declared = [{"name": name, "address": spec.address, "ssh": ssh,
                 "targets": [{"path": str(tmp_path / f"{name}.dat"), "size": "4m"}]}
                for name in ("h0", "h1")]  # fmt: skip
    plan = parse_plan_text(yaml.safe_dump({
        "name": "p", "hosts": declared, "host_sets": [["h0", "h1"]],
        "load": {"workers": [1], "iodepth": [1]},
        "workloads": [{"name": "w", "pattern": "random", "bs": "4k", "read": 0,
                       "verify": {"region": "1m"}}]}), "plan.yaml")  # fmt: skip
    [point] = expand(plan)
    down = replace(spec, name="h1", ssh=replace(spec.ssh, port=2222))  # nothing listens there
    verify = HostsVerify(point, {h.name: h for h in plan.hosts}, {"h0": spec, "h1": down},
                         run_id="r1", folder=tmp_path / "001-w", limit_s=30)  # fmt: skip
    sizes = verify.prepare({})
    # two hosts, two regions of 1m (one each): every load stops before both
    assert sizes == {str(tmp_path / "h0.dat"): 2 << 20, str(tmp_path / "h1.dat"): 2 << 20}
    assert [h.offset for h in verify.hosts] == [3 << 20, 2 << 20]
    with pytest.raises(HostError, match=r"^host h1: the integrity writer did not start over ssh"):
        verify.start()
    assert not _writers(hosts) and all(h.writer is None for h in verify.hosts)
