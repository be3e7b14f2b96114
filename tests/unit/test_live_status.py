"""fio's status reports (fio/status.py) read from a real fio's output file while it grows, and
the output file left as fio writes it without them."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from arraybench.engines.fio.engine import FioEngine
from arraybench.engines.fio.logs import parse_interval_log, second_of
from arraybench.engines.fio.parse import parse_fio_json_file
from arraybench.engines.fio.status import (
    StatusTail,
    keep_last_document,
    live_seconds,
    status_report,
)
from arraybench.engines.live import LiveSecond
from arraybench.events.records import EventRecord
from arraybench.plan.expand import Point
from arraybench.run.context import Observer
from arraybench.run.live_feed import LiveFeed
from tests.conftest import needs_fio
from tests.fake_engine import FakeEngine

JOB = """[global]
ioengine=psync
filename={target}
size=8m
time_based=1
runtime=4
log_avg_msec=1000
log_unix_epoch=1
per_job_logs=1
write_iops_log=x
rate_iops=500,300
[j]
rw=randrw
rwmixread=60
bs=4k
"""


@needs_fio
@pytest.mark.paced  # judges a rate per status report: 420 for 500 seen beside 3 workers
def test_tail_reads_whole_reports_while_fio_runs(tmp_path: Path) -> None:
    (tmp_path / "t.dat").write_bytes(b"\0" * (8 << 20))
    (tmp_path / "j.fio").write_text(JOB.format(target=tmp_path / "t.dat"))
    fio = subprocess.Popen(
        [shutil.which("fio") or "fio", "j.fio", "--output-format=json+", "--output=o.json",
         "--status-interval=1", "--eta=never"], cwd=tmp_path)  # fmt: skip
    tail = StatusTail(tmp_path / "o.json")
    during, reports = 0, []
    while fio.poll() is None:
        found = tail.poll()
        during += len(found) if fio.poll() is None else 0
        reports += found
        time.sleep(0.2)
    reports += tail.poll()
    assert during >= 2, "reports are read while fio runs, not only at its end"
    seconds = [s for a, b in itertools.pairwise(reports) for s in live_seconds(a, b)]
    assert seconds and {s.host for s in seconds} == {"local"}
    logged = {second_of(r.time_ms): r.value for r in parse_interval_log(tmp_path / "x_iops.1.log")
              if r.ddir == 0}  # fmt: skip
    for s in seconds:  # rate-limited: 500 reads a second, as the interval log says
        assert s.read.iops == pytest.approx(500, rel=0.1)
        assert s.write.iops == pytest.approx(300, rel=0.1)
        # fio reads a job's I/O and byte counters one after the other while its threads run:
        # a report may count a few I/Os in one and not yet in the other
        assert s.read.mbps == pytest.approx(s.read.iops * 4096 / 1e6, rel=0.05)
        assert s.read.lat_mean_us and s.read.lat_p99_us and s.read.lat_p99_us >= 1
        assert s.errors == 0
        if s.t in logged:
            assert s.read.iops == pytest.approx(logged[s.t], rel=0.1)
    before = parse_fio_json_file(tmp_path / "o.json")
    assert len(before) >= 3
    keep_last_document(tmp_path / "o.json")
    after = parse_fio_json_file(tmp_path / "o.json")
    assert len(after) == 1 and after[0].jobs[0].read.ios == before[-1].jobs[0].read.ios


def _doc(stamp: int, ios: int, host: str | None = None) -> dict:
    job = {"read": {"total_ios": ios, "io_bytes": ios * 4096, "lat_ns": {"mean": 1000, "N": ios},
                    "clat_ns": {"bins": {"1000": ios}}},
           "write": {"total_ios": 0, "io_bytes": 0}, "error": 0}  # fmt: skip
    if host:
        job["hostname"] = host
    return {"fio version": "fio-3.33", "timestamp_ms": stamp, "jobs": [job]}


def test_seconds_per_host_and_counter_resets() -> None:
    a = status_report(_doc(10_000, 100, "h1"))
    b = status_report(_doc(11_000, 350, "h1"))
    assert a and b
    (s,) = live_seconds(a, b)
    assert (s.t, s.host, s.read.iops, s.read.lat_mean_us, s.read.lat_p99_us) == (
        11, "h1", 250.0, 1.0, 1.0)  # fmt: skip
    reset = status_report(_doc(12_000, 20, "h1"))  # fio's ramp ended: counters start again
    assert reset and live_seconds(b, reset) == []
    late = status_report(_doc(15_000, 900, "h1"))
    assert late and live_seconds(b, late) == []  # not one second: no second made up
    assert status_report({"jobs": []}) is None


def test_tail_skips_garbage_and_waits_for_a_whole_report(tmp_path: Path) -> None:
    path = tmp_path / "o.json"
    text = json.dumps(_doc(1000, 5), indent=2)
    path.write_text("fio: a warning\n" + text[:40])
    tail = StatusTail(path)
    assert tail.poll() == []
    with open(path, "a") as fh:
        fh.write(text[40:] + '\n{\n  "fio version" : broken\n}\n' + text + "\n")
    found = tail.poll()
    assert [r.time_ms for r in found] == [1000, 1000]


def test_keep_last_document_of_a_long_point(tmp_path: Path) -> None:
    """Megabytes of reports (read backwards by blocks): fio's warnings and the last report."""
    path = tmp_path / "fio.json"
    big = json.dumps(_doc(1000, 1) | {"filler": "x" * (1 << 20)}, indent=2)
    last = json.dumps(_doc(9000, 99), indent=2)
    path.write_text("fio: warning\n" + big + "\n" + big + "\n" + last + "\n")
    keep_last_document(path)
    assert path.read_text() == "fio: warning\n" + last + "\n"
    keep_last_document(path)  # one report: left as it is
    assert path.read_text() == "fio: warning\n" + last + "\n"


