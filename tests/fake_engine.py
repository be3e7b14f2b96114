"""A second load engine for the tests whose subject is the campaign, not fio: deterministic
figures from a queueing model, no I/O, no process, no waiting.

The model: the fake device serves `PARALLEL` I/Os at once, each in `service_us(bs, write)`.
With N I/Os outstanding (workers x iodepth, per target when the load is spread per target)
it completes min(N, PARALLEL) / service I/Os per second, and by Little's law each waits
N / IOPS: latency equals the service time until the device is saturated, then grows with N
while IOPS stays flat. `rate_iops` caps each job. Every second of the point is the same
figure, so the series is steady and its mean is the point's.

Registered through `arraybench.engines.registry` by the `fake_engine` fixture (conftest):
nothing in `arraybench.run` names it, which is the point of the engine seam.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from arraybench.engines import registry
from arraybench.engines.base import Capabilities, EngineFacts, RunOutcome, RunSpec
from arraybench.engines.measurement import DirStats, EngineDocument, Measurement
from arraybench.errors import FioRunError
from arraybench.plan.expand import Point
from arraybench.plan.model import Plan, Precondition
from arraybench.records import Sample

NAME = "fake"
VERSION = "fake-1.0"
PARALLEL = 16  # I/Os the fake device serves at once
RESULTS = "fake.json"
PLAN_LINES = "engine: fake\nmonitor: false\n"  # no kernel I/O to compare with: no monitor
_last_second = [0]  # the fake clock: each run's seconds follow the run before, never overlap


def _first_second(seconds: int) -> int:
    """The Unix second a run of `seconds` starts at on the fake clock: now, or just after
    the last run's last second (runs take no time here, their seconds must still differ)."""
    start = max(int(time.time()), _last_second[0] + 1)
    _last_second[0] = start + max(seconds, 1) - 1
    return start


def service_us(bs: int, write: bool) -> float:
    """One I/O's service time: a fixed cost plus the transfer at 2 GB/s; writes 1.5 x."""
    return (50.0 + bs / 2e9 * 1e6) * (1.5 if write else 1.0)


@dataclass(frozen=True)
class Direction:
    iops: float  # of the whole point
    lat_us: float  # mean


def model(job: Mapping[str, object]) -> dict[str, Direction]:
    """Read and write figures of one point's job description (`FakeEngine.point_job`)."""
    bs, read = int(job["bs"]), int(job["read"])  # type: ignore[call-overload]
    jobs, depth = int(job["jobs"]), int(job["iodepth"])  # type: ignore[call-overload]
    outstanding = jobs * depth
    service = service_us(bs, False) * read / 100 + service_us(bs, True) * (100 - read) / 100
    iops = min(outstanding, PARALLEL) / (service * 1e-6)
    rate = job.get("rate_iops")
    if rate:
        iops = min(iops, float(rate) * jobs)  # type: ignore[arg-type]
    lat_us = max(service, outstanding / iops * 1e6)
    shares = {"read": read / 100, "write": (100 - read) / 100}
    out = {}
    for name, share in shares.items():
        if share > 0:
            scale = service_us(bs, name == "write") / service
            out[name] = Direction(iops * share, lat_us * scale)
    return out


# the latency histogram around the mean: (multiple of the mean, share of the I/Os); its
# p50 is 0.95 x the mean, p99 1.8 x, p99.9 2.5 x (the json+ bins fio gives, which the
# percentiles of several jobs together are read from)
SHAPE = ((0.5, 0.02), (0.8, 0.18), (0.95, 0.35), (1.1, 0.25), (1.4, 0.15), (1.8, 0.045),
         (2.5, 0.004), (3.0, 0.001))  # fmt: skip


def _stats(d: Direction | None, bs: int, seconds: float, jobs: int) -> DirStats:
    if d is None:
        return DirStats(0, 0, 0, 0.0, 0.0, None, None, None, "lat")
    iops = d.iops / jobs
    ios = round(iops * seconds)
    lat = d.lat_us * 1000
    pct = {50.0: lat * 0.95, 99.0: lat * 1.8, 99.9: lat * 2.5}
    bins = {round(lat * m): max(1, round(ios * share)) for m, share in SHAPE}
    return DirStats(ios, ios * bs, round(seconds * 1000), iops, iops * bs, lat, lat * 0.5,
                    lat * 3, "lat", pct, bins)  # fmt: skip


