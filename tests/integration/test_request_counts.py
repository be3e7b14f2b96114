"""fio against the kernel, bytes first, on a real loop device: 1 MiB reads that the block layer
splits (max_sectors_kb lowered to 64) move the same bytes in 16 x the requests, a remark that
keeps the point in the headline; the same reads while another writer fills the device move
other bytes, an invalidating flag that leaves the point out; sequential reads the kernel
merges are a remark too."""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arraybench.analysis.validity import PointFacts, leaves_headline, point_flags
from arraybench.engines.fio.logs import parse_interval_log, per_second
from arraybench.monitor.compare import compare_point, kernel_series
from arraybench.monitor.sampler import HostSampler
from arraybench.report.assemble import report_for_run
from arraybench.report.render.markdown.page import render_markdown
from arraybench.store.db import Store
from tests.conftest import main_cli, needs_fio
from tests.loopdev import attached, sparse_file

pytestmark = [needs_fio, pytest.mark.root, pytest.mark.paced]  # kernel counters of one device

PLAN = """name: counts
timing: {{ramp: 0s, duration: 8s}}
load: {{pairs: [[1, 1], [1, 4]]}}
targets: [{{path: {dev}}}]
workloads:
  - {{name: read-1m, pattern: sequential, bs: 1m, read: 100, rate_iops: 100}}
"""


@contextlib.contextmanager
def _split_loop(backing: Path) -> Iterator[str]:
    """A 256 MiB loop device whose requests the block layer cuts at 64 KiB."""
    with attached(sparse_file(backing, 256 << 20), "--direct-io=on") as dev:
        Path(f"/sys/block/{Path(dev).name}/queue/max_sectors_kb").write_text("64")
        yield dev


@pytest.fixture
def loop(tmp_path: Path) -> Iterator[str]:
    with _split_loop(tmp_path / "b.img") as dev:
        yield dev


@pytest.fixture
def other_loop(tmp_path: Path) -> Iterator[str]:
    """A second such device: the kernel counts each device's requests on their own."""
    with _split_loop(tmp_path / "o.img") as dev:
        yield dev


def _plan(tmp_path: Path, dev: str, name: str) -> list[str]:
    plan = tmp_path / f"{name}.yaml"
    plan.write_text(PLAN.format(dev=dev))
    return ["run", str(plan), "--allow-destroy", dev, "--results", str(tmp_path / name)]


def _read_back(tmp_path: Path, name: str) -> tuple[Store, str, list[dict[str, Any]]]:
    results = tmp_path / name
    shown = main_cli("show", "latest", "--results", str(results), "--format", "json")
    store = Store(results, create=False)
    ((run, _),) = store.list_runs()
    return store, run.id, json.loads(shown.stdout)["points"]


def _writer(dev: str, stop: threading.Event) -> None:
    """1 MiB direct writes to the device's second half until told to stop: other I/O."""
    buf = mmap.mmap(-1, 1 << 20)  # page-aligned, as O_DIRECT wants
    fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
    try:
        while not stop.is_set():
            for block in range(128, 256):
                os.pwrite(fd, buf, block << 20)
    finally:
        os.close(fd)


