"""The array_monitor sources (monitor/arraypull.py) against a small HTTP server that answers
like Prometheus, garbage, an error, or too slowly: every failure is one ArrayPullError line,
within the timeout."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from arraybench.monitor.arraypull import ArrayPullError, parse_line, prometheus_samples

ANSWERS: dict[str, tuple[int, bytes, float]] = {}  # query -> (status, body, delay)


class _Prometheus(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        from urllib.parse import parse_qs, urlparse

        query = parse_qs(urlparse(self.path).query)["query"][0]
        status, body, delay = ANSWERS[query]
        time.sleep(delay)
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # the client that gave up on a slow answer: nothing to print


@contextmanager
def fake_prometheus() -> Iterator[str]:
    server = _Server(("127.0.0.1", 0), _Prometheus)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _matrix(*series: list[list[Any]]) -> bytes:
    result = [{"metric": {}, "values": values} for values in series]
    return json.dumps({"status": "success",
                       "data": {"resultType": "matrix", "result": result}}).encode()  # fmt: skip


def test_series_added_up_and_failures_are_one_line() -> None:
    ANSWERS.update({
        "two": (200, _matrix([[100, "10"], [101, "20"]], [[100, "1"], [101, "2"]]), 0.0),
        "cpu": (200, _matrix([[100, "30"]]), 0.0),
        "garbage": (200, b"<html>not prometheus</html>", 0.0),
        "nan": (200, _matrix([[100, "NaN"]]), 0.0),
        "bad": (400, b'{"status":"error","error":"parse error at char 3"}', 0.0),
        "slow": (200, _matrix([[100, "1"]]), 3.0),
    })  # fmt: skip
    with fake_prometheus() as url:
        found = prometheus_samples(url, {"iops": "two", "cpu": "cpu", "mbps": None}, 99, 101,
                                   1.0, 5.0)  # fmt: skip
        assert [(s.t, s.values) for s in found] == [
            (100.0, {"iops": 11.0, "cpu_pct": 30.0}), (101.0, {"iops": 22.0})]  # fmt: skip
        for query, said in (("garbage", "answered no query_range result"),
                            ("nan", "answered no query_range result"),
                            ("bad", "HTTP 400 from http://127.0.0.1:"),
                            ("slow", "took longer than 1 s")):  # fmt: skip
            started = time.monotonic()
            with pytest.raises(ArrayPullError) as caught:
                prometheus_samples(url, {"iops": query}, 99, 101, 1.0, 1.0)
            assert said in str(caught.value) and "\n" not in str(caught.value)
            assert time.monotonic() - started < 2.5  # the timeout holds, whatever the answer
        with pytest.raises(ArrayPullError, match="parse error at char 3"):
            prometheus_samples(url, {"iops": "bad"}, 99, 101, 1.0, 1.0)
    with pytest.raises(ArrayPullError, match="did not answer"):
        prometheus_samples(url, {"iops": "two"}, 99, 101, 1.0, 1.0)  # the server is gone


def test_command_lines_json_and_csv() -> None:
    header = ["time", "iops", "cpu"]
    assert parse_line("1795510865,20511,31", header, 0.0).values == {"iops": 20511.0,
                                                                     "cpu_pct": 31.0}  # fmt: skip
    sample = parse_line('{"iops": 5, "latency_us": 90, "note": "x"}', None, 42.0)
    assert sample.t == 42.0 and sample.values == {"iops": 5.0, "latency_us": 90.0}
    assert parse_line('{"time": "2026-11-24T09:01:05Z", "mbps": 1}', None, 0.0).t == 1795510865.0
    for bad in ("20511,31", '{"iops": "many"}', '{"note": 1}', "1,2,3,4"):
        with pytest.raises((ValueError, TypeError)):
            parse_line(bad, header if bad.count(",") == 3 else None, 0.0)
