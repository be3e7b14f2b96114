"""The store's typed records: what goes in and comes out of the results store.

A neutral module: it imports nothing of arraybench but the point identity (layer 0 too), so
the analysis functions (below the store) and the store itself (above them) both use these
types without importing each other.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from arraybench.point_identity import PointIdentity


@dataclass(frozen=True)
class RunRecord:
    id: str
    plan_name: str
    scenario: str
    labels: dict[str, str]
    plan_yaml: str
    folder: str
    scale: float
    status: str
    started: str
    finished: str | None
    total_points: int
    engine_version: str | None
    arraybench_version: str
    host: str
    kernel: str
    targets: list[str]
    latency_bound_us: float
    latency_stat: str
    damaged: tuple[str, ...] = ()  # columns read back unreadable (store.rows): not stored


@dataclass(frozen=True)
class PointRecord:
    """One stored point: identity, load level, and every metric column by name."""

    id: int
    run_id: str
    seq: int
    key: str
    identity: PointIdentity  # the key's parts, from their own columns (never the key parsed)
    workload: str
    family: str
    mix: str
    pattern: str
    bs: int
    read_pct: int
    region: str
    ioengine: str
    unit: str
    workers: int
    iodepth: int
    jobs: int
    targets: str
    folder: str
    started: str
    finished: str
    runtime_s: float
    engine_version: str | None
    usr_cpu: float | None
    sys_cpu: float | None
    devices: int | None  # the step of a device-count ladder, if any
    steady_attained: int | None  # fio's steadystate verdict: 1, 0, or None when not asked
    ended_early: int | None  # 1 when the point stopped before its duration (steady)
    pause_s: float | None  # pause taken after the point (GC rule)
    kernel_iops: float | None  # the kernel's view of the target devices (/proc/diskstats)
    kernel_mbps: float | None
    cpu_busy_pct: float | None  # host CPU busy, % of all CPUs
    hosts: int | None  # how many hosts ran the point together (None: local)
    partial: int | None  # 1 when a host failed and only the others' data is here
    failed_hosts: str | None  # comma-separated names
    start_spread_ms: float | None  # last host's start minus the first's
    metrics: dict[str, float | None]
    scenario: str | None = None  # the plan scenario, or an import's (from the file name)
    labels_json: str | None = None  # imported points: JSON object of label -> value

    @property
    def labels(self) -> dict[str, str]:
        return dict(json.loads(self.labels_json)) if self.labels_json else {}

    def metric(self, scope: str, name: str) -> float | None:
        return self.metrics.get(f"{scope}_{name}")

    def throughput(self, scope: str = "total") -> float:
        """IOPS or MB/s, whichever is the unit of this point's series (a metadata point's
        ops/s are counted as fio's I/Os: its iops)."""
        return self.metric(scope, "mbps" if self.unit == "MB/s" else "iops") or 0.0


@dataclass(frozen=True, kw_only=True)
class NewPoint:
    """A point to store: every column of `points` but its id and metrics, by keyword only, so a
    misspelt field is a TypeError (and a mypy error), never a silent NULL. Built by
    ``run.record.new_point`` for measured and imported points alike."""

    run_id: str
    seq: int
    identity: PointIdentity  # stored in its own columns and written out as the key
    family: str
    mix: str
    pattern: str
    bs: int
    read_pct: int
    region: str
    ioengine: str
    unit: str
    workers: int
    iodepth: int
    jobs: int
    targets: str
    folder: str
    started: str
    finished: str
    runtime_s: float
    engine_version: str | None
    usr_cpu: float | None = None
    sys_cpu: float | None = None
    devices: int | None = None
    steady_attained: int | None = None
    ended_early: int | None = None
    pause_s: float | None = None
    kernel_iops: float | None = None
    kernel_mbps: float | None = None
    cpu_busy_pct: float | None = None
    hosts: int | None = None
    partial: int | None = None
    failed_hosts: str | None = None
    start_spread_ms: float | None = None
    scenario: str | None = None  # an import's, from the file name; a campaign's plan scenario
    labels_json: str | None = None

    @property
    def key(self) -> str:
        return self.identity.key

    @property
    def workload(self) -> str:
        return self.identity.workload


@dataclass(frozen=True)
class HostSample:
    t: int  # Unix seconds, same clock as Sample.t
    device: str
    read_iops: float
    write_iops: float
    read_mbps: float
    write_mbps: float
    await_ms: float | None
    util_pct: float


@dataclass(frozen=True)
class CpuSample:
    t: int
    user_pct: float
    system_pct: float
    iowait_pct: float
    busy_pct: float


@dataclass(frozen=True)
class Finding:
    """A stored finding. `data` is the kind's JSON object: read it typed through its kind
    (finding_kinds.py: `CLIFF.of(f)`, `HOSTS.among(found)`), which knows its keys."""

    point_id: int | None
    kind: str  # "cliff", "steady", "monitor", ...: finding_kinds.KINDS
    data: Mapping[str, object]


@dataclass(frozen=True)
class Sample:
    t: int  # Unix seconds
    read_iops: float | None
    write_iops: float | None
    read_mbps: float | None
    write_mbps: float | None
    read_lat_us: float | None
    write_lat_us: float | None


@dataclass(frozen=True)
class Damaged:
    """A stored value that cannot be read as what its column holds (a hand edit, a crash):
    kept as the reason, for the reader to refuse or mark."""

    why: str

    def __str__(self) -> str:
        return self.why


# an injection journal entry's state: written before it is applied; undone by arraybench (a
# point's end, or `revert`); left by a run that ended normally because undoing it failed;
# undone by the user and so marked with `revert --mark-undone`
INJECTION_APPLYING = "applying"
INJECTION_REVERTED = "reverted"
INJECTION_REVERT_FAILED = "revert failed"
INJECTION_UNDONE_BY_HAND = "undone by hand"


@dataclass(frozen=True)
class InjectionRow:
    """One journaled injection (events.journal.Injection plus where and when). The JSON
    columns are decoded but not checked (a `Damaged` when not JSON): events.entries checks
    them before anything acts on them."""

    id: int
    run_id: str
    point_key: str
    kind: str
    label: str
    host: str  # "" = the controller
    reach: object
    undo: object
    state: str  # INJECTION_APPLYING until reverted, then one of the other states below
    created: str
    owner_pid: int
