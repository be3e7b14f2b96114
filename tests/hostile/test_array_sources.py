"""`array_monitor:` sources attacked: a Prometheus that drips its answer or floods it, a URL
with credentials (used as basic auth, never said), a command printing a line without end or
leaving children behind, and a curve whose workload pattern matches nothing. Real sockets on
127.0.0.1, real child processes; every wait bounded."""

from __future__ import annotations

import base64
import json
import os
import resource
import socket
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from arraybench.cli import main
from arraybench.errors import PlanError
from arraybench.finding_kinds import ARRAY_PULL, ARRAY_SERIES
from arraybench.monitor.arraypull import ArrayPullError, CommandSource, prometheus_samples
from arraybench.plan.array_monitor import without_credentials
from arraybench.plan.load import parse_plan_text
from arraybench.store.db import Store
from tests import fake_engine
from tests.conftest import small_plan
from tests.fake_engine import PLAN_LINES


@pytest.fixture(autouse=True)
def _fake_clock_now() -> None:
    """The fake engine's seconds follow the last run's in this process: after many fake runs
    in one worker they run minutes ahead of the clock, and the array pull waits for a window's
    end (plus its lag) before it asks, longer than the run waits for it. Start them now."""
    fake_engine._last_second[0] = 0


pytestmark = pytest.mark.timeout(120)  # a source never cut off would hang: fail, never block CI

MATRIX = json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
    {"metric": {}, "values": [[t, "100"] for t in range(int(time.time()) - 3600,
                                                       int(time.time()) + 3600)]}]}})  # fmt: skip


