"""The array's own data-reduction ratio beside arraybench's: a small exporter serving
`array_data_reduction_ratio` (the "array"), scraped by a real Prometheus, pulled by a plan's
`array_monitor: {prometheus: {queries: {reduction: ...}}}` over each point, ends up in
`show --format json` (`data.array_reported`) and in the report's data-reduction table beside
the requested and achieved ratios, in HTML, Markdown and Excel."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import main_cli, needs_fio
from tests.prom import prometheus, query_range

pytestmark = [needs_fio, pytest.mark.slow]
needs_prometheus = pytest.mark.skipif(shutil.which("prometheus") is None,
                                      reason="prometheus is not installed")  # fmt: skip
RATIO = 2.37  # what the "array" says it reduces the data by


class _Metrics(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"array_data_reduction_ratio {RATIO}\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def reduction_exporter() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Metrics)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _scraped(base: str) -> None:
    import time

    for _ in range(60):
        now = time.time()
        if len(query_range(base, "array_data_reduction_ratio", now - 3, now)) >= 3:
            return
        time.sleep(0.5)
    pytest.fail("prometheus never scraped the exporter")


@needs_prometheus
def test_the_arrays_reduction_ratio_is_reported_beside_the_achieved(tmp_path: Path) -> None:
    with reduction_exporter() as exporter:
        targets = tmp_path / "targets.json"
        targets.write_text(json.dumps([{"targets": [exporter]}]))
        with prometheus(tmp_path, targets) as (base, _):
            _scraped(base)
            plan = tmp_path / "plan.yaml"
            plan.write_text(
                "name: reduction\n"
                f"targets:\n  - {{path: {tmp_path / 'target.dat'}, size: 16m}}\n"
                "timing: {ramp: 0s, duration: 3s}\n"
                "load: {workers: [1], iodepth: [2]}\n"
                "data: {compression: 2.0, dedupe: 2.0}\n"
                f"array_monitor:\n  prometheus:\n    url: {base}\n    lag: 2s\n"
                "    queries: {reduction: array_data_reduction_ratio}\n"
                "workloads:\n  - {name: fill, pattern: sequential, bs: 8k, read: 0}\n"
            )
            results = tmp_path / "res"
            done = main_cli("run", str(plan), "--results", str(results))
            assert done.returncode == 0, done.stderr
    shown = json.loads(main_cli("show", "latest", "--results", str(results),
                                "--format", "json").stdout)  # fmt: skip
    data = shown["points"][0]["data"]
    assert data["array_reported"] == {"reduction": RATIO}
    assert data["achieved"]["compression"] == pytest.approx(2.0, rel=0.10)
    outputs = [tmp_path / f"r.{ext}" for ext in ("html", "md", "xlsx")]
    report = main_cli("report", "latest", "--results", str(results),
                      *(a for p in outputs for a in ("-o", str(p))))  # fmt: skip
    assert report.returncode == 0, report.stderr
    markdown = outputs[1].read_text()
    assert "Data reduction: requested, achieved, reported" in markdown
    [row] = [x for x in markdown.splitlines() if x.startswith("| fill") and "dedupe" in x]
    assert "2.00:1 compression, 2.00:1 dedupe at 8 KiB" in row and f"{RATIO:.2f}:1" in row
    html = outputs[0].read_text()
    assert "Data reduction: requested, achieved, reported" in html and f"{RATIO:.2f}:1" in html
    assert outputs[2].stat().st_size > 0
