"""`run --serve [ADDR:]PORT`: the live page, its JSON and `/metrics`, read-only.

More: docs/internals.md, `live/server.py`."""

from __future__ import annotations

import contextlib
import io
import ipaddress
import json
import selectors
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from arraybench.errors import ArraybenchError
from arraybench.hosts.address import check_address, is_wildcard, legacy_ipv4
from arraybench.live.charts import charts_html
from arraybench.live.metrics import CONTENT_TYPE, exposition
from arraybench.live.page import live_page
from arraybench.live.state import LiveState

CLIENT_TIMEOUT_S = 5.0  # one read or write of a client's socket
HEAD_TIME_S = 3.0  # from connecting to the end of the request's headers
REQUEST_TIME_S = 10.0  # from connecting to the end of the answer
MAX_HEAD = 16 << 10  # bytes of a request's line and headers
MAX_PENDING = 256  # clients still sending their heads
MAX_CLIENTS = 32  # requests answered at once
SCRAPE_SLOTS = 4  # of those, kept for /metrics: a scrape is answered while pages are stuck
MAX_SHOWN = 40  # characters of a --serve value quoted in an error
MAX_HOST = 253  # characters of a DNS name
LOOPBACK = "127.0.0.1"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")  # answered whatever the address (ssh -L)
PAGE_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            "connect-src 'self'; img-src data:")  # fmt: skip
BUSY = b"HTTP/1.0 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n"
TOO_BIG = b"HTTP/1.0 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n\r\n"


class ServeError(ArraybenchError):
    """--serve names an address this run must not or cannot listen on (exit 2)."""


@dataclass(frozen=True)
class ServeAddress:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return self.host == "localhost"


def _wildcard(text: str) -> bool:
    try:
        return is_wildcard(ipaddress.ip_address(text))
    except ValueError:
        legacy = legacy_ipv4(text)
        return legacy is not None and legacy.is_unspecified


def _shown(text: str) -> str:
    """A --serve value as quoted in an error: cut, and in quotes when it is empty, has
    blanks or characters a terminal would act on."""
    cut = text[:MAX_SHOWN]
    shown = cut if cut and cut.isprintable() and cut.strip() == cut else repr(cut)
    return shown + (f"... ({len(text)} characters)" if len(text) > MAX_SHOWN else "")


def _port(text: str, where: str, alone: bool) -> int:
    """ASCII digits only (`²` and `٣` are digits to Python), at most 65535. `alone`: the whole
    value (not said twice)."""
    if not (text.isascii() and text.isdigit() and len(text) <= 5 and int(text) <= 65535):
        what = "is" if alone else f"{_shown(text)} is"
        raise ServeError(f"{where}: {what} not a port (0 to 65535)",
                         "e.g. --serve 9000 or --serve 127.0.0.1:9000")  # fmt: skip
    return int(text)


def parse_serve(text: str) -> ServeAddress:
    """`PORT`, `ADDR:PORT` or `[IPv6]:PORT`; loopback when no address is given."""
    where = f"--serve {_shown(text)}"
    if not text.strip():
        raise ServeError(f"{where}: names no port",
                         "e.g. --serve 9000 or --serve 127.0.0.1:9000")  # fmt: skip
    host, sep, port = text.rpartition(":")
    if not sep:
        host = LOOPBACK
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    number = _port(port, where, alone=not sep)
    if not host or _wildcard(host):
        raise ServeError(f"{where}: would listen on every interface",
                         "name one address, e.g. --serve 10.0.0.5:9000")  # fmt: skip
    if len(host) > MAX_HOST:  # not quoted whole in the error below
        raise ServeError(f"{where}: the address is longer than a host name ({MAX_HOST} "
                         "characters)", "e.g. --serve 10.0.0.5:9000")  # fmt: skip
    check_address(host, where)  # blanks, legacy spellings, names resolving to the wildcard
    return ServeAddress(host, number)


def _host_name(header: str) -> str:
    """The name or address of a `Host:` value, without its port, brackets or final dot,
    lower case; an IP address in its normal spelling."""
    text = header.strip().lower()
    if text.startswith("["):
        text = text[1:].split("]", 1)[0]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    text = text.rstrip(".")
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return text


