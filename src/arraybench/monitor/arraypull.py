"""The array's own counters pulled while a run runs (plan `array_monitor:`): Prometheus'
HTTP API (`/api/v1/query_range`) over a point's window, and a command that prints one sample
per line. Both give `ArraySample`s on the run's clock, as `attach` reads from a CSV.

Every failure is an `ArrayPullError` with one line saying what went wrong (refused, timed out,
not Prometheus' JSON, a value that is no number): the caller records it and goes on. Each
answer is bounded in time as a whole (a server that drips a byte a second is cut at the
timeout, not kept by each byte) and in size, each line of a command in length; a URL's
`user:password@` is sent as HTTP basic authentication and never said (`shown_url`).
"""

from __future__ import annotations

import base64
import contextlib
import csv
import http.client
import json
import math
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from arraybench.monitor.arrayside import ArraySample, parse_time
from arraybench.system.procs import living_in_group

FIELD_OF_QUERY = {"iops": "iops", "mbps": "mbps", "latency_us": "latency_us", "cpu": "cpu_pct",
                  "reduction": "reduction_ratio"}  # fmt: skip
MAX_ANSWER = 16 << 20  # bytes read of one answer at most
KEPT_SAMPLES = 200_000  # of a command, in memory (a day at 1 s is 86,400)
MAX_LINE = 4096  # bytes of a command's line read at most; the rest of a longer one skipped
STOP_WAIT_S = 2.0  # for a command's process group to end on SIGTERM, then SIGKILL


class ArrayPullError(Exception):
    """One line: why a source gave nothing this time."""


def _finite(value: object) -> float:
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        raise ValueError(f"{value!r} is not finite")
    return number


@dataclass(frozen=True)
class PromUrl:
    """A Prometheus base URL split for use: `shown` without credentials (what messages,
    findings and reports say), `authorization` the basic-auth header its `user:password@`
    makes (None without)."""

    scheme: str
    host: str
    port: int | None
    path: str
    shown: str
    authorization: str | None


def parse_url(url: str) -> PromUrl:
    """ValueError (saying no credential) when `url` is no http(s) URL with a host."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname
    port = parts.port  # ValueError when out of range or no number
    if parts.scheme not in ("http", "https") or not host:
        raise ValueError("not an http:// or https:// URL with a host")
    where = f"[{host}]" if ":" in host else host
    netloc = f"{where}:{port}" if port is not None else where
    shown = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    authorization = None
    if parts.username is not None or parts.password is not None:
        pair = f"{urllib.parse.unquote(parts.username or '')}:"
        pair += urllib.parse.unquote(parts.password or "")
        authorization = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    return PromUrl(parts.scheme, host, port, parts.path.rstrip("/"), shown, authorization)


def shown_url(url: str) -> str:
    """`url` as it may be said: its credentials left out."""
    try:
        return parse_url(url).shown
    except ValueError:
        return "the array_monitor URL"  # cannot tell what in it is a password


def _said(body: bytes) -> str:
    """Prometheus' own error text (a bad query), when it gave one."""
    try:
        error = json.loads(body[:4096]).get("error")
    except (ValueError, AttributeError):
        return ""
    return f": {str(error)[:200]}" if error else ""


def _fetch(where: PromUrl, target: str, timeout: float) -> tuple[int, bytes]:
    """(status, body) of GET `target`, the whole exchange within `timeout` seconds: the
    socket's own timeout is per read, so a thread makes the request and is cut off (its
    socket shut) at the deadline."""
    kind = http.client.HTTPSConnection if where.scheme == "https" else http.client.HTTPConnection
    connection = kind(where.host, where.port, timeout=timeout)
    headers = {"Accept": "application/json", "User-Agent": "arraybench"}
    if where.authorization:
        headers["Authorization"] = where.authorization
    got: list[tuple[int, bytes] | BaseException] = []

    def exchange() -> None:
        try:
            connection.request("GET", target, headers=headers)
            answer = connection.getresponse()
            got.append((answer.status, answer.read(MAX_ANSWER + 1)))
        except BaseException as exc:  # said by the caller's thread
            got.append(exc)

    worker = threading.Thread(target=exchange, name="arraybench-array-fetch", daemon=True)
    worker.start()
    worker.join(timeout)
    if not got:
        sock = connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # the thread's read ends now
        raise ArrayPullError(f"{where.shown} took longer than {timeout:g} s")
    connection.close()
    result = got[0]
    if isinstance(result, BaseException):
        reason = getattr(result, "strerror", None) or type(result).__name__
        if isinstance(result, TimeoutError):
            reason = f"no answer within {timeout:g} s"
        raise ArrayPullError(f"{where.shown} did not answer ({reason})")
    return result


