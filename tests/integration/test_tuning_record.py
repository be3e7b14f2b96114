"""Block queue settings of the targets, recorded in every run's provenance (loop devices)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import openpyxl
import pytest

from arraybench.cli import main
from arraybench.hosts.server import HostSpec, tcp_problem
from arraybench.report.compare import compare, load_scenario
from arraybench.store.db import Store
from arraybench.targets.queue import REMOTE_SCRIPT, parse_remote, read_queue, read_remote_queues
from tests.conftest import needs_fio
from tests.fake_engine import PLAN_LINES
from tests.loopdev import attached, sparse_file
from tests.netns import SSHD, started_or_skip, wait_until


@pytest.fixture
def loopdev(tmp_path: Path) -> Iterator[str]:
    with attached(sparse_file(tmp_path / "backing.img", 64 << 20)) as dev:
        yield dev


def _queue_file(dev: str, name: str) -> Path:
    return Path("/sys/block") / Path(dev).name / "queue" / name


def _plan(tmp_path: Path, dev: str) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(
        f"{PLAN_LINES}name: queue\ntargets:\n  - path: {dev}\n"
        "timing: {ramp: 0s, duration: 1s}\nload: {workers: [1], iodepth: [1]}\n"
        "workloads:\n  - {name: rr, pattern: random, bs: 4k, read: 100}\n"
    )
    return path


def _run(tmp_path: Path, dev: str, results: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["run", str(_plan(tmp_path, dev)), "--results", str(results)]) == 0
    capsys.readouterr()
    return Store(results, create=False).list_runs()[-1][0].id


@pytest.mark.usefixtures("fake_engine")  # the recorded settings are the subject, not fio's load
def test_two_runs_with_different_read_ahead_are_told_apart(
    loopdev: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    read_ahead = _queue_file(loopdev, "read_ahead_kb")
    original = read_ahead.read_text()
    try:
        read_ahead.write_text("0")
        first = _run(tmp_path, loopdev, results, capsys)
        read_ahead.write_text("128")
        second = _run(tmp_path, loopdev, results, capsys)
    finally:
        read_ahead.write_text(original)

    assert main(["show", first, "--results", str(results), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    queue = shown["provenance"][0]["targets"][0]["queue"]
    scheduler = _queue_file(loopdev, "scheduler").read_text()
    assert queue["device"] == Path(loopdev).name
    assert queue["settings"]["read_ahead_kb"] == "0"
    assert f"[{queue['settings']['scheduler']}]" in scheduler
    assert (
        queue["settings"]["nr_requests"] == _queue_file(loopdev, "nr_requests").read_text().strip()
    )

    html, xlsx = tmp_path / "r.html", tmp_path / "r.xlsx"
    assert (
        main(["report", second, "--results", str(results), "-o", str(html), "-o", str(xlsx)]) == 0
    )
    assert "read_ahead_kb 128" in html.read_text()
    sheet = openpyxl.load_workbook(xlsx)["Provenance"]
    cells = [str(c.value) for row in sheet.iter_rows() for c in row if c.value is not None]
    assert any("read_ahead_kb 128" in c for c in cells)

    store = Store(results, create=False)
    model = compare([load_scenario(store, f"{first}:A"), load_scenario(store, f"{second}:B")])
    assert f"B had read_ahead_kb=128 on {loopdev} (A: 0)" in model.notes
    assert not [n for n in model.notes if "nr_requests" in n]  # only what differs is named
    markdown = tmp_path / "c.md"
    assert main(["compare", f"{first}:A", f"{second}:B", "--results", str(results),
                 "-o", str(markdown)]) == 0  # fmt: skip
    assert "B had read_ahead_kb=128" in markdown.read_text().replace("\\", "")  # unescape _


def test_the_remote_script_reads_what_the_local_reader_reads(loopdev: str, tmp_path: Path) -> None:
    """The SSH script, run here with sh, against the Python reader: a device, a file on a
    device, a file not yet created (its folder's device)."""
    targets = [loopdev, str(sparse_file(tmp_path / "f.img", 1 << 20)), str(tmp_path / "new")]
    done = subprocess.run(["sh", "-c", REMOTE_SCRIPT, "q", *targets], capture_output=True,
                          text=True, check=True)  # fmt: skip
    remote = parse_remote(done.stdout)
    local = [read_queue(t) for t in targets]
    assert [r.device for r in remote] == [q.device for q in local]
    assert [r.settings for r in remote] == [q.settings for q in local]
    assert remote[0].device == Path(loopdev).name and "read_ahead_kb" in remote[0].settings


@needs_fio  # the namespace hosts run fio servers
@pytest.mark.skipif(not Path(SSHD).exists(), reason="openssh-server is not installed")
def test_remote_host_over_real_ssh(loopdev: str, tmp_path: Path) -> None:
    """A host in a network namespace with its own sshd: its queue settings come over SSH (the
    namespace shares /sys, so they must equal the local reading); no SSH: said, not guessed."""
    if shutil.which("ip") is None:
        pytest.skip("iproute2 (ip) missing")
    hosts = started_or_skip(1, tmp_path / "hosts")
    try:
        ssh = hosts.start_sshd(0, tmp_path / "ssh")
        try:
            assert wait_until(lambda: tcp_problem(hosts.hosts[0].address, 22, 0.5) is None, 10)
            spec = HostSpec("h0", hosts.hosts[0].address, ssh=ssh)
            read = read_remote_queues(spec, [loopdev])
            assert not isinstance(read, str), read
            assert [(q.device, q.settings) for q in read] == [
                (Path(loopdev).name, read_queue(loopdev).settings)
            ]
        finally:
            hosts.stop_sshd(0)
        said = read_remote_queues(HostSpec("h0", hosts.hosts[0].address), [loopdev])
        assert said == "queue settings not read: no SSH access to this host"
    finally:
        hosts.close()
