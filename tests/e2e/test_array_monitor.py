"""The plan's `array_monitor:` with real sources: a real `prometheus-node-exporter` as the
"array" (its diskstats of the loop device under test), scraped by a real Prometheus, read
with query_range over each point; Prometheus stopped mid-run; a command printing samples,
some of them garbage."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arraybench.cli import main
from arraybench.finding_kinds import ARRAY_PULL
from arraybench.report.assemble import report_for_run
from arraybench.report.sections.arrayside import point_agreements
from arraybench.store.db import Store
from arraybench.units import format_latency
from tests.conftest import needs_fio, small_plan
from tests.loopdev import attached, sparse_file
from tests.prom import node_exporter, prometheus, query_range

pytestmark = needs_fio
needs_prometheus = pytest.mark.skipif(
    shutil.which("prometheus") is None or shutil.which("prometheus-node-exporter") is None,
    reason="prometheus and prometheus-node-exporter are not installed",
)


def disk_exporter() -> contextlib.AbstractContextManager[str]:
    """node-exporter with only its diskstats collector (the query picks `device`)."""
    # its default excludes loop devices; include= cannot replace it in version 1.5
    return node_exporter("--collector.diskstats",
                         "--collector.diskstats.device-exclude=^(ram|fd)[0-9]+$")  # fmt: skip


def monitor_plan(tmp_path: Path, target: str, url: str, duration: int = 12) -> Path:
    device = Path(target).name
    query = f'irate(node_disk_reads_completed_total{{device="{device}"}}[3s])'
    plan = small_plan(
        tmp_path, workers="[1, 2]",
        # rate-limited: this shared machine's per-second IOPS swing 2-5x otherwise, and the
        # array's seconds (scrape times) are not fio's: a steady load compares counting
        workloads="  - {name: rr, pattern: random, bs: 4k, read: 100, rate_iops: 1000}\n",
        extra=(f"array_monitor:\n  prometheus:\n    url: {url}\n    lag: 2s\n"
               f"    queries: {{iops: '{query}'}}\n"),
    )  # fmt: skip
    text = plan.read_text().replace(f"  - path: {tmp_path / 'target.dat'}\n    size: 32m\n",
                                    f"  - path: {target}\n")  # fmt: skip
    # a ramp keeps the device busy before the first measured second: irate's window (two
    # scrapes, up to 2 s back) holds no idle time then
    plan.write_text(text.replace("timing: {ramp: 0s, duration: 1s}",
                                 f"timing: {{ramp: 2s, duration: {duration}s}}")
                    + f"ioengine: libaio\nallow_destroy: [{target}]\nmonitor: false\n")  # fmt: skip
    return plan


def scraped(base: str, query: str, samples: int) -> None:
    """Wait until Prometheus holds `samples` scrapes of `query`'s series."""
    for _ in range(60):
        now = time.time()
        if len(query_range(base, query, now - samples, now)) >= samples:
            return
        time.sleep(0.5)
    pytest.fail(f"prometheus never scraped {query}")


@needs_prometheus
def test_node_exporter_as_the_array_agrees_with_fio(tmp_path: Path) -> None:
    backing = sparse_file(tmp_path / "loop.img", 64 << 20)
    with attached(backing, "--direct-io=on") as dev, disk_exporter() as exporter:
        targets = tmp_path / "targets.json"
        targets.write_text(json.dumps([{"targets": [exporter]}]))
        with prometheus(tmp_path, targets) as (base, _):
            scraped(base, 'up{job="arraybench"}', 3)  # the exporter scraped before the run
            results = tmp_path / "res"
            plan = monitor_plan(tmp_path, dev, base)
            assert main(["run", str(plan), "--results", str(results)]) == 0
    store = Store(results, create=False)
    run = store.list_runs()[0][0]
    pairs = point_agreements(store, run.id, store.points(run.id))
    assert len(pairs) == 2 and all(a is not None for _, a in pairs), pairs
    for point, a in pairs:
        assert a is not None and a.samples >= 5
        assert abs(a.diff_pct) <= 5.0, (
            f"{point.key}: fio {a.fio_iops:.0f}, array {a.array_iops:.0f}"
        )
    assert not ARRAY_PULL.among(store.findings(run.id, ARRAY_PULL.name))
    html = tmp_path / "r.html"
    assert main(["report", run.id, "--results", str(results), "-o", str(html)]) == 0
    text = html.read_text()
    assert "Array monitor vs fio (IOPS)" in text and "array_monitor prometheus" in text


