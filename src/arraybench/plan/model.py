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
    _NUMBER,
    _REAL,
    _SECONDS,
    MAX_FIO_INT,
    MAX_JOBS,
    MAX_NAME,
    MAX_SECONDS,
    MAX_SIZE,
    MIN_FIO_SECONDS,
    BlockSize,
    Bool,
    Duration,
    InRange,
    IoDepth,
    Jobs,
    Latency,
    Percent,
    Port,
    PositiveInt,
    RampDuration,
    Size,
    Strict,
    Wait,
)

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"
LABEL_PATTERN = r"^[^\x00-\x1f\x7f]*$"
ENGINE_PATTERN = r"^[A-Za-z0-9_.:/+\-]+$"
# names become parts of file and folder names: a safe character set and a length limit
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME, pattern=NAME_PATTERN)]
# one line of text shown in tables and reports: no control characters (newlines, escapes)
Label = Annotated[str, Field(min_length=1, max_length=200, pattern=LABEL_PATTERN)]
PathText = Annotated[str, Field(min_length=1, max_length=4096)]  # PATH_MAX
# fio engine names, `external:/path/engine.so` included; nothing fio would read as syntax
Engine = Annotated[str, Field(min_length=1, max_length=256, pattern=ENGINE_PATTERN)]
Count = Annotated[int, _NUMBER, Field(strict=True), InRange(1, MAX_JOBS)]
Share = Annotated[float, _REAL, Field(strict=True), InRange(0, 100, low_open=True)]  # a %, > 0
Blocks = Annotated[int, _NUMBER, Field(strict=True), InRange(1, MAX_SIZE)]
Rate = Annotated[float, _REAL, Field(strict=True), InRange(0, 1e12, low_open=True)]  # > 0
Mtu = Annotated[int, _NUMBER, Field(strict=True), InRange(68, 65535)]
Passes = Annotated[float, _REAL, Field(strict=True), InRange(0, 1000, low_open=True)]
Steps = Annotated[int, _NUMBER, Field(strict=True), InRange(1, 1000)]  # rounds, steps
RoundWindow = Annotated[int, _NUMBER, Field(strict=True), InRange(2, 1000)]
Increase = Annotated[float, _REAL, Field(strict=True), InRange(0, 1e6, low_open=True)]  # %
Files = Annotated[int, _NUMBER, Field(strict=True), InRange(1, 10**7)]
SteadyWindow = Annotated[
    float, _SECONDS, InRange(1.0, MAX_SECONDS, "fio checks steady state every second", "s")
]


