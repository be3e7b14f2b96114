"""`run --serve [ADDR:]PORT`: the live page, its JSON and `/metrics`, read-only.

Only GET on four fixed paths (`/`, `/live.json`, `/charts`, `/metrics`); anything else is 404 (other
methods: 501, from the standard handler). One thread per client with a socket timeout, so a
client that sends slowly or never reads holds only its own thread until the timeout, and at
most MAX_CLIENTS at once (more are closed at once). The handlers only read a copy of the
snapshot, taken under the state's lock; the run's thread never waits on a client.
Loopback unless an address is given; the all-interfaces addresses are refused, as for fio's
servers (`hosts/address.py`).
"""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from arraybench.errors import ArraybenchError
from arraybench.hosts.address import check_address, is_wildcard, legacy_ipv4
from arraybench.live.charts import charts_html
from arraybench.live.metrics import CONTENT_TYPE, exposition
from arraybench.live.page import live_page
from arraybench.live.state import LiveState

CLIENT_TIMEOUT_S = 5.0
MAX_CLIENTS = 32
LOOPBACK = "127.0.0.1"
PAGE_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            "connect-src 'self'; img-src data:")  # fmt: skip


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


def parse_serve(text: str) -> ServeAddress:
    """`PORT`, `ADDR:PORT` or `[IPv6]:PORT`; loopback when no address is given."""
    where = f"--serve {text}"
    host, sep, port = text.rpartition(":")
    if not sep:
        host = LOOPBACK
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not port.isdigit() or int(port) > 65535:
        raise ServeError(f"{where}: {port!r} is not a port (0 to 65535)",
                         "e.g. --serve 9000 or --serve 127.0.0.1:9000")  # fmt: skip
    if not host or _wildcard(host):
        raise ServeError(f"{where}: would listen on every interface",
                         "name one address, e.g. --serve 10.0.0.5:9000")  # fmt: skip
    check_address(host, where)  # blanks, legacy spellings, names resolving to the wildcard
    return ServeAddress(host, int(port))


class _Handler(BaseHTTPRequestHandler):
    server: LiveServer
    timeout = CLIENT_TIMEOUT_S  # on every read and write of the client's socket
    server_version = "arraybench-live"
    sys_version = ""

    def do_GET(self) -> None:
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


class LiveServer(ThreadingHTTPServer):
    daemon_threads = True  # a client stuck past the run never keeps the process alive
    allow_reuse_address = True

    def __init__(self, address: ServeAddress, state: LiveState) -> None:
        self.address_family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
        self.state = state
        self.slots = threading.BoundedSemaphore(MAX_CLIENTS)
        super().__init__((address.host, address.port), _Handler)
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)  # too many clients at once: this one is closed
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that went away or timed out: nothing to say on the run's console

    def start(self) -> LiveServer:
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.5},
                                       name="arraybench-live", daemon=True)  # fmt: skip
        self.thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def serve(text: str, state: LiveState) -> LiveServer:
    """The live server on `--serve`'s address, started; ServeError when it cannot listen."""
    address = parse_serve(text)
    try:
        return LiveServer(address, state).start()
    except OSError as exc:
        raise ServeError(f"--serve {text}: cannot listen on {address.host}:{address.port}: "
                         f"{exc.strerror or exc}", "choose another port") from None  # fmt: skip