def query_range(
    url: str, query: str, start: float, end: float, step: float, timeout: float
) -> dict[int, float]:
    """Second -> value of `query` over [start, end] (several series are added up)."""
    try:
        where = parse_url(url)
    except ValueError as exc:
        raise ArrayPullError(f"{shown_url(url)}: {exc}") from None
    args = urllib.parse.urlencode({"query": query, "start": f"{start:.3f}", "end": f"{end:.3f}",
                                   "step": f"{step:g}",  # seconds; a duration takes no "1.5s"
                                   "timeout": f"{max(1, int(timeout * 1000))}ms"})  # fmt: skip
    status, body = _fetch(where, f"{where.path}/api/v1/query_range?{args}", timeout)
    if status != 200:  # a redirect is not followed: its target could be anywhere
        raise ArrayPullError(f"HTTP {status} from {where.shown}{_said(body)}")
    if len(body) > MAX_ANSWER:
        raise ArrayPullError(f"{where.shown} answered more than {MAX_ANSWER >> 20} MiB")
    try:
        data = json.loads(body)
        if data.get("status") != "success":
            raise ValueError(data.get("error") or "status is not success")
        totals: dict[int, float] = {}
        for series in data["data"]["result"]:
            for stamp, value in series["values"]:
                t = round(float(stamp))
                totals[t] = totals.get(t, 0.0) + _finite(value)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ArrayPullError(f"{where.shown} answered no query_range result ({exc})") from None
    return totals


def prometheus_samples(
    url: str, queries: Mapping[str, str | None], start: float, end: float, step: float,
    timeout: float,
) -> list[ArraySample]:  # fmt: skip
    """The array's samples over [start, end], one per step, with every query's value."""
    values: dict[int, dict[str, float]] = {}
    deadline = time.monotonic() + timeout  # all queries of a point together: one timeout
    for name, query in queries.items():
        if not query:
            continue
        left = deadline - time.monotonic()
        if left <= 0:
            raise ArrayPullError(f"{shown_url(url)} took longer than {timeout:g} s")
        try:
            found = query_range(url, query, start, end, step, left)
        except ArrayPullError:
            if time.monotonic() >= deadline:  # said with the plan's timeout, not what was left
                raise ArrayPullError(f"{shown_url(url)} took longer than {timeout:g} s") from None
            raise
        for t, v in found.items():
            values.setdefault(t, {})[FIELD_OF_QUERY[name]] = v
    return [ArraySample(float(t), v) for t, v in sorted(values.items())]


def parse_line(line: str, header: Sequence[str] | None, now: float) -> ArraySample:
    """One JSON object or CSV row (after `header`) as a sample; no time: `now`."""
    text = line.strip()
    if text.startswith("{"):
        data: dict[str, Any] = json.loads(text)
    elif header is not None:
        row = next(csv.reader([text]))
        if len(row) != len(header):
            raise ValueError(f"{len(row)} fields, the header has {len(header)}")
        data = dict(zip(header, row, strict=True))
    else:
        raise ValueError("neither a JSON object nor a CSV row after a header line")
    stamp = data.pop("time", data.pop("t", None))
    t = parse_time(str(stamp)) if stamp not in (None, "") else now
    known = set(FIELD_OF_QUERY.values())
    values = {FIELD_OF_QUERY.get(k, k): _finite(v) for k, v in data.items()
              if FIELD_OF_QUERY.get(k, k) in known and v not in ("", None)}  # fmt: skip
    if not values:
        raise ValueError("no iops, mbps, latency_us, cpu or reduction value")
    return ArraySample(t, values)