def _label_value(value: object) -> object:
    # `labels: {year: 2024}` is natural YAML: numbers become text; booleans stay refused
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def _pair(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def _on_off(value: object) -> object:
    # YAML 1.1 reads a bare `off` as false (and `on` as true)
    return {False: "off", True: "exact"}.get(value, value) if isinstance(value, bool) else value


class Target(Strict):
    """A file or a block device. Files are created at `size` when missing."""

    path: PathText
    size: Size | None = None  # for files: the size to create/use; devices use their own size


class Ssh(Strict):
    """Start and stop `fio --server` on the host over SSH (key login only)."""

    user: str | None = None
    host: str | None = None  # SSH address when it differs from the fio address
    port: Port = 22
    key: str | None = None  # identity file
    fio: str = "fio"


class Host(Strict):
    """A load host: fio's server on `address:port`, started over SSH or already running."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
    address: str = Field(min_length=1)
    port: Port = 8765
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
    limit: Share = 20.0  # % max deviation from the window mean
    # the steady-state window fio watches (it checks once a second)
    window: SteadyWindow = 60.0


class Timing(Strict):
    ramp: RampDuration = 2.0  # warm-up per point, not measured
    duration: Duration = 10.0  # measured time per point (the upper bound with `steady`)
    steady: SteadyStop | None = None


class Load(Strict):
    """Load levels: workers per host x iodepth, or explicit (workers, iodepth) pairs."""

    workers: list[Jobs] | None = None
    iodepth: list[IoDepth] | None = None
    pairs: list[Annotated[tuple[Jobs, IoDepth], BeforeValidator(_pair)]] | None = None
    # device-count ladder: the first N targets; "all" = 1, 2, ... up to every target
    devices: list[Count] | Literal["all"] | None = None
    # shared: every worker spreads its I/O over all targets (In&Out);
    # per_target: `workers` jobs on each target (dbi's numjobs per device)
    spread: Literal["shared", "per_target"] = "shared"
    # adaptive: choose the levels from what was measured instead of running the whole ladder
    # (exact: the same optimal point as the full ladder; economy: within one step, fewer points)
    adaptive: Annotated[Literal["off", "exact", "economy"], BeforeValidator(_on_off)] = "off"

    @model_validator(mode="after")
    def _one_form(self) -> Load:
        if self.pairs is not None and (self.workers is not None or self.iodepth is not None):
            raise ValueError(
                "give either pairs or workers/iodepth lists, not both (on the command line, "
                "--set load.workers=[...] replaces load.pairs, and --set load.pairs=[[W, D]] "
                "replaces workers and iodepth)"
            )
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
    block_size: BlockSize = 4096
    iops: PositiveInt | None = None  # the writer's rate (None: as fast as it goes, one at a time)


class Workload(Strict):
    name: Name
    pattern: Literal["random", "sequential"]
    bs: BlockSize
    read: Percent  # read percentage: 100 = read only, 0 = write only
    region: Literal["backend", "frontend"] = "backend"
    frontend_blocks: Blocks = 1000  # frontend = the first N blocks of each target
    ioengine: Engine | None = None
    direct: Bool | None = None
    data: DataPattern | None = None
    load: Load | None = None  # overrides the plan's load
    timing: Timing | None = None  # overrides the plan's timing
    metric: Literal["iops", "mbps"] | None = None  # default: iops for random, mbps sequential
    # cliff: find the write cliff and the garbage-collection rate in this workload's points
    analysis: list[Literal["cliff", "steady"]] = Field(default_factory=list)
    # a pause after each point: a duration, or "gc" = bytes the point wrote / the GC rate
    pause_after: Wait | Literal["gc"] = 0.0
    rate_iops: PositiveInt | None = None  # cap per worker (a base load, a rate-limited test)
    group: Label | None = None  # the report row / section this curve belongs to (default: derived)
    chart: Label | None = None  # curves with the same chart are also drawn together, one line each
    # failures and disturbances injected while the load runs (see plan/events.py)
    events: list[Event] = Field(default_factory=list)
    verify: Verify | None = None  # prove no acknowledged write was lost (see integrity/)

    @model_validator(mode="after")
    def _frontend_fits(self) -> Workload:
        if self.region == "frontend" and self.frontend_blocks * self.bs > MAX_SIZE:
            raise ValueError(
                f"frontend_blocks x bs is more than {MAX_SIZE >> 60} EiB: use fewer blocks"
            )
        return self


class Fabric(Strict):
    """The links between one host and the storage: a ceiling for the charts."""

    links: list[str] = Field(min_length=1)  # e.g. "4 x FC 16G", "2 x 25GbE iSCSI"
    mtu: Mtu = 1500

    @field_validator("links")
    @classmethod
    def _known_links(cls, links: list[str]) -> list[str]:
        for text in links:
            parse_link(text)  # ValueError says which forms are accepted
        return links


class Precondition(Strict):
    """SNIA workload-independent preconditioning: write the targets `passes` times over."""

    passes: Passes = 2.0
    bs: BlockSize = 128 * 1024
    pattern: Literal["sequential", "random"] = "sequential"


class Rounds(Strict):
    """SNIA rounds: repeat some workloads until one of them is steady across rounds."""

    workloads: list[str] = Field(min_length=1)  # names or globs of the repeated workloads
    track: str = Field(min_length=1)  # the workload whose throughput must become steady
    max: Steps = 25
    window: RoundWindow = 5

    @model_validator(mode="after")
    def _window_fits(self) -> Rounds:
        if self.window > self.max:
            raise ValueError(
                f"window {self.window} is more than max {self.max}: steady state could never "
                "be proven"
            )
        return self


class InterferenceTest(Strict):
    """dbi's mixed workload: a rate-limited base load, background streams added in steps."""

    base_bs: BlockSize = 8192
    base_read: Percent = 50
    base_rate_iops: PositiveInt = 40000  # total over all base jobs
    base_jobs: Jobs = 4
    base_iodepth: IoDepth = 8
    bg_bs: BlockSize = 1 << 20
    bg_read: Percent = 100
    bg_rate_iops: PositiveInt = 1000  # added by each step
    steps: Steps = 5
    bg_iodepth: IoDepth = 4
    interval: Duration = 60.0
    max_latency_increase: Increase = 20.0  # % for the verdict

    @model_validator(mode="after")
    def _fio_can_run_it(self) -> InterferenceTest:
        if self.base_jobs + self.steps > MAX_JOBS:  # one background job per step
            raise ValueError(
                f"base_jobs + steps = {self.base_jobs + self.steps}: fio runs at most "
                f"{MAX_JOBS} jobs"
            )
        if self.bg_rate_iops * self.steps > MAX_FIO_INT:
            raise ValueError(f"bg_rate_iops x steps is over fio's limit of {MAX_FIO_INT} IOPS")
        return self


MetadataOp = Literal["create", "stat", "delete", "dir-create", "dir-stat", "dir-delete"]
FILE_OPS: tuple[MetadataOp, ...] = ("create", "stat", "delete")


class MetadataTest(Strict):
    """CSCS's mdtest-like test on fio's file engines, in a directory."""

    directory: PathText | None = None  # default: a folder beside the results
    threads: list[Jobs] = Field(default_factory=lambda: [1, 2, 4, 8, 16, 32])
    files_per_thread: Files = 1000
    ops: list[MetadataOp] = Field(default_factory=lambda: list(FILE_OPS))


class LatencyBound(Strict):
    value: Latency = 0.001  # seconds
    stat: Literal["mean", "p99"] = "mean"


class Expectation(Strict):
    """An acceptance criterion: some measured point of the workload must meet every bound,
    e.g. `{workload: rw8k, min_iops: 400000, max_lat_p99: 1ms}`."""

    name: Label | None = None  # as the verdict table shows it; default: built from the bounds
    workload: str = Field(min_length=1)  # a workload name or glob
    min_iops: Rate | None = None
    min_mbps: Rate | None = None  # MB/s = 10^6 bytes/s
    max_lat_mean: Latency | None = None
    max_lat_p99: Latency | None = None
    hosts: Count | None = None  # only points measured on this many hosts

    @model_validator(mode="after")
    def _some_bound(self) -> Expectation:
        if not any((self.min_iops, self.min_mbps, self.max_lat_mean, self.max_lat_p99)):
            raise ValueError(
                "an expectation needs a bound: min_iops, min_mbps, max_lat_mean or max_lat_p99"
            )
        return self


class Plan(Strict):
    name: Name
    description: str = Field("", max_length=10_000)
    scenario: Label = "default"
    labels: dict[Label, Annotated[Label, BeforeValidator(_label_value)]] = Field(
        default_factory=dict
    )
    targets: list[Target] = Field(default_factory=list)
    allow_destroy: list[PathText] = Field(default_factory=list)
    ioengine: Engine = "libaio"
    direct: Bool = True
    data: DataPattern = DataPattern()
    timing: Timing = Timing()
    load: Load = Load(workers=[1, 2, 4, 8, 16], iodepth=[1])
    latency_bound: LatencyBound = LatencyBound()
    fabric: Fabric | None = None
    gc_throughput: Size | None = None  # bytes/s of the array's GC, if known (else measured)
    monitor: Bool = True  # sample /proc/diskstats and CPU of the targets' devices
    purge: Bool = False  # SNIA: return block devices to fresh-out-of-box first (blkdiscard)
    precondition: Precondition | None = None
    rounds: Rounds | None = None
    hosts: list[Host] = Field(default_factory=list)  # empty: this machine, without fio servers
    # scaling scenarios: each a list of host names run together (S1, S2, S4 ...); default all
    host_sets: list[list[str]] | None = None
    on_host_failure: Literal["continue", "stop"] = "stop"
    # many hosts: every host's I/O starts at the same wall-clock instant, this long after the
    # point's fio command (it must cover connecting to the servers and laying out files)
    start_lead: Annotated[float, _SECONDS, InRange(MIN_FIO_SECONDS, 3600.0, unit="s")] = 3.0
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
