"""The plan: strict pydantic models. Unknown keys are errors; sizes and durations are parsed here.

Field names are the plan's vocabulary, not fio's: fio option names live only in `fio/`.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from arraybench.analysis.fabric import parse_link
from arraybench.plan.events import Event
from arraybench.plan.types import (
    Duration,
    Percent,
    PositiveInt,
    RampDuration,
    Size,
    Strict,
    _duration,
)


def _on_off(value: object) -> object:
    # YAML 1.1 reads a bare `off` as false (and `on` as true)
    return {False: "off", True: "exact"}.get(value, value) if isinstance(value, bool) else value


class Target(Strict):
    """A file or a block device. Files are created at `size` when missing."""

    path: str = Field(min_length=1)
    size: Size | None = None  # for files: the size to create/use; devices use their own size


class Ssh(Strict):
    """Start and stop `fio --server` on the host over SSH (key login only)."""

    user: str | None = None
    host: str | None = None  # SSH address when it differs from the fio address
    port: PositiveInt = 22
    key: str | None = None  # identity file
    fio: str = "fio"


class Host(Strict):
    """A load host: fio's server on `address:port`, started over SSH or already running."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
    address: str = Field(min_length=1)
    port: Annotated[int, Field(gt=0, lt=65536)] = 8765
    ssh: Ssh | None = None  # None: "fio server already running"
    # this host's own targets (paths on the host); empty: the plan's targets, same paths on
    # every host
    targets: list[Target] = Field(default_factory=list)

    @field_validator("address")
    @classmethod
    def _one_address(cls, address: str) -> str:
        if address in ("0.0.0.0", "::", "*"):
            raise ValueError(
                "fio's server has no authentication: bind it to one address, not all interfaces"
            )
        return address


class DataPattern(Strict):
    """What the written buffers contain. Incompressible unless asked otherwise."""

    compressibility: Percent = 0  # % of each buffer that compresses
    dedupe: Percent = 0  # % of buffers that repeat


class SteadyStop(Strict):
    """End a point as soon as it is steady (fio's steadystate), instead of after `duration`.

    Whether it did is recorded per point, with the SNIA PTS check of its last window.
    """

    metric: Literal["iops", "bw"] = "iops"
    limit: Annotated[float, Field(gt=0, le=100)] = 20.0  # % max deviation from the window mean
    window: Duration = 60.0  # the steady-state window fio watches


class Timing(Strict):
    ramp: RampDuration = 2.0  # warm-up per point, not measured
    duration: Duration = 10.0  # measured time per point (the upper bound with `steady`)
    steady: SteadyStop | None = None


class Load(Strict):
    """Load levels: workers per host x iodepth, or explicit (workers, iodepth) pairs."""

    workers: list[PositiveInt] | None = None
    iodepth: list[PositiveInt] | None = None
    pairs: list[tuple[PositiveInt, PositiveInt]] | None = None
    # device-count ladder: the first N targets; "all" = 1, 2, ... up to every target
    devices: list[PositiveInt] | Literal["all"] | None = None
    # shared: every worker spreads its I/O over all targets (In&Out);
    # per_target: `workers` jobs on each target (dbi's numjobs per device)
    spread: Literal["shared", "per_target"] = "shared"
    # adaptive: choose the levels from what was measured instead of running the whole ladder
    # (exact: the same optimal point as the full ladder; economy: within one step, fewer points)
    adaptive: Annotated[Literal["off", "exact", "economy"], BeforeValidator(_on_off)] = "off"

    @model_validator(mode="after")
    def _one_form(self) -> Load:
        if self.pairs is not None and (self.workers is not None or self.iodepth is not None):
            raise ValueError("give either pairs or workers/iodepth lists, not both")
        for name in ("workers", "iodepth", "pairs", "devices"):
            value = getattr(self, name)
            if value is not None and len(value) == 0:
                raise ValueError(f"{name} is empty: list at least one level")
        return self


class Verify(Strict):
    """Integrity mode: beside the load, a writer puts checkable blocks (offset, generation,
    time, checksum) in a region reserved at the end of the first target and journals every
    acknowledged write durably; after the point (and its events) every acknowledged block is
    read back. Lost, corrupt or unreadable blocks fail the point."""

    region: Size = 64 << 20  # reserved at the end of the first target; fio's load stays out
    block_size: Size = 4096
    iops: PositiveInt | None = None  # the writer's rate (None: as fast as it goes, one at a time)