class CommandSource:
    """A command that prints one sample per line, for the whole run: read in a thread of its
    own (its output never waits on the run), kept in memory, asked per point's window."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.argv = list(argv)
        self.samples: deque[ArraySample] = deque(maxlen=KEPT_SAMPLES)
        self.lock = threading.Lock()
        self.garbage = 0
        self.first_garbage = ""
        self.failure: str | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        try:  # its own process group: ended whole, with what it started (`stop`)
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            self.failure = f"{self.argv[0]} did not start ({exc.strerror or exc})"
            return
        self.thread = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True,
                                       name="arraybench-array-command")  # fmt: skip
        self.thread.start()

    def _read(self, stream: IO[bytes] | None) -> None:
        header: list[str] | None = None
        for line in _lines(stream):
            if not line.strip():
                continue
            if header is None and not line.lstrip().startswith("{") and "time" in line:
                header = [h.strip() for h in next(csv.reader([line.strip()]))]
                continue
            try:
                sample = parse_line(line, header, time.time())
            except (ValueError, TypeError) as exc:
                with self.lock:
                    self.garbage += 1
                    shown = repr(line.strip()[:80])[:80]  # control bytes escaped, then cut
                    self.first_garbage = self.first_garbage or f"{shown}: {exc}"
                continue
            with self.lock:
                self.samples.append(sample)

    def window(self, start: float, end: float) -> list[ArraySample]:
        """The samples of [start, end]; ArrayPullError when the command ended or printed
        only garbage there."""
        with self.lock:
            found = [s for s in self.samples if start <= s.t <= end]
            garbage, first = self.garbage, self.first_garbage
        if self.failure:
            raise ArrayPullError(self.failure)
        if not found:
            ended = self.proc is not None and self.proc.poll() is not None
            why = f"it ended with code {self.proc.returncode}" if ended and self.proc else ""
            why = why or (f"{garbage} unreadable line(s), first {first}" if garbage else "")
            raise ArrayPullError(f"{self.argv[0]} gave no sample ({why or 'none printed'})")
        return found

    def stop(self) -> None:
        """The command's whole process group ended (SIGTERM, then SIGKILL after STOP_WAIT_S),
        also what it started when itself has already ended: nothing it ran outlives the run."""
        if self.proc is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if not _signal_group(self.proc.pid, sig):
                break  # no process left in the group
            deadline = time.monotonic() + STOP_WAIT_S
            while time.monotonic() < deadline and _group_alive(self.proc):
                time.sleep(0.05)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=STOP_WAIT_S)
        self.thread.join(timeout=STOP_WAIT_S)  # at the pipe's end once the group is gone
        if self.proc.stdout is not None and not self.thread.is_alive():
            self.proc.stdout.close()  # (one that left the group may still hold it: kept)


def _lines(stream: IO[bytes] | None) -> Iterator[str]:
    """The lines of `stream`, each cut at MAX_LINE bytes (the rest of a longer line read
    and dropped: an endless line costs no memory), decoded with replacement."""
    if stream is None:
        return
    with contextlib.suppress(OSError, ValueError):  # the pipe closed under us: its end
        yield from _bounded_lines(stream)


def _bounded_lines(stream: IO[bytes]) -> Iterator[str]:
    while chunk := stream.readline(MAX_LINE):
        line = chunk
        while not chunk.endswith(b"\n") and (chunk := stream.readline(MAX_LINE)):
            pass  # the rest of an overlong line
        yield line.decode(errors="replace")


def _signal_group(pgid: int, sig: signal.Signals) -> bool:
    """False when no process of the group is left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # a member changed its user: nothing more we may do, nor wait for
    return True


def _group_alive(proc: subprocess.Popen[bytes]) -> bool:
    proc.poll()  # the leader reaped when it ended, so it is not counted as a zombie
    try:
        os.killpg(proc.pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    # zombies count for killpg: members left only as zombies (orphans not yet reaped by
    # init) are an ended group, not STOP_WAIT_S more of waiting before SIGKILL
    return bool(living_in_group(proc.pid))
