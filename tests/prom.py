"""A real Prometheus (Debian's `prometheus`) for the live tests: started on a free loopback
port with a 1-second scrape of what a file_sd file names, stopped afterwards."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def node_exporter(*collector: str) -> Iterator[str]:
    """A real prometheus-node-exporter with only the collector options given (its defaults
    off), on a free loopback port; yields its `host:port`."""
    port = free_port()
    proc = subprocess.Popen(
        ["prometheus-node-exporter", "--collector.disable-defaults", *collector,
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@contextmanager
def prometheus(tmp_path: Path, targets: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real Prometheus scraping every second what `targets` (file_sd) names."""
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        "  - job_name: arraybench\n"
        "    scrape_timeout: 900ms\n"
        f"    file_sd_configs: [{{files: ['{targets}'], refresh_interval: 1s}}]\n"
    )
    proc = subprocess.Popen(
        ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                with urllib.request.urlopen(base + "/-/ready", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("prometheus did not become ready")
        yield base, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)


def query_range(base: str, query: str, start: float, end: float) -> list[tuple[int, float]]:
    args = urllib.parse.urlencode({"query": query, "start": start, "end": end, "step": "1s"})
    with urllib.request.urlopen(f"{base}/api/v1/query_range?{args}", timeout=10) as answer:
        data = json.loads(answer.read())
    assert data["status"] == "success", data
    found = data["data"]["result"]
    return [(int(float(t)), float(v)) for t, v in found[0]["values"]] if found else []
