"""A campaign on 3 real fio servers in network namespaces: S1/S2/S3 scaling, per-host and
total results, start spread, and `hosts check`, through the CLI as a user runs it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.store.db import Store
from tests.conftest import main_cli, needs_fio
from tests.netns import TestHosts, needs_netns, running_hosts

pytestmark = [
    needs_fio,
    pytest.mark.slow,
    pytest.mark.paced,  # rate-limited IOPS per host, start gates within ms
    *needs_netns,
]


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestHosts]:
    with running_hosts(3, tmp_path_factory.mktemp("hosts"), port=8775) as test_hosts:
        yield test_hosts


def _plan(tmp_path: Path, hosts: TestHosts, extra: str = "") -> Path:
    # each host its own target (relative: in each server's own folder)
    declared = "".join(
        f"  - {{name: {h.name}, address: {h.address}, port: {h.port}, "
        f"targets: [{{path: t-{h.name}.dat, size: 16m}}]}}\n"
        for h in hosts.hosts
    )
    names = [h.name for h in hosts.hosts]
    text = (
        "name: scale\n"
        f"hosts:\n{declared}"
        f"host_sets: [[{names[0]}], [{', '.join(names[:2])}], [{', '.join(names)}]]\n"
        "timing: {ramp: 1s, duration: 3s}\n"
        "load: {workers: [1], iodepth: [1]}\n"
        f"{extra}"
        "workloads:\n"
        "  - {name: rr, pattern: random, bs: 4k, read: 100, ioengine: psync, rate_iops: 3000,\n"
        "     pause_after: 1s}\n"
    )
    path = tmp_path / "plan.yaml"
    path.write_text(text)
    return path


def test_hosts_check_lists_each_host(tmp_path: Path, hosts: TestHosts):
    done = main_cli("hosts", "check", str(_plan(tmp_path, hosts)))
    assert done.returncode in (0, 1), done.stderr  # targets are not checked without SSH
    for h in hosts.hosts:
        assert h.name in done.stdout and h.address in done.stdout
    assert "no authentication" in done.stderr.lower() or "authentication" in done.stderr


def test_scaling_campaign_on_three_hosts(tmp_path: Path, hosts: TestHosts):
    results = tmp_path / "res"
    done = main_cli("run", str(_plan(tmp_path, hosts)), "--results", str(results))
    assert done.returncode == 0, done.stderr
    assert "Scaling against the number of hosts" in done.stdout
    assert "start spread between hosts" in done.stdout
    report = Path(done.stdout.split("HTML report:")[1].strip()).read_text()
    assert "Scaling: maximum against hosts: against hosts" in report  # one dual-axis chart
    run_id = json.loads(main_cli("runs", "--results", str(results), "--format", "json").stdout)[0][
        "id"
    ]
    shown = json.loads(
        main_cli("show", run_id, "--results", str(results), "--format", "json").stdout
    )
    points = shown["points"]
    assert [p["key"] for p in points] == ["rr/w1-qd1-h1", "rr/w1-qd1-h2", "rr/w1-qd1-h3"]
    assert [p["hosts"] for p in points] == [1, 2, 3] and not any(p["partial"] for p in points)
    assert [p["pause_s"] for p in points] == [1.0, 1.0, 1.0]  # the plan's pause, on hosts too
    for point in points[1:]:
        assert point["start_spread_ms"] is not None and point["start_spread_ms"] < 1000
    # one job file per host, on the host's own target, gated to one start instant
    folder = Path(points[2]["folder"])
    texts = {h.name: (folder / f"point-{h.name}.fio").read_text() for h in hosts.hosts}
    for name, text in texts.items():
        assert f"filename=t-{name}.dat" in text and "exec_prerun=" in text
    # stored with the point, with its merged latency bins: its report reads the store alone
    store = Store(results, create=False)
    ids = {p.key: p.id for p in store.points(run_id)}
    stored = store.job_files(run_id)[ids["rr/w1-qd1-h3"]]
    assert stored.items() >= {f"point-{name}.fio": t for name, t in texts.items()}.items()
    assert all(store.latency_bins(point_id) for point_id in ids.values())
    # per-host figures sum to the total (fio's "All clients" entry is never used)
    import sqlite3

    with sqlite3.connect(results / "arraybench.db") as db:
        rows = db.execute(
            "SELECT p.key, f.data_json, p.total_iops FROM findings f JOIN points p "
            "ON p.id = f.point_id WHERE f.kind = 'hosts' ORDER BY p.seq"
        ).fetchall()
    for key, data, total in rows:
        finding = json.loads(data)
        per_host = finding["per_host"]
        # every host held its start until the gate (fio alone starts ~1.3 s after the
        # command, the gate is 3 s after it), then started within a few ms of it; the
        # starts are read from ms-truncated log stamps, so allow their resolution
        for host, start in finding["start_ms"].items():
            assert -5 <= start - finding["start_gate_ms"] < 50, (key, host)
        if len(per_host) > 1:
            assert finding["start_spread_ms"] < 50, key
        assert sum(m["total_iops"] for m in per_host.values()) == pytest.approx(total)
        # each host is rate-limited to 3000 IOPS: the total scales with the host count
        assert total == pytest.approx(3000 * len(per_host), rel=0.1), key
    # the 1-second totals are sums over hosts of the same wall-clock second
    with sqlite3.connect(results / "arraybench.db") as db:
        seconds = db.execute(
            "SELECT s.read_iops FROM samples s JOIN points p ON p.id = s.point_id "
            "WHERE p.key = 'rr/w1-qd1-h3'"
        ).fetchall()
    # fio's 1 s windows start with each job, not on whole seconds, so one second can hold a
    # little of its neighbour's I/O; over the point the per-second totals average 3 x 3000
    values = [v[0] for v in seconds]
    assert values and sum(values) / len(values) == pytest.approx(9000, rel=0.15)
    assert all(0.5 * 9000 < v < 1.5 * 9000 for v in values)


def test_a_host_killed_mid_point_leaves_a_partial_point(tmp_path: Path, hosts: TestHosts):
    import threading
    import time

    names = [h.name for h in hosts.hosts]
    plan = _plan(tmp_path, hosts, extra="on_host_failure: continue\n")
    text = plan.read_text().replace(
        "timing: {ramp: 1s, duration: 3s}", "timing: {ramp: 0s, duration: 4s}"
    )
    text = (
        text.split("host_sets:")[0]
        + f"host_sets: [[{', '.join(names)}]]\n"
        + (text.split("host_sets:")[1].split("\n", 1)[1])
    )
    plan.write_text(text)
    killer = threading.Timer(2.5, hosts.kill_server, args=(2,))
    killer.start()
    began = time.monotonic()
    try:
        done = main_cli("run", str(plan), "--results", str(tmp_path / "res"))
    finally:
        killer.join()
        hosts.start_server(2)  # back for any later test
    assert time.monotonic() - began < 120  # no hang
    assert done.returncode == 0, done.stderr
    assert f"host(s) {names[2]} failed" in done.stderr and "stored as partial" in done.stderr
    shown = json.loads(main_cli("show", json.loads(main_cli(
        "runs", "--results", str(tmp_path / "res"), "--format", "json").stdout)[0]["id"],
        "--results", str(tmp_path / "res"), "--format", "json").stdout)  # fmt: skip
    [point] = shown["points"]
    assert point["partial"] == 1 and point["failed_hosts"] == names[2]
    # the two surviving hosts' data is kept: about 2 x 3000 IOPS
    assert point["total_iops"] == pytest.approx(6000, rel=0.15)
    assert "partial points" in done.stdout