class Workload(Strict):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    pattern: Literal["random", "sequential"]
    bs: Size
    read: Percent  # read percentage: 100 = read only, 0 = write only
    region: Literal["backend", "frontend"] = "backend"
    frontend_blocks: PositiveInt = 1000  # frontend = the first N blocks of each target
    ioengine: str | None = None
    direct: bool | None = None
    data: DataPattern | None = None
    load: Load | None = None  # overrides the plan's load
    timing: Timing | None = None  # overrides the plan's timing
    metric: Literal["iops", "mbps"] | None = None  # default: iops for random, mbps sequential
    # cliff: find the write cliff and the garbage-collection rate in this workload's points
    analysis: list[Literal["cliff", "steady"]] = Field(default_factory=list)
    # a pause after each point: a duration, or "gc" = bytes the point wrote / the GC rate
    pause_after: Annotated[float, BeforeValidator(_duration), Field(ge=0)] | Literal["gc"] = 0.0
    rate_iops: PositiveInt | None = None  # cap per worker (a base load, a rate-limited test)
    group: str | None = None  # the report row / section this curve belongs to (default: derived)
    chart: str | None = None  # curves with the same chart are also drawn together, one line each
    # failures and disturbances injected while the load runs (see plan/events.py)
    events: list[Event] = Field(default_factory=list)
    verify: Verify | None = None  # prove no acknowledged write was lost (see integrity/)


class Fabric(Strict):
    """The links between one host and the storage: a ceiling for the charts."""

    links: list[str] = Field(min_length=1)  # e.g. "4 x FC 16G", "2 x 25GbE iSCSI"
    mtu: PositiveInt = 1500

    @field_validator("links")
    @classmethod
    def _known_links(cls, links: list[str]) -> list[str]:
        for text in links:
            parse_link(text)  # ValueError says which forms are accepted
        return links


class Precondition(Strict):
    """SNIA workload-independent preconditioning: write the targets `passes` times over."""

    passes: Annotated[float, Field(gt=0)] = 2.0
    bs: Size = 128 * 1024
    pattern: Literal["sequential", "random"] = "sequential"


class Rounds(Strict):
    """SNIA rounds: repeat some workloads until one of them is steady across rounds."""

    workloads: list[str] = Field(min_length=1)  # names or globs of the repeated workloads
    track: str = Field(min_length=1)  # the workload whose throughput must become steady
    max: PositiveInt = 25
    window: Annotated[int, Field(ge=2)] = 5


class InterferenceTest(Strict):
    """dbi's mixed workload: a rate-limited base load, background streams added in steps."""

    base_bs: Size = 8192
    base_read: Percent = 50
    base_rate_iops: PositiveInt = 40000  # total over all base jobs
    base_jobs: PositiveInt = 4
    base_iodepth: PositiveInt = 8
    bg_bs: Size = 1 << 20
    bg_read: Percent = 100
    bg_rate_iops: PositiveInt = 1000  # added by each step
    steps: PositiveInt = 5
    bg_iodepth: PositiveInt = 4
    interval: Duration = 60.0
    max_latency_increase: Annotated[float, Field(gt=0)] = 20.0  # % for the verdict


MetadataOp = Literal["create", "stat", "delete", "dir-create", "dir-stat", "dir-delete"]
FILE_OPS: tuple[MetadataOp, ...] = ("create", "stat", "delete")


class MetadataTest(Strict):
    """CSCS's mdtest-like test on fio's file engines, in a directory."""

    directory: str | None = None  # default: a folder beside the results
    threads: list[PositiveInt] = Field(default_factory=lambda: [1, 2, 4, 8, 16, 32])
    files_per_thread: PositiveInt = 1000
    ops: list[MetadataOp] = Field(default_factory=lambda: list(FILE_OPS))


class LatencyBound(Strict):
    value: Annotated[float, BeforeValidator(_duration), Field(gt=0)] = 0.001  # seconds
    stat: Literal["mean", "p99"] = "mean"