@contextmanager
def raw_server(answer: Callable[[socket.socket, bytes], None]) -> Iterator[int]:
    """A TCP server on 127.0.0.1 whose every client gets `answer(sock, request head)` in a
    thread of its own; its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)  # here, not in the thread: a late thread found it closed (CI)
    stop = threading.Event()

    def client(sock: socket.socket) -> None:
        with sock:
            head = b""
            sock.settimeout(5)
            try:
                while b"\r\n\r\n" not in head and (data := sock.recv(4096)):
                    head += data
                answer(sock, head)
            except OSError:
                pass  # the client gave up: what the test wants

    def accept() -> None:
        while not stop.is_set():
            try:
                sock, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=client, args=(sock,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()


def drip(text: bytes, every: float) -> Callable[[socket.socket, bytes], None]:
    def answer(sock: socket.socket, _: bytes) -> None:
        for byte in text:
            sock.sendall(bytes([byte]))
            time.sleep(every)

    return answer


OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


@pytest.mark.paced  # judges how soon a dripping answer is cut
@pytest.mark.parametrize("name,answer", [
    ("head dripped", drip(OK_HEAD + b"Content-Length: 100\r\n\r\n", 0.1)),
    ("body dripped", lambda s, _: (s.sendall(OK_HEAD + b"Content-Length: 50000\r\n\r\n"),
                                   drip(b"{" * 50000, 0.05)(s, _))),
    ("status line dripped slower", drip(b"HTTP/1.1 200 OK\r\n", 0.4)),
])  # fmt: skip
def test_a_dripping_prometheus_is_cut_at_the_timeout(name: str, answer: Callable) -> None:
    with raw_server(answer) as port:
        started = time.monotonic()
        with pytest.raises(ArrayPullError) as caught:
            prometheus_samples(f"http://127.0.0.1:{port}", {"iops": "q", "cpu": "c"}, 0, 10,
                               1.0, 1.0)  # fmt: skip
        took = time.monotonic() - started
    assert "took longer than 1 s" in str(caught.value), (name, caught.value)
    assert took < 1.8, (name, took)  # the whole answer within the timeout, not each byte


def test_a_flood_answer_is_refused_without_reading_it_all() -> None:
    def flood(sock: socket.socket, _: bytes) -> None:
        sock.sendall(OK_HEAD + b"Content-Length: 1000000000\r\n\r\n")
        chunk = b" " * (1 << 20)
        while True:
            sock.sendall(chunk)

    with raw_server(flood) as port, pytest.raises(ArrayPullError, match="more than 16 MiB"):
        prometheus_samples(f"http://127.0.0.1:{port}", {"iops": "q"}, 0, 10, 1.0, 10.0)


SECRET_USER, SECRET_PASSWORD = "ops@lab", "s3cr:t/#pw"
ENCODED = "ops%40lab:s3cr%3At%2F%23pw"


def authorizing(seen: list[bytes]) -> Callable[[socket.socket, bytes], None]:
    """A Prometheus answering only the right basic-auth pair, 401 otherwise."""
    good = base64.b64encode(f"{SECRET_USER}:{SECRET_PASSWORD}".encode())

    def answer(sock: socket.socket, head: bytes) -> None:
        seen.append(head)
        if b"Authorization: Basic " + good + b"\r\n" in head:
            body = MATRIX.encode()
            sock.sendall(OK_HEAD + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        else:
            body = b'{"status":"error","error":"unauthorized"}'
            sock.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + body)  # fmt: skip

    return answer


def _secret_in(text: str) -> bool:
    return any(s in text for s in ("s3cr", SECRET_PASSWORD, ENCODED, "s3cr%3A"))


def test_credentials_are_basic_auth_and_never_said() -> None:
    seen: list[bytes] = []
    with raw_server(authorizing(seen)) as port:
        now = time.time()
        url = f"http://{ENCODED}@127.0.0.1:{port}/"
        found = prometheus_samples(url, {"iops": "q"}, now - 5, now, 1.0, 5.0)
        assert found and found[0].values == {"iops": 100.0}
        assert b"Host: 127.0.0.1:" in seen[0] and b"@" not in seen[0].split(b"\r\n")[0]
        for wrong in (f"http://ops:nope{ENCODED}@127.0.0.1:{port}",
                      f"http://{ENCODED}@127.0.0.1:1",  # nothing listens there
                      f"http://{ENCODED}@no-such-host.invalid:9090",
                      f"http://{ENCODED}@127.0.0.1:{port}:77"):  # fmt: skip
            with pytest.raises(ArrayPullError) as caught:
                prometheus_samples(wrong, {"iops": "q"}, now - 5, now, 1.0, 3.0)
            said = str(caught.value)
            assert not _secret_in(said) and "ops" not in said, said


def test_a_redirect_is_not_followed_with_the_credentials() -> None:
    """A redirect elsewhere would carry the basic-auth pair to whoever it names: refused,
    and its target not said."""
    followed: list[bytes] = []
    with raw_server(lambda s, head: followed.append(head)) as elsewhere:
        target = f"http://evil:pw@127.0.0.1:{elsewhere}/api/v1/query_range".encode()
        moved = b"HTTP/1.1 302 Found\r\nLocation: " + target + b"\r\nContent-Length: 0\r\n\r\n"
        with raw_server(lambda s, _: s.sendall(moved)) as port, \
                pytest.raises(ArrayPullError) as caught:  # fmt: skip
            prometheus_samples(f"http://{ENCODED}@127.0.0.1:{port}", {"iops": "q"}, 0, 10,
                               1.0, 3.0)  # fmt: skip
    said = str(caught.value)
    assert said.startswith("HTTP 302 from http://127.0.0.1:") and "evil" not in said, said
    assert followed == []


@pytest.mark.usefixtures("fake_engine")
def test_a_run_with_a_wrong_password_warns_without_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[bytes] = []
    results = tmp_path / "res"
    runs: list[str] = []
    with raw_server(authorizing(seen)) as port:
        for password, pulled in (("Xq7%3AWr0ng", False), ("s3cr%3At%2F%23pw", True)):
            plan = small_plan(tmp_path, workers="[1]", extra=PLAN_LINES + (
                "array_monitor:\n  prometheus:\n"
                f"    url: http://ops%40lab:{password}@127.0.0.1:{port}\n"
                "    lag: 0s\n    queries: {iops: q}\n"))  # fmt: skip
            reports = [tmp_path / f"r-{pulled}.md", tmp_path / f"r-{pulled}.xlsx"]
            argv = ["run", str(plan), "--results", str(results),
                    "-o", str(reports[0]), "-o", str(reports[1])]  # fmt: skip
            assert main(argv) in (0, 3)
            out, err = capsys.readouterr()
            assert not _secret_in(out + err) and "Wr0ng" not in out + err, out + err
            with closing(Store(results, create=False)) as store:
                run = next(r for r, *_ in store.list_runs() if r.id not in runs)
                runs.append(run.id)
                failed = ARRAY_PULL.among(store.findings(run.id, ARRAY_PULL.name))
                series = ARRAY_SERIES.among(store.findings(run.id, ARRAY_SERIES.name))
            for text in _report_texts(Path(run.folder), reports):  # the plan, not its secret
                assert "ops%40lab" not in text and not _secret_in(text) and "Wr0ng" not in text
            stored = json.dumps([*failed, *series])
            assert not _secret_in(stored) and "Wr0ng" not in stored, stored
            assert bool(series) == pulled and bool(failed) != pulled, (failed, series, out, err)
            if not pulled:
                assert "HTTP 401 from http://127.0.0.1:" in out + err
    compared = [tmp_path / "c.md", tmp_path / "c.xlsx"]
    argv = ["compare", f"{runs[0]}:a", f"{runs[1]}:b", "--results", str(results),
            "-o", str(compared[0]), "-o", str(compared[1])]  # fmt: skip
    assert main(argv) in (0, 3)
    assert not _secret_in(capsys.readouterr().out)
    for text in _report_texts(None, compared):
        assert "ops%40lab" not in text and not _secret_in(text) and "Wr0ng" not in text


def _report_texts(folder: Path | None, reports: list[Path]) -> list[str]:
    """Every report as text: the run folder's but the plan itself (kept as written, for
    --resume), the Markdown, each part of the workbook."""
    found = [
        f.read_text(errors="replace")
        for f in (folder.iterdir() if folder else [])
        if f.is_file() and f.name != "plan.yaml" and f.suffix in (".html", ".md")
    ]
    found.append(reports[0].read_text())
    with zipfile.ZipFile(reports[1]) as book:
        found += [book.read(name).decode(errors="replace") for name in book.namelist()]
    assert any("array_monitor" in text for text in found)  # the plan is shown
    return found


def test_without_credentials() -> None:
    assert (
        without_credentials("url: 'http://a:b@c@h:9090/p@x?q=@'") == "url: 'http://h:9090/p@x?q=@'"
    )
    assert without_credentials("HTTPS://u@h\nmail me@x.org http://h/a@b") == (
        "HTTPS://h\nmail me@x.org http://h/a@b")  # fmt: skip


@pytest.mark.parametrize("url", [
    f"http://{ENCODED}@127.0.0.1:99999", "http://ops:s3cr/t@127.0.0.1:9090",
    "http://ops:s3cr#t@host:9090", "http://ops:s3cret@:9090",
])  # fmt: skip
def test_an_unreadable_url_is_refused_without_saying_it(tmp_path: Path, url: str) -> None:
    text = small_plan(tmp_path, extra=f"array_monitor:\n  prometheus:\n    url: '{url}'\n"
                                      "    queries: {iops: q}\n").read_text()  # fmt: skip
    with pytest.raises(PlanError) as caught:
        parse_plan_text(text, "plan.yaml")
    said = caught.value.one_line()
    assert said.startswith("plan.yaml:") and "url" in said and "s3cr" not in said, said


def _group(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group `pgid`."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(name))
    return found


def _command(script: str) -> CommandSource:
    return CommandSource(["sh", "-c", script])


@pytest.mark.parametrize("script", [
    'sleep 300 & sleep 300 & echo \'{"iops": 1}\'; wait',  # children beside the command
    "sleep 300 & exit 0",  # the command ended, its child left running
    "trap '' TERM; sleep 300 & sleep 300",  # deaf to SIGTERM: killed
    "sh -c 'sleep 300 & wait' & wait",  # a grandchild
])  # fmt: skip
def test_the_command_and_all_it_started_end_with_the_run(script: str) -> None:
    source = _command(script)
    assert source.proc is not None
    time.sleep(0.5)
    assert _group(source.proc.pid), "the command started nothing"
    started = time.monotonic()
    source.stop()
    assert time.monotonic() - started < 6.0
    for _ in range(20):  # killed processes are reaped by init a moment later
        if not _group(source.proc.pid):
            break
        time.sleep(0.1)
    assert _group(source.proc.pid) == []


@pytest.mark.usefixtures("fake_engine")
def test_nothing_the_command_started_outlives_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pidfile = tmp_path / "pid"
    script = (f"echo $$ > {pidfile}; sleep 300 & (trap '' TERM; sleep 300) & "
              "while :; do echo '{\"iops\": 1}'; sleep 0.2; done")  # fmt: skip
    plan = small_plan(tmp_path, workers="[1]", extra=PLAN_LINES + (
        f"array_monitor:\n  command: [sh, -c, {json.dumps(script)}]\n"))  # fmt: skip
    assert main(["run", str(plan), "--results", str(tmp_path / "res")]) in (0, 3)
    capsys.readouterr()
    pgid = int(pidfile.read_text())
    for _ in range(20):
        if not _group(pgid):
            break
        time.sleep(0.1)
    assert _group(pgid) == []


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize("script", [
    # 300 MB without a newline, then a sample: read, and nothing of the long line kept
    "head -c 300000000 /dev/zero; echo; echo '{\"iops\": 7}'; sleep 60",
    "head -c 300000000 /dev/urandom | tr -d '\\n'; printf '\\n{\"iops\": 7}\\n'; sleep 60",
])  # fmt: skip
def test_an_endless_line_costs_no_memory(script: str) -> None:
    before = _peak_mib()
    started = time.time()
    source = _command(script)
    try:
        for _ in range(300):
            try:
                found = source.window(started, time.time() + 1)
                break
            except ArrayPullError:
                time.sleep(0.1)
        else:
            pytest.fail("the sample after the long line was never read")
        assert [s.values for s in found] == [{"iops": 7.0}]
        assert source.garbage == 1 and len(source.first_garbage) < 200
    finally:
        source.stop()
    assert _peak_mib() - before < 100, "the long line was kept in memory"


@pytest.mark.parametrize("patterns,bad", [
    ('["rr", "sw"]', "'sw'"), ('["RR"]', "'RR'"), ('["rr", "r[!r]"]', "'r[!r]'"),
    ('["rr "]', "'rr '"),
])  # fmt: skip
def test_a_curve_pattern_matching_no_workload_is_refused_at_its_line(
    tmp_path: Path, patterns: str, bad: str
) -> None:
    workloads = "  - {name: rr, pattern: random, bs: 4k, read: 100}\n"
    text = small_plan(tmp_path, workloads=workloads).read_text()
    text += f"curve:\n  percents: [50, 100]\n  workloads: {patterns}\n"
    line = len(text.splitlines())
    with pytest.raises(PlanError) as caught:
        parse_plan_text(text, "plan.yaml")
    said = caught.value.one_line()
    assert said.startswith(f"plan.yaml:{line} curve.workloads[") and bad in said, said
    assert "matches no workload" in said and "(rr)" in said


def test_a_curve_pattern_given_by_set_is_refused_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = small_plan(tmp_path)
    code = main(["plan", "check", str(plan), "--set", "curve.workloads=[nothing*]"])
    err = capsys.readouterr().err
    assert code == 2 and "curve.workloads[0]" in err and "'nothing*'" in err, err
    assert main(["plan", "check", str(plan), "--set", "curve.workloads=[seq*]"]) == 0
