"""A host's clock offset against the controller, measured through fio itself (no SSH).

fio 3.33's client output carries no server timestamp (no ``timestamp_ms`` per server, no
``job_start`` before fio 3.36); the server's wall clock shows only in interval logs written
with ``log_unix_epoch=1``. So the check sends the server a small ping-pong job on fio's ``net``
engine: the server connects back to a TCP echo the controller listens on, sends ``PINGS``
64-byte messages (``pingpong=1``: each write waits for its echo; ``thinktime`` spreads them
over ~15 ms so their log stamps fall on different millisecond phases) and logs each one's
completion time (server clock, ms) and total latency (ns) in a per-I/O lat log. The controller
stamps every message when it arrives and just before it echoes it.

More: docs/internals.md, `hosts/clock.py`."""

from __future__ import annotations

import contextlib
import socket
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from arraybench.engines.fio.logs import parse_interval_log
from arraybench.hosts.probe import ClientRun, run_client_job

PINGS = 40
THINKTIME_US = 373  # not a divisor of 1000: successive pings sample different ms phases
MESSAGE = 64
STAMP_SPAN_MS = 2.0  # fio's log stamp is up to 2 ms early (epoch and elapsed both truncated)
SLACK_MS = 0.05  # fio reads its monotonic and realtime clocks a few us apart
LOG_NAME = "abclock"
ACCEPT_TIMEOUT_S = 15.0


class ClockCheckError(Exception):
    """The clock check could not be made; the message says why, in one line (internal)."""


@dataclass(frozen=True)
class ClockEstimate:
    offset_ms: float  # server clock - controller clock
    uncertainty_ms: float  # half the width of the interval the offset is known to lie in
    samples: int
    consistent: bool  # False: the bounds contradict each other (a clock step?)


def estimate_offset(
    stamps_ms: list[int], lat_ns: list[float], recv_ns: list[int], echo_ns: list[int]
) -> ClockEstimate:
    """Offset from paired samples (see the module docstring); all lists in message order."""
    if not stamps_ms or not len(stamps_ms) == len(lat_ns) == len(recv_ns) == len(echo_ns):
        raise ValueError("clock samples must be non-empty lists of one length")
    samples = list(zip(stamps_ms, lat_ns, recv_ns, echo_ns, strict=True))
    lows = [s - lat / 1e6 - r / 1e6 - SLACK_MS for s, lat, r, _ in samples]
    highs = [s + STAMP_SPAN_MS - e / 1e6 + SLACK_MS for s, _, _, e in samples]
    low, high = max(lows), min(highs)
    if low <= high:
        return ClockEstimate((low + high) / 2, (high - low) / 2, len(stamps_ms), True)
    # Contradictory bounds: report the middle of all per-sample intervals, honestly wide.
    mids = sorted((lo + hi) / 2 for lo, hi in zip(lows, highs, strict=True))
    middle = mids[len(mids) // 2]
    return ClockEstimate(middle, max(low - middle, middle - high), len(mids), False)


def local_address_towards(address: str, port: int) -> str:
    """The controller's source address on the route to ``address`` (no packet is sent)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        probe.connect((address, port))
        return str(probe.getsockname()[0])


class _Echo:
    """A one-connection TCP echo that stamps each fixed-size message (time.time_ns)."""

    def __init__(self, bind_address: str) -> None:
        family = socket.AF_INET6 if ":" in bind_address else socket.AF_INET
        self.listener = socket.socket(family, socket.SOCK_STREAM)
        self.listener.bind((bind_address, 0))
        self.listener.listen(1)
        self.listener.settimeout(ACCEPT_TIMEOUT_S)
        self.port = int(self.listener.getsockname()[1])
        self.recv_ns: list[int] = []
        self.echo_ns: list[int] = []
        self.error: str | None = None
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> _Echo:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_listening()
        self._thread.join(timeout=5)

    def stop_listening(self) -> None:
        """Wake a pending accept() (shutdown does on Linux; close alone may not)."""
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()

    def _serve(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError as exc:
            self.error = f"the host did not connect back to the controller ({exc})"
            return
        with conn:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(ACCEPT_TIMEOUT_S)
            self._echo(conn)

    def _echo(self, conn: socket.socket) -> None:
        pending = b""
        while True:
            try:
                data = conn.recv(65536)
            except OSError as exc:
                self.error = f"clock echo connection failed ({exc})"
                return
            arrived = time.time_ns()
            if not data:
                return
            pending += data
            while len(pending) >= MESSAGE:
                self.recv_ns.append(arrived)
                self.echo_ns.append(time.time_ns())
                conn.sendall(pending[:MESSAGE])
                pending = pending[MESSAGE:]


def clock_job(controller: str, port: int) -> str:
    return (
        f"[{LOG_NAME}]\n"
        "ioengine=net\nprotocol=tcp\n"
        f"hostname={controller}\nport={port}\n"
        "rw=write\npingpong=1\nnodelay=1\n"
        f"bs={MESSAGE}\nsize={MESSAGE * PINGS}\nthinktime={THINKTIME_US}\n"
        f"write_lat_log={LOG_NAME}\nlog_unix_epoch=1\n"
    )


@dataclass(frozen=True)
class ClockCheck:
    """The estimate, or why there is none, and fio's client output (it holds the probe line)."""

    estimate: ClockEstimate | None
    problem: str | None
    output: str


def measure_clock_offset(
    binary: str, address: str, port: int, timeout_s: float = 20.0
) -> ClockCheck:
    """Run the ping-pong job on the fio server at address:port."""
    controller = local_address_towards(address, port)
    with tempfile.TemporaryDirectory(prefix="arraybench-clock-") as tmp, _Echo(controller) as echo:
        run = run_client_job(
            binary, address, port, clock_job(controller, echo.port), Path(tmp), timeout_s
        )
        echo.stop_listening()  # the host never connected back, if it has not yet
        problem: str | None = None
        try:
            stamps, lats = _log_rows(Path(tmp), run)
        except ClockCheckError as exc:
            stamps, lats, problem = [], [], str(exc)
    if echo.error and not echo.recv_ns:
        problem = f"{echo.error} at {controller}:{echo.port}"
    elif problem is None and len(echo.recv_ns) != len(stamps):
        problem = f"{len(echo.recv_ns)} echoes but {len(stamps)} fio log rows"
    if problem is not None:
        return ClockCheck(None, problem, run.output)
    return ClockCheck(estimate_offset(stamps, lats, echo.recv_ns, echo.echo_ns), None, run.output)


def _log_rows(folder: Path, run: ClientRun) -> tuple[list[int], list[float]]:
    logs = sorted(folder.glob(f"{LOG_NAME}_lat.*.log*"))
    if run.returncode is None:
        raise ClockCheckError(f"the clock check job ran past {run.elapsed_s:.0f} s and was killed")
    if not logs:
        last = run.output.strip().splitlines()[-1:] or ["no output"]
        raise ClockCheckError(f"the clock check job wrote no latency log (fio said: {last[0]})")
    rows = [s for s in parse_interval_log(logs[0]) if s.ddir == 1]
    return [s.time_ms for s in rows], [s.value for s in rows]