@needs_prometheus
def test_prometheus_stopped_mid_run_the_run_completes_and_says_so(tmp_path: Path) -> None:
    targets = tmp_path / "targets.json"
    targets.write_text("[]")
    with prometheus(tmp_path, targets) as (base, prom):
        plan = small_plan(tmp_path, workers="[1, 2, 4]", extra=(
            f"array_monitor:\n  prometheus:\n    url: {base}\n    lag: 0s\n    timeout: 2s\n"
            "    queries: {iops: 'vector(1000)', cpu: 'vector(30)'}\n"),
            workloads="  - {name: rr, pattern: random, bs: 4k, read: 100}\n")  # fmt: skip
        plan.write_text(plan.read_text().replace("duration: 1s", "duration: 3s"))
        results = tmp_path / "res"
        run = subprocess.Popen([sys.executable, "-m", "arraybench", "run", str(plan),
                                "--results", str(results)], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)  # fmt: skip
        assert run.stdout is not None
        lines = []
        for line in run.stdout:
            lines.append(line)
            if "rr/w2-qd2:" in line:  # the second point stored: Prometheus goes away
                prom.terminate()
                prom.wait(timeout=30)
        assert run.wait(timeout=120) == 0, "".join(lines)
    out = "".join(lines)
    assert "array_monitor prometheus" in out and "not read" in out and "skipped" in out
    store = Store(results, create=False)
    run_id = store.list_runs()[0][0].id
    failed = ARRAY_PULL.among(store.findings(run_id, ARRAY_PULL.name))
    assert {f["point"] for f in failed} >= {"rr/w4-qd2"}, failed  # the points after it: recorded
    pairs = dict((p.key, a) for p, a in point_agreements(store, run_id, store.points(run_id)))
    assert pairs.get("rr/w1-qd2") is not None, (
        failed
    )  # the first point was read (during the second)
    assert "point(s) not read, skipped" in " ".join(out.split())  # a note (wrapped) per source


def test_a_command_source_with_garbage_lines(tmp_path: Path) -> None:
    script = tmp_path / "array-stats"
    script.write_text(
        "#!/bin/sh\necho 'time,iops,cpu'\n"
        "while true; do\n  echo \"$(date +%s.%N),5000,40\"\n  echo 'not,a,number'\n"
        "  echo '{\"iops\": 5000, \"latency_us\": 90}'\n  sleep 0.5\ndone\n")  # fmt: skip
    script.chmod(0o755)
    plan = small_plan(tmp_path, workers="[1]", extra=f"array_monitor:\n  command: [{script}]\n")
    plan.write_text(plan.read_text().replace("duration: 1s", "duration: 3s"))
    results = tmp_path / "res"
    assert main(["run", str(plan), "--results", str(results), "--only", "rand*"]) == 0
    store = Store(results, create=False)
    run = store.list_runs()[0][0]
    ((_point, agreement),) = point_agreements(store, run.id, store.points(run.id))
    assert agreement is not None and agreement.array_iops == pytest.approx(5000)
    model = report_for_run(store, run.id)
    (beside,) = [t for t in model.tables if t.title == "Array monitor vs fio (MB/s, latency)"]
    assert beside.columns[-2:] == ["array latency", "latency: array vs fio"]
    assert beside.rows[0][-2] == format_latency(90.0)  # the JSON lines' latency_us