def allowed_hosts(address: ServeAddress, bound: str, server_name: str) -> frozenset[str]:
    """The `Host:` names a request may give: loopback's (only a forward or proxy on this
    machine reaches them), the address listened on as given and as bound, the name the
    address resolves back to, and this machine's name. A name only resolving to the address
    is not enough: a DNS-rebinding page's name does."""
    names = {*LOOPBACK_NAMES, address.host, bound, server_name, socket.gethostname()}
    return frozenset(_host_name(n) for n in names if n)


class _Writer(io.BufferedIOBase):
    """The handler's wfile: every write whole (`sendall`), on the socket's timeout."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        self.sock.sendall(b)
        return len(memoryview(b))


@dataclass(eq=False)  # a key of the server's maps: each connection itself
class _Client:
    sock: socket.socket
    address: Any
    connected: float  # time.monotonic()
    head: bytearray = field(default_factory=bytearray)

    def complete(self) -> bool:
        return b"\r\n\r\n" in self.head or b"\n\n" in self.head

    def scrape(self) -> bool:
        words = bytes(self.head.split(b"\n", 1)[0]).split()
        return len(words) >= 2 and words[1].split(b"?", 1)[0] == b"/metrics"


class _Handler(BaseHTTPRequestHandler):
    server: LiveServer
    server_version = "arraybench-live"
    sys_version = ""

    def setup(self) -> None:
        """The request (head, socket): the head already read by the server's loop, the
        answer written on the socket."""
        assert isinstance(self.request, tuple)
        head, self.connection = self.request
        self.connection.settimeout(CLIENT_TIMEOUT_S)  # each write; the loop bounds them all
        self.rfile = io.BytesIO(head)
        self.wfile = _Writer(self.connection)

    def do_GET(self) -> None:
        hosts = self.headers.get_all("Host") or []
        if len(hosts) > 1 or (hosts and _host_name(hosts[0]) not in self.server.hosts):
            self._send(421, "text/plain; charset=utf-8", b"not this server's host name\n")
            return
        path = self.path.split("?", 1)[0]
        state = self.server.state
        if path == "/metrics":
            self._send(200, CONTENT_TYPE, exposition(state.snapshot()).encode())
        elif path == "/live.json":
            body = json.dumps(state.snapshot(), separators=(",", ":")).encode()
            self._send(200, "application/json", body)
        elif path == "/charts":
            self._send(200, "text/html; charset=utf-8", charts_html(state.snapshot()).encode())
        elif path == "/":
            self._send(200, "text/html; charset=utf-8", live_page().encode(), PAGE_CSP)
        else:
            self._send(404, "text/plain; charset=utf-8", b"not found\n")

    def _send(self, code: int, kind: str, body: bytes, csp: str | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        if csp:
            self.send_header("Content-Security-Policy", csp)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return  # the run's console is not the server's access log


class LiveServer(HTTPServer):
    allow_reuse_address = True
    request_queue_size = 128  # a burst of connections waits in the kernel, not in SYN retries

    def __init__(self, address: ServeAddress, state: LiveState) -> None:
        self.address_family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
        self.state = state
        super().__init__((address.host, address.port), _Handler)
        self.hosts = allowed_hosts(address, str(self.server_address[0]), self.server_name)
        self.lock = threading.Lock()
        self.answering: dict[_Client, float] = {}  # -> when it is shut (time.monotonic())
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

    def start(self) -> LiveServer:
        self.thread = threading.Thread(target=self._loop, name="arraybench-live", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout=5)
        with self.lock:
            for client in self.answering:
                _shut(client.sock)
        self.server_close()

    # -- the loop thread: accepting, reading heads, ending overdue answers ---------------
    def _loop(self) -> None:
        pending: dict[_Client, None] = {}  # in the order they connected
        with selectors.DefaultSelector() as selector:
            self.socket.setblocking(False)
            selector.register(self.socket, selectors.EVENT_READ)
            try:
                while not self.stopping.is_set():
                    for key, _ in selector.select(self._wait(pending)):
                        if key.data is None:
                            self._accept(selector, pending)
                        else:
                            self._read(selector, pending, key.data)
                    self._expire(selector, pending)
            finally:
                for client in pending:
                    client.sock.close()

    def _wait(self, pending: dict[_Client, None]) -> float:
        first = next(iter(pending), None)  # the oldest head is the first due
        due = first.connected + HEAD_TIME_S - time.monotonic() if first else 0.5
        return min(0.5, max(0.0, due))

    def _accept(self, selector: selectors.BaseSelector, pending: dict[_Client, None]) -> None:
        for _ in range(64):  # a flood of connections does not keep the loop from the rest
            try:
                sock, address = self.socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of file descriptors (or the client already gone)
                if pending:  # room made: the listening socket stays readable, no busy loop
                    self._drop(selector, pending, next(iter(pending)))
                else:
                    self.stopping.wait(0.05)
                return
            sock.setblocking(False)
            client = _Client(sock, address, time.monotonic())
            if len(pending) >= MAX_PENDING:
                self._drop(selector, pending, next(iter(pending)))
            pending[client] = None
            selector.register(sock, selectors.EVENT_READ, client)

    def _read(self, selector: selectors.BaseSelector, pending: dict[_Client, None],
              client: _Client) -> None:  # fmt: skip
        try:
            data = client.sock.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        client.head += data
        if not data:
            self._drop(selector, pending, client)
        elif len(client.head) > MAX_HEAD:
            self._drop(selector, pending, client, TOO_BIG)
        elif client.complete():
            selector.unregister(client.sock)
            del pending[client]
            self._answer(client)

    def _answer(self, client: _Client) -> None:
        """A thread answers the request when a slot is free (for /metrics, one of those
        kept), else 503 at once."""
        with self.lock:
            free = MAX_CLIENTS - len(self.answering) - (0 if client.scrape() else SCRAPE_SLOTS)
            if free > 0:
                self.answering[client] = client.connected + REQUEST_TIME_S
        if free <= 0:
            _refuse(client.sock, BUSY)
            return
        client.sock.setblocking(True)
        try:
            threading.Thread(target=self._handle, args=(client,), daemon=True,
                             name="arraybench-live-client").start()  # fmt: skip
        except RuntimeError:  # no thread to be had (a process limit): as if all were busy
            with self.lock:
                del self.answering[client]
            _refuse(client.sock, BUSY)

    def _handle(self, client: _Client) -> None:
        try:
            _Handler((bytes(client.head), client.sock), client.address, self)
        except Exception:
            pass  # a client that went away or was shut: nothing to say on the run's console
        finally:
            with self.lock:  # not shut by the loop once closed: its descriptor may be reused
                del self.answering[client]
                _shut(client.sock)
                client.sock.close()

    def _expire(self, selector: selectors.BaseSelector, pending: dict[_Client, None]) -> None:
        now = time.monotonic()
        for client in [c for c in pending if now - c.connected > HEAD_TIME_S]:
            self._drop(selector, pending, client)
        with self.lock:
            for client, shut_at in self.answering.items():
                if now > shut_at:
                    _shut(client.sock)  # its thread's write or read ends at once

    def _drop(self, selector: selectors.BaseSelector, pending: dict[_Client, None],
              client: _Client, answer: bytes = b"") -> None:  # fmt: skip
        selector.unregister(client.sock)
        del pending[client]
        _refuse(client.sock, answer)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed by its client or by us
        sock.shutdown(socket.SHUT_RDWR)


def _refuse(sock: socket.socket, answer: bytes) -> None:
    """A short answer if the socket takes it now (never waiting), then closed."""
    try:
        if answer:
            sock.setblocking(False)
            sock.send(answer)
    except OSError:
        pass
    sock.close()


def serve(text: str, state: LiveState) -> LiveServer:
    """The live server on `--serve`'s address, started; ServeError when it cannot listen."""
    address = parse_serve(text)
    try:
        return LiveServer(address, state).start()
    except OSError as exc:
        raise ServeError(f"--serve {_shown(text)}: cannot listen on {address.host}:{address.port}: "
                         f"{exc.strerror or exc}", "choose another port") from None  # fmt: skip
