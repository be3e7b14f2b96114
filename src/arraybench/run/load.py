"""A point's load as the point pipeline and its sidecars see it, whichever executor ran it
(the run's engine beside the monitor here, or fio's client on many hosts): the instant it
started, and what it measured."""

from __future__ import annotations

from dataclasses import dataclass, field

from arraybench.engines.measurement import Measurement
from arraybench.monitor.point import MonitorResult
from arraybench.records import Finding, Sample


@dataclass(frozen=True)
class LoadStart:
    """The instant the load starts (Unix s: local fio spawned, or the hosts' start gate) and,
    for a local load, fio's process (the events' process-level injectors act on its tree)."""

    t0: float
    pid: int | None = None


@dataclass
class LoadResult:
    """One point's load, measured: the jobs and the 1-second series the store keeps, and what
    the shared tail needs to judge it (`run/point/tail.py`)."""

    jobs: list[Measurement]
    samples: list[Sample]
    elapsed_s: float
    version: str | None  # the engine's version (fio's on many hosts)
    findings: list[Finding] = field(default_factory=list)  # the executor's own: hosts, warm-up
    host_samples: dict[str, list[Sample]] = field(default_factory=dict)  # many hosts: each's
    monitor: MonitorResult = field(default_factory=MonitorResult)  # the controller's view
    cpus: int | None = None  # the CPUs fio's own CPU figures are shares of (None: on hosts)
    file_target: bool = False  # every target a file: a page-cache warning applies
    max_start_spread_ms: float | None = None  # many hosts: the plan's max_start_spread
    # the point's many-host columns (None on a local point)
    hosts: int | None = None
    partial: int | None = None
    failed_hosts: str | None = None
    start_spread_ms: float | None = None
    failure: str | None = None  # a failed part (a host): the point is stored as partial
    bins_in_jobs: bool = True  # the jobs hold the latency bins the report keeps (False: the
    # report's are read from the folder's fio.json, `run/reportable.py`)