class Expectation(Strict):
    """An acceptance criterion: some measured point of the workload must meet every bound,
    e.g. `{workload: rw8k, min_iops: 400000, max_lat_p99: 1ms}`."""

    name: str | None = None  # as the verdict table shows it; default: built from the bounds
    workload: str = Field(min_length=1)  # a workload name or glob
    min_iops: Annotated[float, Field(gt=0)] | None = None
    min_mbps: Annotated[float, Field(gt=0)] | None = None  # MB/s = 10^6 bytes/s
    max_lat_mean: Duration | None = None
    max_lat_p99: Duration | None = None
    hosts: PositiveInt | None = None  # only points measured on this many hosts

    @model_validator(mode="after")
    def _some_bound(self) -> Expectation:
        if not any((self.min_iops, self.min_mbps, self.max_lat_mean, self.max_lat_p99)):
            raise ValueError(
                "an expectation needs a bound: min_iops, min_mbps, max_lat_mean or max_lat_p99"
            )
        return self


class Plan(Strict):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    description: str = ""
    scenario: str = Field("default", min_length=1)
    labels: dict[str, str] = Field(default_factory=dict)
    targets: list[Target] = Field(default_factory=list)
    allow_destroy: list[str] = Field(default_factory=list)
    ioengine: str = "libaio"
    direct: bool = True
    data: DataPattern = DataPattern()
    timing: Timing = Timing()
    load: Load = Load(workers=[1, 2, 4, 8, 16], iodepth=[1])
    latency_bound: LatencyBound = LatencyBound()
    fabric: Fabric | None = None
    gc_throughput: Size | None = None  # bytes/s of the array's GC, if known (else measured)
    monitor: bool = True  # sample /proc/diskstats and CPU of the targets' devices
    purge: bool = False  # SNIA: return block devices to fresh-out-of-box first (blkdiscard)
    precondition: Precondition | None = None
    rounds: Rounds | None = None
    hosts: list[Host] = Field(default_factory=list)  # empty: this machine, without fio servers
    # scaling scenarios: each a list of host names run together (S1, S2, S4 ...); default all
    host_sets: list[list[str]] | None = None
    on_host_failure: Literal["continue", "stop"] = "stop"
    # many hosts: every host's I/O starts at the same wall-clock instant, this long after the
    # point's fio command (it must cover connecting to the servers and laying out files)
    start_lead: Duration = 3.0
    interference: InterferenceTest | None = None
    metadata: MetadataTest | None = None
    workloads: list[Workload] = Field(min_length=1)
    acceptance: list[Expectation] = Field(default_factory=list)  # PASS/FAIL verdicts

    @model_validator(mode="after")
    def _unique_names(self) -> Plan:
        names = [w.name for w in self.workloads]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"workload names must be unique; repeated: {', '.join(duplicates)}")
        return self

    @model_validator(mode="after")
    def _expectations_name_workloads(self) -> Plan:
        names = [w.name for w in self.workloads]
        for e in self.acceptance:
            if not any(fnmatchcase(n, e.workload) for n in names):
                raise ValueError(
                    f"acceptance: workload {e.workload!r} matches no workload of the plan "
                    f"({', '.join(names)})"
                )
        return self

    @model_validator(mode="after")
    def _known_hosts(self) -> Plan:
        names = [h.name for h in self.hosts]
        if len(set(names)) != len(names):
            raise ValueError("host names must be unique")
        bare = [h.name for h in self.hosts if not h.targets]
        if bare and not self.targets and self.hosts:
            raise ValueError(
                f"host(s) {', '.join(bare)} have no targets: give each host `targets:` or list "
                "targets for every host at the top of the plan"
            )
        for hosts in self.host_sets or []:
            unknown = [n for n in hosts if n not in names]
            if unknown or not hosts:
                raise ValueError(
                    f"host_sets: {', '.join(unknown) or 'an empty set'} — list hosts declared "
                    "under hosts"
                )
        return self

    @model_validator(mode="after")
    def _rounds_name_workloads(self) -> Plan:
        if self.rounds is None:
            return self
        names = [w.name for w in self.workloads]
        repeated = [n for n in names if any(fnmatchcase(n, g) for g in self.rounds.workloads)]
        if self.rounds.track not in repeated:
            raise ValueError(
                f"rounds.track {self.rounds.track!r} must be one of the repeated workloads "
                f"({', '.join(repeated) or 'none matched rounds.workloads'})"
            )
        return self
