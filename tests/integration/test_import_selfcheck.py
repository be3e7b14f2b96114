"""Self-check of the text and terse readers with real fio: one output written as JSON,
normal text and terse (``--output-format=json,normal,terse``), by fio on 1 and 3 hosts (fio
servers in network namespaces, ``fio --client``), for several job layouts. Importing the
text must give the JSON's figures point for point (same points, job counts, I/O counts,
rates and mean latencies), and the terse lines the same counts, rates and latencies.

The three servers share one host name (the namespaces share the UTS name), as servers cloned
from one image do, and with terse among the formats fio prints no host prefix at all: the
text reader tells the servers apart by where each one's groupid sequence restarts.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.importer import import_paths
from arraybench.store.db import PointRecord, Store
from tests.conftest import needs_fio
from tests.netns import TestHosts, needs_netns, running_hosts

pytestmark = [
    needs_fio,
    pytest.mark.xdist_group("import_selfcheck"),  # module fixtures: built once, on one worker
    *needs_netns,
]

GLOBAL = """[global]
ioengine=psync
filename=selfcheck.bin
size=8m
time_based
runtime=1
"""
LAYOUTS = {
    # stonewalled groups, group_reporting on, one direction each
    "grouped": """
[rr]
rw=randread
bs=4k
numjobs=2
group_reporting
[sw]
stonewall
rw=write
bs=64k
numjobs=2
group_reporting
""",
    # group_reporting off, mixed read/write, several jobs per host in each group
    "per-job": """
[mix]
rw=randrw
rwmixread=70
bs=4k
numjobs=3
[seq]
stonewall
rw=rw
bs=16k
numjobs=2
""",
}
WORKLOADS = {  # workload -> jobs per host
    "grouped": {"randread-4k": 2, "write-64k": 2},
    "per-job": {"randrw70-4k": 3, "rw50-16k": 2},
}
METRICS = ("ios", "bytes", "iops", "mbps", "lat_mean_us")


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestHosts]:
    with running_hosts(3, tmp_path_factory.mktemp("selfcheck-hosts"), port=8797) as test_hosts:
        yield test_hosts


def _run(tmp_path: Path, hosts: TestHosts, count: int, layout: str) -> tuple[Path, Path, Path]:
    """One fio --client run; its output split into the JSON, the text and the terse files."""
    job = tmp_path / "job.fio"
    job.write_text(GLOBAL + LAYOUTS[layout])
    out = tmp_path / "both.out"
    command = ["fio", "--output-format=json,normal,terse", f"--output={out}"]
    for host in hosts.hosts[:count]:
        command += [f"--client={host.address},{host.port}", str(job)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    both = out.read_text()
    start = both.index("\n{") + 1
    end = json.JSONDecoder().raw_decode(both, start)[1]
    folder = tmp_path / f"h{count}-{layout}"
    for kind in ("json", "text", "terse"):
        (folder / kind).mkdir(parents=True)
    rest = (both[:start] + both[end:]).splitlines(keepends=True)
    terse = [line for line in rest if line.startswith("3;fio-")]
    (folder / "json" / "out.json").write_text(both[start:end])
    (folder / "text" / "out.txt").write_text("".join(ln for ln in rest if ln not in terse))
    (folder / "terse" / "out.txt").write_text("".join(terse))
    return folder / "json", folder / "text", folder / "terse"


def _points(store: Store, folder: Path, name: str) -> dict[str, PointRecord]:
    """Points by workload (the key's load level is checked apart, with its job count)."""
    result = import_paths(store, [folder], run_name=name)
    assert not result.skipped, result.skipped
    return {p.workload: p for p in store.points(result.run_id)}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("count", [1, 3])
def test_text_gives_the_json_figures_point_for_point(
    tmp_path: Path, hosts: TestHosts, count: int, layout: str
) -> None:
    json_dir, text_dir, terse_dir = _run(tmp_path, hosts, count, layout)
    store = Store(tmp_path / "results")
    from_json = _points(store, json_dir, "json")
    from_text = _points(store, text_dir, "text")
    assert sorted(from_text) == sorted(from_json) == sorted(WORKLOADS[layout])
    for key, truth in from_json.items():
        point = from_text[key]
        assert point.hosts == truth.hosts == (count if count > 1 else point.hosts)
        assert (point.iodepth, point.bs) == (truth.iodepth, truth.bs)
        # the job file's numjobs, per host (fio's client JSON lists no job options for the
        # last group: its job count comes from job_runtime / runtime there)
        assert point.workers == truth.workers == WORKLOADS[layout][key]
        for scope in ("read", "write", "total"):
            for name in METRICS:
                expected, got = truth.metric(scope, name), point.metric(scope, name)
                if expected is None:
                    assert got is None, (key, scope, name)
                elif name == "lat_mean_us":
                    # fio prints means with 2 decimals in a unit that can be msec
                    assert got == pytest.approx(expected, rel=1e-3), (key, scope, name)
                elif name in ("ios", "bytes"):
                    assert got == expected, (key, scope, name)
                else:  # JSON's bw_bytes is a whole number of bytes/s
                    assert got == pytest.approx(expected, rel=1e-6), (key, scope, name)

    # terse (fio's --output-format=terse, v3) names no host, rw mode, block size or job
    # count, but its I/O counts, rates and mean latencies are the JSON's, group by group
    from_terse = sorted(_points(store, terse_dir, "terse").values(), key=lambda p: p.seq)
    json_by_seq = sorted(from_json.values(), key=lambda p: p.seq)
    assert len(from_terse) == len(json_by_seq)
    for point, truth in zip(from_terse, json_by_seq, strict=True):
        for scope in ("read", "write", "total"):
            assert point.metric(scope, "ios") == truth.metric(scope, "ios")
            expected = truth.metric(scope, "iops")
            assert point.metric(scope, "iops") == pytest.approx(expected, rel=1e-6)
            if truth.metric(scope, "ios"):
                expected = truth.metric(scope, "lat_mean_us")
                assert point.metric(scope, "lat_mean_us") == pytest.approx(expected, rel=1e-3)