class _Seen(Observer):
    """An observer of the live view: what LiveFeed hands it."""

    live_seconds = True

    def __init__(self) -> None:
        self.seconds: list[list[float]] = []
        self.events: list[EventRecord] = []

    def live_second(
        self, point: Point, seconds: Sequence[LiveSecond], left_s: float, source: str = "fio"
    ) -> None:
        self.seconds.append([s.read.iops for s in seconds])

    def live_event(self, point: Point, record: EventRecord) -> None:
        self.events.append(record)


POINT = cast(Point, SimpleNamespace(expected_seconds=10.0))


def test_the_live_feed_reads_seconds_from_the_engine_that_writes_them(tmp_path: Path) -> None:
    """fio's `LiveReader` (its status reports; engines/fio/status.py) gives each second to the
    observer and leaves fio's output as without them; run/ never opens fio's file itself."""
    reports = [
        json.dumps(_doc(t * 1000, n), indent=2) for t, n in ((10, 100), (11, 350), (12, 500))
    ]
    (tmp_path / "fio.json").write_text("\n".join(reports) + "\n")
    seen = _Seen()
    feed = LiveFeed(seen, POINT, FioEngine("fio").live_reader(tmp_path))
    assert feed.interval == 1  # fio is asked for a report a second
    feed.tick(1.0)
    assert seen.seconds == [[250.0], [150.0]]
    feed.stop()
    assert (tmp_path / "fio.json").read_text() == reports[-1] + "\n"  # the last report kept


def test_an_engine_without_live_figures_is_asked_for_none_and_its_events_still_show() -> None:
    seen = _Seen()
    record = object()
    events = cast(list[EventRecord], [record])
    feed = LiveFeed(seen, POINT, FakeEngine().live_reader(Path(".")), events=lambda: events)
    assert feed.interval == 0  # no status interval asked of the engine
    feed.tick(1.0)
    feed.stop()
    assert seen.seconds == [] and seen.events == [record]