class FakeEngine:
    name = NAME
    job_name = "point.fake"
    capabilities = Capabilities()  # a plain engine: local points only

    def __init__(self) -> None:
        self.runs: list[str] = []  # the labels run, in order (a test may look)

    def check(self) -> EngineFacts:
        return EngineFacts(NAME, VERSION)

    def watchdog_seconds(self, expected_s: float) -> float:
        return expected_s * 3 + 60

    def point_job(self, point: Point, sizes: Mapping[str, int], title: str = "") -> str:
        per = len(point.targets) if point.spread == "per_target" else 1
        w = point.workload
        job = {"key": point.key, "title": title, "ioengine": point.ioengine, "bs": w.bs,
               "read": w.read, "jobs": point.level.workers * per, "iodepth": point.level.iodepth,
               "seconds": point.timing.duration, "rate_iops": w.rate_iops,
               # what fio's job file would place where (a test of the plan's expansion looks)
               "targets": [t.path for t in point.targets], "region": w.region,
               "frontend_blocks": w.frontend_blocks}  # fmt: skip
        return json.dumps(job, indent=1) + "\n"

    def precondition_job(self, plan: Plan, spec: Precondition, sizes: Mapping[str, int]) -> str:
        return json.dumps({"precondition": spec.passes, "bytes": sum(sizes.values())}) + "\n"

    def run(self, job: Path, spec: RunSpec) -> RunOutcome:
        """The figures computed and written beside the job; the clock not waited for."""
        self.runs.append(spec.label)
        text = json.loads(job.read_text())
        seconds = float(text.get("seconds", 0.0))
        if spec.on_tick:
            spec.on_tick(0.0)
        if "bs" in text:
            figures = {k: vars(v) for k, v in model(text).items()}
            start = _first_second(math.floor(seconds))
            (job.parent / RESULTS).write_text(json.dumps({"job": text, "figures": figures,
                                                          "start": start}))  # fmt: skip
        if spec.on_tick:
            spec.on_tick(seconds)
        return RunOutcome(seconds, job.parent)

    def _read(self, folder: Path) -> dict:
        path = folder / RESULTS
        if not path.exists():
            raise FioRunError(f"fake engine: no results in {folder}", "run the job first")
        return dict(json.loads(path.read_text()))

    def results(self, outcome: RunOutcome, label: str) -> EngineDocument:
        found = self._read(outcome.folder)
        job, figures = found["job"], found["figures"]
        dirs = {k: Direction(**v) for k, v in figures.items()}
        jobs, bs, seconds = int(job["jobs"]), int(job["bs"]), float(job["seconds"])
        read, write = dirs.get("read"), dirs.get("write")
        entries = [self._job(f"load{i}", read, write, bs, seconds, jobs) for i in range(jobs)]
        return EngineDocument(VERSION, found["start"], found["start"] * 1000,
                           {"ioengine": str(job["ioengine"])}, entries, None, [], "")  # fmt: skip

    @staticmethod
    def _job(
        name: str, read: Direction | None, write: Direction | None, bs: int, seconds: float,
        jobs: int,
    ) -> Measurement:  # fmt: skip
        return Measurement(name=name, groupid=0, error=0, read=_stats(read, bs, seconds, jobs),
                           write=_stats(write, bs, seconds, jobs),
                           trim=_stats(None, bs, seconds, jobs), options={}, elapsed_s=seconds,
                           job_runtime_ms=round(seconds * 1000), usr_cpu=1.0,
                           sys_cpu=2.0)  # fmt: skip

    def samples(self, folder: Path) -> list[Sample]:
        found = self._read(folder)
        dirs = {k: Direction(**v) for k, v in found["figures"].items()}
        bs, n = int(found["job"]["bs"]), math.floor(float(found["job"]["seconds"]))
        r, w = dirs.get("read"), dirs.get("write")
        return [
            Sample(t=found["start"] + i,
                   read_iops=r.iops if r else None, write_iops=w.iops if w else None,
                   read_mbps=r.iops * bs / 1e6 if r else None,
                   write_mbps=w.iops * bs / 1e6 if w else None,
                   read_lat_us=r.lat_us if r else None, write_lat_us=w.lat_us if w else None)
            for i in range(n)
        ]  # fmt: skip

    def live_reader(self, folder: Path) -> None:
        return None  # writes no live figures: its points show progress only

    def check_path(self, path: str, where: str) -> None:
        return None

    def lay_out(self, path: Path, size: int, fd: int) -> str | None:
        return None  # the file has its size already (`layout_file` extends it): no I/O here

    def end_leftovers(self, folder: Path) -> list[int]:
        return []


@contextlib.contextmanager
def registered() -> Iterator[None]:
    """`engine: fake` valid inside (the `fake_engine` fixture; a module fixture's own `with`):
    a report of a fake run needs it too, its stored plan names the engine."""
    registry.register(NAME, FakeEngine)
    try:
        yield
    finally:
        registry.unregister(NAME)


def assert_point_matches_model(point: Mapping[str, object]) -> None:
    """A stored point (`show --format json`) carries the model's figures for its own job:
    the fake engine's counterpart of `tests.crosscheck.assert_point_matches_fio`."""
    folder = Path(str(point["folder"]))
    job = json.loads((folder / "point.fake").read_text())
    dirs = model(job)
    for name in ("read", "write"):
        want = dirs[name].iops if name in dirs else 0.0
        got = point.get(f"{name}_iops") or 0.0
        assert math.isclose(float(got), want, rel_tol=1e-6), (point["key"], name, got, want)
    total = sum(d.iops for d in dirs.values())
    assert math.isclose(float(point["total_iops"]), total, rel_tol=1e-6), point["key"]  # type: ignore[arg-type]


HOLD_REPORT_ENV = "ARRAYBENCH_TEST_HOLD_REPORT"  # set: every report file's write waits


def hold_report_writes(seconds: float = 60.0) -> None:
    """Every file written through outfiles waits `seconds` before its bytes are written
    (a FIFO at the report's name held the writer before; such a name is refused now);
    arraybench's own files (live.json, written unchecked) are not held."""
    import contextlib
    import time

    from arraybench import outfiles

    swapped = outfiles._swapped

    @contextlib.contextmanager
    def held(path: Path, what: str, checked: bool) -> Iterator[tuple[int, Path]]:
        if checked:  # a user's file (a report), not live.json
            time.sleep(seconds)
        with swapped(path, what, checked) as opened:
            yield opened

    outfiles._swapped = held  # type: ignore[assignment]


if __name__ == "__main__":  # `python -m tests.fake_engine ARGS`: `python -m arraybench ARGS`
    # with `engine: fake` known, for a test of arraybench as a process of its own (its
    # signals, its store beside another process) whose subject is not fio
    import os
    import sys

    from arraybench.__main__ import main

    if os.environ.get(HOLD_REPORT_ENV):  # a report writer held, for a signal to land in it
        hold_report_writes()
    with registered():
        code = main()
    sys.exit(code)
