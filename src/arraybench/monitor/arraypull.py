"""The array's own counters pulled while a run runs (plan `array_monitor:`): Prometheus'
HTTP API (`/api/v1/query_range`) over a point's window, and a command that prints one sample
per line. Both give `ArraySample`s on the run's clock, as `attach` reads from a CSV.

Every failure is an `ArrayPullError` with one line saying what went wrong (refused, timed out,
not Prometheus' JSON, a value that is no number): the caller records it and goes on.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Mapping, Sequence
from typing import IO, Any

from arraybench.monitor.arrayside import ArraySample, parse_time

FIELD_OF_QUERY = {"iops": "iops", "mbps": "mbps", "latency_us": "latency_us", "cpu": "cpu_pct"}
MAX_ANSWER = 16 << 20  # bytes read of one answer at most
KEPT_SAMPLES = 200_000  # of a command, in memory (a day at 1 s is 86,400)
MAX_LINE = 4096


class ArrayPullError(Exception):
    """One line: why a source gave nothing this time."""


def _finite(value: object) -> float:
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        raise ValueError(f"{value!r} is not finite")
    return number


def _said(exc: urllib.error.HTTPError) -> str:
    """Prometheus' own error text (a bad query), when it gave one."""
    try:
        error = json.loads(exc.read(4096)).get("error")
    except (OSError, ValueError, AttributeError):
        return ""
    return f": {str(error)[:200]}" if error else ""


def query_range(
    url: str, query: str, start: float, end: float, step: float, timeout: float
) -> dict[int, float]:
    """Second -> value of `query` over [start, end] (several series are added up)."""
    args = urllib.parse.urlencode({"query": query, "start": f"{start:.3f}", "end": f"{end:.3f}",
                                   "step": f"{step:g}",  # seconds; a duration takes no "1.5s"
                                   "timeout": f"{max(1, int(timeout * 1000))}ms"})  # fmt: skip
    address = f"{url.rstrip('/')}/api/v1/query_range?{args}"
    try:
        with urllib.request.urlopen(address, timeout=timeout) as answer:
            body = answer.read(MAX_ANSWER)
    except urllib.error.HTTPError as exc:
        raise ArrayPullError(f"HTTP {exc.code} from {url}{_said(exc)}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ArrayPullError(f"{url} did not answer ({reason})") from None
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
        raise ArrayPullError(f"{url} answered no query_range result ({exc})") from None
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
            raise ArrayPullError(f"{url} took longer than {timeout:g} s")
        for t, v in query_range(url, query, start, end, step, left).items():
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
        raise ValueError("no iops, mbps, latency_us or cpu value")
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
        self.proc: subprocess.Popen[str] | None = None
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True, errors="replace", start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            self.failure = f"{self.argv[0]} did not start ({exc.strerror or exc})"
            return
        self.thread = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True,
                                       name="arraybench-array-command")  # fmt: skip
        self.thread.start()

    def _read(self, stream: IO[str] | None) -> None:
        header: list[str] | None = None
        for line in stream or ():
            line = line[:MAX_LINE]
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
                    self.first_garbage = self.first_garbage or f"{line.strip()[:80]!r}: {exc}"
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
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                self.proc.kill()
            self.proc.wait(timeout=2)
