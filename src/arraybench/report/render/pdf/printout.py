"""Static PNG and PDF of an HTML report through headless Chromium.

Chromium is the Debian package `chromium`; nothing is downloaded. Every page is opened from a
file:// URL with flags that keep Chromium offline: no background networking, no component or
safe-browsing updates, every host name resolving to nothing and every proxied request sent
to a closed local port. Each call starts its own Chromium in its own process group with a
throw-away profile, and kills that group when done or on timeout.

The PDF uses Chromium's own `--print-to-pdf`; the PNG speaks the DevTools protocol over
`--remote-debugging-pipe` (NUL-separated JSON on file descriptors 3 and 4), which measures the
full page height and reports errors by level (`tests/pageerrors.py` reads them).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import math
import os
import re
import select
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from arraybench.errors import ArraybenchError

CHROMIUM = "/usr/bin/chromium"
INSTALL_HINT = "apt-get install chromium"
TIMEOUT_S = 60.0
MAX_PNG_HEIGHT = 16_000  # px; a taller page is cut there (Chromium's capture limit is ~16k)
STDERR_TAIL = 5
# stderr lines of a headless Chromium without a desktop session that say nothing about a failure
NOISE = re.compile(r"dbus|DBus|Fontconfig|gcm|GPU|gpu|sandbox|InitializeSandbox", re.IGNORECASE)

OFFLINE_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication,"
    "CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions",
    "--metrics-recording-only",
    "--no-pings",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=http://127.0.0.1:9",
    "--mute-audio",
    "--hide-scrollbars",
)


def chromium_binary() -> str:
    """The Chromium executable: `chromium` on PATH, else /usr/bin/chromium."""
    found = shutil.which("chromium")
    if found:
        return found
    if os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    raise ArraybenchError("chromium is not installed (needed for PDF and PNG)", INSTALL_HINT)


def _file_url(html_path: Path) -> str:
    if not html_path.is_file():
        raise ArraybenchError(f"{html_path}: no such HTML file")
    return html_path.resolve().as_uri()


# ---------------------------------------------------------------- one Chromium process


class _Chromium:
    """A Chromium in its own process group and profile; optionally with the DevTools pipe."""

    def __init__(self, args: list[str], *, pipe: bool, timeout: float, what: str) -> None:
        binary = chromium_binary()
        self.what = what
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.tmp = tempfile.TemporaryDirectory(prefix="arraybench-chromium-")
        self.stderr_path = Path(self.tmp.name) / "stderr.txt"
        argv = [binary, *OFFLINE_FLAGS, f"--user-data-dir={self.tmp.name}/profile"]
        if pipe:
            argv.append("--remote-debugging-pipe")
        argv += args
        actions: list[tuple[Any, ...]] = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, str(self.stderr_path), os.O_WRONLY | os.O_CREAT, 0o600),
        ]
        self.cmd_w = self.out_r = -1
        child_fds: list[int] = []
        if pipe:
            cmd_r, self.cmd_w = os.pipe()
            self.out_r, out_w = os.pipe()
            # above any descriptor the child will use, so the dup2 to 3 and 4 never collide
            for fd in (cmd_r, out_w):
                child_fds.append(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10))
                os.close(fd)
            actions += [
                (os.POSIX_SPAWN_DUP2, child_fds[0], 3),
                (os.POSIX_SPAWN_DUP2, child_fds[1], 4),
            ]
        try:
            self.pid = os.posix_spawn(
                argv[0], argv, dict(os.environ), file_actions=actions, setpgroup=0
            )
        except OSError as exc:
            self._close_fds()
            self.tmp.cleanup()
            raise ArraybenchError(f"cannot start chromium: {exc}", INSTALL_HINT) from exc
        finally:
            for fd in child_fds:
                os.close(fd)
        self.returncode: int | None = None
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    # ------------------------------------------------------------ lifetime

    def __enter__(self) -> _Chromium:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def wait(self) -> int:
        """Wait for the browser to exit until the deadline; kill it and raise past that."""
        while self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
                break
            if self.remaining() <= 0:
                self._kill()
                raise self.error(f"chromium did not finish {self.what} within {self.timeout:g} s")
            time.sleep(0.05)
        return self.returncode

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)

    def close(self) -> None:
        if self.returncode is None and self.cmd_w >= 0:
            # ask politely first; the pipe closing also makes Chromium exit
            with contextlib.suppress(OSError):
                self._write({"id": -1, "method": "Browser.close"})
        self._close_fds()
        if self.returncode is None:
            self.deadline = min(self.deadline, time.monotonic() + 5)
            with contextlib.suppress(ArraybenchError):
                self.wait()
        self._kill()  # renderer or zygote children left behind, if any
        self.tmp.cleanup()

    def _close_fds(self) -> None:
        for fd in (self.cmd_w, self.out_r):
            if fd >= 0:
                os.close(fd)
        self.cmd_w = self.out_r = -1

    def stderr_tail(self) -> str:
        try:
            lines = self.stderr_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        useful = [line.strip() for line in lines if not NOISE.search(line)]
        return " | ".join(useful[-STDERR_TAIL:])

    def error(self, message: str) -> ArraybenchError:
        tail = self.stderr_tail()
        return ArraybenchError(
            f"{message}{f' (chromium: {tail})' if tail else ''}",
            "check that `chromium --headless` runs on this machine",
        )

    # ------------------------------------------------------------ DevTools protocol

    def _write(self, message: dict[str, Any]) -> None:
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self.cmd_w, data) :]

    def _read_message(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = self.remaining()
            if left <= 0:
                raise self.error(f"chromium did not finish {self.what} within {self.timeout:g} s")
            ready, _, _ = select.select([self.out_r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.out_r, 1 << 16)
            if not chunk:
                raise self.error(f"chromium exited while {self.what}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        """Send one command and return its result; events met meanwhile are kept in order."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._write(message)
        while True:
            reply = self._read_message()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise self.error(f"chromium refused {method}: {reply['error'].get('message')}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self._on_event(reply)

    def _on_event(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        if event["method"] == "Page.javascriptDialogOpening":  # alert() would block the page
            params = {"accept": True}
            session = event.get("sessionId")
            self._write(
                {
                    "id": -2,
                    "method": "Page.handleJavaScriptDialog",
                    "params": params,
                    "sessionId": session,
                }
            )

    def pump_until(self, done: Callable[[], bool], limit: float | None = None) -> None:
        """Read events until `done()` or `limit` seconds (None: the deadline, then raise)."""
        stop = None if limit is None else time.monotonic() + limit
        while not done():
            if stop is not None and time.monotonic() >= stop:
                return
            left = (
                self.remaining() if stop is None else min(self.remaining(), stop - time.monotonic())
            )
            if left <= 0 and stop is None:
                raise self.error(f"chromium did not finish {self.what} within {self.timeout:g} s")
            if b"\0" not in self._buffer:
                ready, _, _ = select.select([self.out_r], [], [], max(left, 0))
                if not ready:
                    continue
            message = self._read_message()
            if "method" in message:
                self._on_event(message)

    def open_page(self, url: str, width: int = 1280, height: int = 900) -> str:
        """A new tab at `url`, loaded; returns its session id. Runtime and Log are enabled."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session: str = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=session)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        self.navigate(session, url)
        return session

    def navigate(self, session: str, url: str) -> None:
        """Open `url` in the tab of `session` and wait for its load event: a tab used again
        keeps its renderer process (a new tab per page starts one)."""
        start = len(self.events)
        nav = self.send("Page.navigate", {"url": url}, session=session)
        if nav.get("errorText"):
            raise self.error(f"chromium could not open {url}: {nav['errorText']}")

        def loaded() -> bool:
            return any(
                e["method"] == "Page.loadEventFired" and e.get("sessionId") == session
                for e in self.events[start:]
            )

        self.pump_until(loaded)


# ---------------------------------------------------------------- public API


FOOTER = (
    '<div style="width:100%;font-size:8px;color:#6b7280;padding:0 12mm;'
    'font-family:system-ui,sans-serif;display:flex;justify-content:space-between">'
    '<span class="title"></span><span>page <span class="pageNumber"></span> of '
    '<span class="totalPages"></span></span></div>'
)


def write_pdf(html_path: Path, pdf_path: Path, timeout: float = TIMEOUT_S) -> None:
    """Print the HTML page to an A4 PDF (the page's print CSS) through the DevTools protocol:
    page numbers in the footer ("page 3 of 17"), a document outline (PDF bookmarks) from the
    headings, and the page of each section in the printed contents list: printed once to
    learn where the sections fall, the numbers put into the loaded page, printed again (a
    second Chromium cost 1-1.5 CPU-s, loading the page again in a new tab 0.5-1)."""
    with _Chromium([], pipe=True, timeout=2 * timeout, what=f"printing {html_path}") as c:
        session = c.open_page(_file_url(html_path))
        c.send("Emulation.setEmulatedMedia", {"media": "print"}, session=session)
        pdf = _print_pdf(c, session, html_path)
        pages = outline_pages(pdf)
        if pages and _number_contents(c, session, pages):
            second = _print_pdf(c, session, html_path)
            if outline_pages(second) == pages:  # the numbers did not move the sections
                pdf = second
    pdf_path.parent.mkdir(parents=True, exist_ok=True)
    pdf_path.write_bytes(pdf)


def _print_pdf(c: _Chromium, session: str, html_path: Path) -> bytes:
    params = {
        "printBackground": True,
        "preferCSSPageSize": True,
        "displayHeaderFooter": True,
        "headerTemplate": "<span></span>",
        "footerTemplate": FOOTER,
        "generateDocumentOutline": True,
        "generateTaggedPDF": True,
        "transferMode": "ReturnAsBase64",
    }
    data = c.send("Page.printToPDF", params, session=session).get("data")
    if not data:
        raise c.error(f"chromium could not print {html_path} to PDF")
    return base64.b64decode(data)


# each entry of the printed contents list gets the page of its section: a heading
# "Points (25)" in the outline is the entry "Points"; returns how many were numbered
NUMBER_CONTENTS = """(function (pages) {
  var numbered = 0;
  document.querySelectorAll("nav.contents li").forEach(function (li) {
    var a = li.firstElementChild;
    if (!a || a.tagName !== "A" || li.children.length !== 1) return;
    var shown = a.textContent, page = null;
    for (var i = 0; i < pages.length && page === null; i++) {
      var t = pages[i][0];
      if (t === shown || t.indexOf(shown + " (") === 0) page = pages[i][1];
    }
    if (page === null) return;
    var pg = document.createElement("span");
    pg.className = "pg";
    pg.textContent = String(page);
    li.appendChild(pg);
    numbered++;
  });
  return numbered;
})"""


def _number_contents(c: _Chromium, session: str, pages: dict[str, int]) -> int:
    """The contents list of the loaded page numbered (NUMBER_CONTENTS); how many entries."""
    expression = f"{NUMBER_CONTENTS}({json.dumps(list(pages.items()))})"
    got = c.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                 session=session)  # fmt: skip
    value = got.get("result", {}).get("value")
    return value if isinstance(value, int) else 0


_OBJ = re.compile(rb"(\d+) 0 obj\s*(.*?)endobj", re.S)
_REF = re.compile(rb"(\d+) 0 R")


def _pdf_text(raw: bytes) -> str:
    """A PDF string: `(literal)` or `<FEFF...>` (UTF-16)."""
    if raw.startswith(b"<"):
        data = bytes.fromhex(raw[1:-1].decode("ascii"))
        return data[2:].decode("utf-16-be") if data[:2] == b"\xfe\xff" else data.decode("latin-1")
    text = raw[1:-1].replace(b"\\(", b"(").replace(b"\\)", b")").replace(b"\\\\", b"\\")
    return text.decode("latin-1")


def outline_pages(pdf: bytes) -> dict[str, int]:
    """Outline title -> 1-based page, from the bookmarks Chromium writes; {} if unreadable."""
    objects = {int(m.group(1)): m.group(2) for m in _OBJ.finditer(pdf)}
    catalog = next((o for o in objects.values() if b"/Type /Catalog" in o), None)
    root = re.search(rb"/Pages (\d+) 0 R", catalog or b"")
    if root is None:
        return {}
    order: list[int] = []

    def walk(number: int, depth: int = 0) -> None:
        body = objects.get(number, b"")
        kids = re.search(rb"/Kids \[(.*?)\]", body, re.S)
        if b"/Type /Pages" in body and kids and depth < 32:
            for ref in _REF.findall(kids.group(1)):
                walk(int(ref), depth + 1)
        elif b"/Type /Page" in body:
            order.append(number)

    walk(int(root.group(1)))
    page = {number: i + 1 for i, number in enumerate(order)}
    found: dict[str, int] = {}
    for body in objects.values():
        title = re.search(rb"/Title (\(.*?(?<!\\)\)|<[0-9A-Fa-f]*>)", body, re.S)
        dest = re.search(rb"/Dest \[(\d+) 0 R", body)
        if title and dest and int(dest.group(1)) in page:
            found.setdefault(_pdf_text(title.group(1)), page[int(dest.group(1))])
    return found


def write_png(
    html_path: Path, png_path: Path, width: int = 1400, timeout: float = TIMEOUT_S
) -> None:
    """A screenshot of the whole page, `width` CSS px wide (cut at MAX_PNG_HEIGHT px tall)."""
    url = _file_url(html_path)
    with _Chromium([], pipe=True, timeout=timeout, what=f"capturing {html_path}") as c:
        session = c.open_page(url, width=width)
        metrics = c.send("Page.getLayoutMetrics", session=session)
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        height = min(max(math.ceil(size["height"]), 1), MAX_PNG_HEIGHT)
        c.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        shot = c.send(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
            },
            session=session,
        )
    png_path.parent.mkdir(parents=True, exist_ok=True)
    png_path.write_bytes(base64.b64decode(shot["data"]))
