"""`run --serve` attacked: values no port parser should take (digits of other scripts, ports
of thousands of digits, nothing at all), clients that drip their requests or never read the
answer, heads too big, and `Host:` names of another site (DNS rebinding). Real sockets on
127.0.0.1; every wait bounded."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.errors import ArraybenchError
from arraybench.live import server as live_server
from arraybench.live.server import LiveServer, parse_serve
from arraybench.live.state import LiveState
from tests.hostile.test_edges_cli import one_line
from tests.unit.test_live_server import running_snapshot

pytestmark = pytest.mark.timeout(120)  # a slot held forever would hang: fail, never block CI


@pytest.mark.parametrize("text", [
    "²", "٣٠٠٠", "127.0.0.1:９０００", "9" * 5000, "1" + "0" * 4400, "", " ", "\t", ":",
    "127.0.0.1:", "+80", "-1", "0x50", "1e3", "9000 ", "65536", "000009000", "[::1]:٩",
    "127.0.0.1:9000\n", "\x1b[2J:9000", "１２７.0.0.1:9000", "localhost\u200b:9000",
    "0177.0.0.1:80", "h" * 300 + ":80", "h" * 5000 + ":80",
], ids=lambda text: ascii(text[:12]))  # fmt: skip
def test_serve_values_refused_in_one_short_line(text: str) -> None:
    with pytest.raises(ArraybenchError) as caught:
        parse_serve(text)
    message = caught.value.one_line()
    assert caught.value.exit_code == 2 and message.startswith("--serve ")
    assert len(message) < 400 and "\n" not in message and "\x1b" not in message, message


@pytest.mark.parametrize(
    "text", ["9000", "09000", "127.0.0.1:0", "[::1]:65535", "localhost:80", "[127.0.0.1]:80"]
)
def test_serve_values_taken(text: str) -> None:
    assert 0 <= parse_serve(text).port <= 65535


@pytest.mark.parametrize("text", ["", "²", "7" * 5000], ids=["empty", "super2", "long"])
def test_run_refuses_them_before_running(text: str, capsys: pytest.CaptureFixture[str],
                                         tmp_path: Path) -> None:  # fmt: skip
    line = one_line(capsys, ["run", "quick", "--serve", text, "--results", str(tmp_path)], 2)
    assert "--serve" in line and len(line) < 240, line


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveServer]:
    monkeypatch.setattr(live_server, "HEAD_TIME_S", 1.0)  # short, for the test's time
    monkeypatch.setattr(live_server, "REQUEST_TIME_S", 2.0)
    state = LiveState()
    state.data = running_snapshot(int(time.time()))
    # a live.json of 6 MB: more than loopback's largest send buffer (4 MiB), a write that
    # blocks while its client does not read
    state.change(lines=["x" * 1000] * 6000)
    started = LiveServer(parse_serve("127.0.0.1:0"), state).start()
    try:
        yield started
    finally:
        started.stop()


def _address(server: LiveServer) -> tuple[str, int]:
    return str(server.server_address[0]), int(server.server_address[1])


def _ask(server: LiveServer, head: bytes, wait: float = 3.0) -> bytes:
    """The whole answer to `head`, as the server sent it ('' when it only closed)."""
    with socket.create_connection(_address(server), timeout=wait) as sock:
        sock.sendall(head)
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
    return got


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0


def scrape(server: LiveServer, host: str = "127.0.0.1") -> int:
    return _status(_ask(server, f"GET /metrics HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()))


@pytest.mark.paced  # judges how soon a scrape is answered while 40 clients drip
def test_dripping_clients_lock_nobody_out(server: LiveServer) -> None:
    stop = threading.Event()
    closed: list[float] = []

    def drip() -> None:  # a byte every 0.3 s, as long as the server keeps the socket
        with socket.create_connection(_address(server), timeout=10) as sock:
            opened = time.monotonic()
            for byte in b"GET /live.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n":
                if stop.wait(0.3):
                    return
                try:
                    sock.sendall(bytes([byte]))
                except OSError:
                    break
            closed.append(time.monotonic() - opened)

    drippers = [threading.Thread(target=drip, daemon=True) for _ in range(40)]
    for thread in drippers:
        thread.start()
    time.sleep(0.5)
    started = time.monotonic()
    assert [scrape(server) for _ in range(5)] == [200] * 5
    assert time.monotonic() - started < 2.0  # at once, not after the drippers' timeout
    for thread in drippers:
        thread.join(timeout=15)
    stop.set()
    # each was cut about HEAD_TIME_S after it connected (its next byte found the socket shut)
    assert len(closed) == 40 and max(closed) < 4.0, closed


@pytest.mark.paced  # judges when stuck answers are ended and the slots come back
def test_clients_that_never_read_hold_no_slot_past_the_request_time(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_server, "MAX_CLIENTS", 8)  # 8 answers of 6 MB, not 32
    mute = []
    for _ in range(10):  # more than the slots: the last ones are answered 503 at once
        sock = socket.create_connection(_address(server), timeout=5)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        sock.sendall(b"GET /live.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        mute.append(sock)
    time.sleep(0.5)
    try:
        assert scrape(server) == 200  # a slot kept for scrapes
        assert _status(_ask(server, b"GET / HTTP/1.0\r\n\r\n")) == 503  # the page: no slot
        time.sleep(live_server.REQUEST_TIME_S + 1.0)
        assert _status(_ask(server, b"GET / HTTP/1.0\r\n\r\n")) == 200  # the stuck ones shut
    finally:
        for sock in mute:
            sock.close()


def test_a_head_too_big_or_never_ended_is_closed(server: LiveServer) -> None:
    big = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-A: " + b"a" * (64 << 10) + b"\r\n\r\n"
    started = time.monotonic()
    with socket.create_connection(_address(server), timeout=5) as sock:
        try:
            sock.sendall(big)
            answer = sock.recv(4096)
        except ConnectionResetError:  # closed with our bytes unread: a reset, as good
            answer = b""
    assert answer in (b"", live_server.TOO_BIG) or _status(answer) == 431, answer[:80]
    assert _status(_ask(server, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")) == 0  # no end
    assert time.monotonic() - started < 5.0


@pytest.mark.parametrize("host,code", [
    ("127.0.0.1", 200), ("127.0.0.1:1", 200), ("localhost", 200), ("LOCALHOST.", 200),
    ("[::1]:80", 200), ("evil.example", 421), ("evil.example:{port}", 421),
    ("127.0.0.1.nip.io", 421), ("2130706433", 421), ("localhost.evil.example", 421),
    ("", 421), ("[127.0.0.1]", 200),
])  # fmt: skip
def test_only_its_own_host_names_are_answered(server: LiveServer, host: str, code: int) -> None:
    host = host.format(port=_address(server)[1])
    for path in ("/metrics", "/live.json", "/", "/charts"):
        answer = _ask(server, f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        assert _status(answer) == code, (host, path, answer[:200])
        if code != 200:
            assert b"arraybench" not in answer.split(b"\r\n\r\n", 1)[1]


def test_no_host_or_two_hosts(server: LiveServer) -> None:
    assert _status(_ask(server, b"GET /metrics HTTP/1.0\r\n\r\n")) == 200  # HTTP/1.0: none
    two = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n"
    assert _status(_ask(server, two)) == 421


def test_the_machine_name_is_answered(server: LiveServer) -> None:
    assert scrape(server, socket.gethostname()) == 200  # Prometheus' targets often name it


def test_listening_on_another_address() -> None:
    """Listening on 127.0.0.2, the address is answered and another loopback one too (only a
    forward on this machine reaches the server under that name)."""
    state = LiveState()
    state.data = running_snapshot(int(time.time()))
    other = LiveServer(parse_serve("127.0.0.2:0"), state).start()
    try:
        assert scrape(other, "127.0.0.2") == 200 and scrape(other, "127.0.0.1") == 200
        assert scrape(other, "127.0.0.3") == 421
    finally:
        other.stop()


SERVER_WITH_FEW_FDS = """
import resource, sys, time
from arraybench.live.server import LiveServer, parse_serve
from arraybench.live.state import LiveState
resource.setrlimit(resource.RLIMIT_NOFILE, (24, 24))
server = LiveServer(parse_serve("127.0.0.1:0"), LiveState()).start()
print(server.server_address[1], flush=True)
sys.stdin.read()
"""


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.paced  # judges the server's CPU time while its descriptors run out
def test_out_of_file_descriptors_neither_spins_nor_locks_out() -> None:
    """More idle connections than the process may open: the oldest are closed to make room
    (no loop spinning on a listening socket it cannot accept from), a scrape gets in."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER_WITH_FEW_FDS], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    idle = []
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        for _ in range(50):  # 24 descriptors, some taken by Python itself: all at once
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))
            idle.append(sock)
        time.sleep(0.2)
        before = _cpu_s(proc.pid)
        time.sleep(1.0)
        assert _cpu_s(proc.pid) - before < 0.1  # not spinning on accept's EMFILE
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
            assert sock.recv(100).startswith(b"HTTP/1.0 200")
    finally:
        for sock in idle:
            sock.close()
        proc.kill()
        proc.wait(timeout=10)