def test_split_io_is_a_remark_and_other_io_is_left_out(
    tmp_path: Path, loop: str, other_loop: str
) -> None:
    # both runs at once, each on its own device (the kernel's counts are per device): the
    # same reads alone on `loop`, and beside another writer on `other_loop` in a child
    # process (one process runs one campaign)
    stop = threading.Event()
    writer = threading.Thread(target=_writer, args=(other_loop, stop), daemon=True)
    writer.start()
    try:
        argv = [sys.executable, "-m", "arraybench", *_plan(tmp_path, other_loop, "shared")]
        shared = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            done = main_cli(*_plan(tmp_path, loop, "split"))
        finally:
            _, shared_err = shared.communicate(timeout=120)
    finally:
        stop.set()
        writer.join(timeout=10)
    assert done.returncode == 0, done.stderr
    assert shared.returncode == 0, shared_err
    store, run_id, points = _read_back(tmp_path, "split")
    for p in points:  # the same bytes, 16 x the requests: a remark, never a reason to leave
        kinds = [f["kind"] for f in p["flags"]]
        assert "split-io" in kinds and "fio-kernel" not in kinds, p["flags"]
        assert {f["grade"] for f in p["flags"]} == {"remark"}, p["flags"]  # show's JSON
        assert not leaves_headline(kinds), kinds
    shown = main_cli("show", "latest", "--results", str(tmp_path / "split")).stdout
    said = [line for line in shown.splitlines() if ": split-io: " in line]
    assert len(said) == 2 and all(line.startswith("remark: #") for line in said), shown
    model = report_for_run(store, run_id)
    assert "left out" not in " ".join(model.notes)  # no series left a point out
    panel = model.sections[0].panels[0]  # host-busy may join in on a shared machine
    assert all("split-io" in r for r in panel.remarks) and len(panel.remarks) == 2, panel
    assert all(tick.endswith("†") for tick in panel.x_ticks), panel.x_ticks  # the mark
    assert "† remark: " in render_markdown(model) and not any(panel.flagged)
    assert any("kept with a remark" in line for line in model.notes_box), model.notes_box

    store, run_id, points = _read_back(tmp_path, "shared")
    for p in points:  # other bytes on the device: a real disagreement, out of the headline
        kinds = [f["kind"] for f in p["flags"]]
        assert "fio-kernel" in kinds and leaves_headline(kinds), p["flags"]
        [why] = [f["why"] for f in p["flags"] if f["kind"] == "fio-kernel"]
        assert why.startswith("kernel saw") and "MB/s" in why and "bytes differ" in why
    model = report_for_run(store, run_id)
    flagged = model.sections[0].panels[0].flagged
    assert len(flagged) == 2 and all("fio-kernel" in f for f in flagged), flagged
    # one comparison, one number: the flag says the points table's "kernel vs fio" figure
    column = {row.level: row.values["kernel_vs_fio_pct"] for row in model.points}
    for p in points:
        [why] = [f["why"] for f in p["flags"] if f["kind"] == "fio-kernel"]
        figure = column[f"{p['workers']}x{p['iodepth']}"]
        assert isinstance(figure, float) and figure > 10, (figure, why)
        assert why.startswith(f"kernel saw {figure:.1f} % more MB/s than fio"), (figure, why)


def test_merged_io_is_a_remark(tmp_path: Path) -> None:
    """4 KiB sequential reads queued 64 at a time under mq-deadline: the kernel merges most
    of them (measured here: 15 of 16), the bytes agree; the monitor's line reads as a remark.
    At a steady 100 MB/s: a rate that swings from one second to the next on a shared machine
    shows as a bytes disagreement in the few seconds a short point has."""
    backing = sparse_file(tmp_path / "m.img", 256 << 20)
    with attached(backing, "--direct-io=on") as dev:
        name = Path(dev).name
        Path(f"/sys/block/{name}/queue/scheduler").write_text("mq-deadline")
        logs = tmp_path / "x"
        sampler = HostSampler([name]).start()
        try:
            done = subprocess.run(
                ["fio", "--name=x", f"--filename={dev}", "--rw=read", "--bs=4k", "--direct=1",
                 "--ioengine=libaio", "--iodepth=64", "--iodepth_batch_submit=64",
                 "--iodepth_batch_complete_min=32", "--runtime=5", "--time_based",
                 "--size=128m", f"--write_iops_log={logs}", f"--write_bw_log={logs}",
                 "--log_avg_msec=1000", "--log_unix_epoch=1", "--rate=100m"],
                capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
        finally:
            samples = sampler.stop()
    assert done.returncode == 0, done.stderr
    iops = dict(per_second([parse_interval_log(f"{logs}_iops.1.log")], "iops"))
    bw = {t: kib * 1024 / 1e6 for t, kib in
          per_second([parse_interval_log(f"{logs}_bw.1.log")], "bw")}  # fmt: skip
    found = compare_point(iops, bw, *kernel_series(samples, [name]), [name])
    assert found.kernel_iops is not None and found.fio_iops, found
    ratio = found.kernel_iops / found.fio_iops
    if ratio >= 0.9:
        # Whether the block layer merges depends on the queue building up, which the machine
        # decides (merged 15 of 16 under load; none once in a quiet CI phase): without merges
        # the premise is not met and there is nothing to grade. The split test beside this one
        # grades the same "same bytes, other request count" rule deterministically.
        assert found.flags == [], found  # and no disagreement was made up either
        pytest.skip(f"the kernel merged no requests this time (kernel/fio {ratio:.2f})")
    [flag] = point_flags(PointFacts(jobs=1, monitor_flags=found.flags))
    assert flag.kind == "merged-io" and not leaves_headline([flag]), found
