"""The plan: strict pydantic models. Unknown keys are errors; sizes and durations are parsed here.

Field names are the plan's vocabulary, not fio's: fio option names live only in `fio/`.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Annotated, Literal

from pydantic import (
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from arraybench.plan.array_monitor import ArrayMonitor
from arraybench.plan.confidence import steady_limit
from arraybench.plan.curve import CurveTest
from arraybench.plan.engine_choice import EngineName
from arraybench.plan.events import Event, event_host_errors
from arraybench.plan.links import parse_link
from arraybench.plan.scenarios import Scenario, check_scenarios
from arraybench.plan.tuning import HostTuning
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
Repeats = Annotated[int, _NUMBER, Field(strict=True), InRange(1, 100)]
REPEAT_TEXT = (
    "Measure each point this many times, the whole ladder once before it is measured again, "
    "so a drift of the target does not land on one level. Each repetition is stored with its "
    "raw files; `show --format json` gives every point `repetition`, `repeats` (how many are "
    "stored for its level), `throughput_median`, `throughput_ci95_pct` and "
    "`lat_mean_us_median`, `lat_mean_us_ci95_pct`: the median and the half-width of the 95 % "
    "Student t interval of the mean, in % of the mean (null when measured once)."
)
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

    path: PathText = Field(
        description=("The file or block device fio opens (a file is created when missing).")
    )
    # for files: the size to create/use; devices use their own size
    size: Size | None = Field(
        None,
        description=("For files: the size to create and use. Block devices use their own size."),
    )


class Ssh(Strict):
    """Start and stop `fio --server` on the host over SSH (key login only)."""

    user: str | None = Field(None, description="SSH login user (default: the current user).")
    # SSH address when it differs from the fio address
    host: str | None = Field(None, description="SSH address when it differs from the fio address.")
    port: Port = Field(22, description="SSH port.")
    # identity file
    key: str | None = Field(
        None, description="SSH identity file (key login only, never a password)."
    )
    fio: str = Field("fio", description="The fio binary on the host.")
    # `verify` on a many-host point runs arraybench's integrity writer and read-back on the
    # host over SSH: that host needs arraybench under this Python
    python: str = Field(
        "python3",
        description=(
            "The host's Python that has arraybench installed: `verify` runs its integrity "
            "writer and read-back there (`PYTHON -m arraybench.integrity...`)."
        ),
    )
    journals: str = Field(
        "arraybench-integrity",
        min_length=1,
        description=(
            "Folder on the host for `verify`'s journals of acknowledged writes (relative: in "
            "the SSH user's home); keep it off the targets' devices."
        ),
    )
    known_hosts: str | None = Field(
        None,
        description=(
            "A known_hosts file that holds the host's key (ssh -o UserKnownHostsFile, with "
            "StrictHostKeyChecking=yes); absent: ssh's own known_hosts."
        ),
    )


class Host(Strict):
    """A load host: fio's server on `address:port`, started over SSH or already running."""

    name: str = Field(
        min_length=1,
        pattern="^[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}$",
        description=("The host's name in reports and in host_sets (letters, digits, _ . -)."),
    )
    address: str = Field(
        min_length=1,
        description=(
            "The address fio's server listens on (one address: the server has no authentication)."
        ),
    )
    port: Port = Field(8765, description="fio's server port.")
    # None: "fio server already running"
    ssh: Ssh | None = Field(
        None,
        description=(
            "Start and stop `fio --server` over SSH; absent: the server is already running."
        ),
    )
    # this host's own targets (paths on the host); empty: the plan's targets, same paths on
    # every host
    targets: list[Target] = Field(
        default_factory=list,
        description=(
            "This host's own targets (paths on the host); empty: the "
            "plan's targets, same paths on every host."
        ),
    )

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

    # % of each buffer that compresses
    compressibility: Percent = Field(
        0, description=("Percent of each written buffer that compresses (0: incompressible).")
    )
    # % of buffers that repeat
    dedupe: Percent = Field(0, description="Percent of written buffers that repeat (deduplicable).")


class SteadyStop(Strict):
    """End a point as soon as it is steady (fio's steadystate), instead of after `duration`.

    Whether it did is recorded per point, with the SNIA PTS check of its last window.
    """

    metric: Literal["iops", "bw"] = Field(
        "iops", description="What must be steady: iops or bw (bandwidth)."
    )
    # % max deviation from the window mean
    limit: Share = Field(20.0, description="Maximum deviation from the window mean, in percent.")
    # the steady-state window fio watches (it checks once a second)
    window: SteadyWindow = Field(60.0, description="The steady-state window fio watches.")
    interval: Share | None = Field(
        None,
        description=(
            "End a point early only when its window's mean is known to within this % (95 % "
            "interval of the 1-second samples): fio's limit is tightened to "
            "interval x sqrt(window - 1) / t, e.g. 3 % over 60 s -> 11.4 %."
        ),
    )

    @model_validator(mode="after")
    def _interval_needs_seconds(self) -> SteadyStop:
        if self.interval is not None and self.window < 3:
            raise ValueError("interval needs a window of at least 3 s (3 samples)")
        return self

    @property
    def fio_limit(self) -> float:
        """The limit fio is given: `limit`, tighter when `interval` asks for it."""
        if self.interval is None:
            return self.limit
        return min(self.limit, steady_limit(self.interval, self.window))


class Timing(Strict):
    # warm-up per point, not measured
    ramp: RampDuration = Field(2.0, description="Warm-up per point, not measured.")
    # measured time per point (the upper bound with `steady`)
    duration: Duration = Field(
        10.0, description="Measured time per point (the upper bound with `steady`)."
    )
    steady: SteadyStop | None = Field(
        None, description=("End each point as soon as it is steady instead of after `duration`.")
    )
    log_ramp: bool = Field(
        False,
        description=(
            "Log the warm-up: run the ramp as its own fio phase just before the measured one, "
            "its 1-second samples drawn shaded on the point's chart and left out of its "
            "figures (local points without events or verify; others ramp unlogged)."
        ),
    )


class Load(Strict):
    """Load levels: workers per host x iodepth, or explicit (workers, iodepth) pairs."""

    workers: list[Jobs] | None = Field(
        None,
        description=("Workers (fio jobs) per host, one load level each; crossed with `iodepth`."),
    )
    iodepth: list[IoDepth] | None = Field(
        None, description=("I/O depth per worker, one load level each; crossed with `workers`.")
    )
    pairs: list[Annotated[tuple[Jobs, IoDepth], BeforeValidator(_pair)]] | None = Field(
        None,
        description=(
            "Explicit (workers, iodepth) load levels, e.g. [[1, 1], [4, "
            "8]]; instead of workers/iodepth."
        ),
    )
    # device-count ladder: the first N targets; "all" = 1, 2, ... up to every target
    devices: list[Count] | Literal["all"] | None = Field(
        None,
        description=(
            "Device-count ladder: run on the first N targets for each N; "
            '"all" = 1, 2, ... up to every target.'
        ),
    )
    # shared: every worker spreads its I/O over all targets (In&Out);
    # per_target: `workers` jobs on each target (dbi's numjobs per device)
    spread: Literal["shared", "per_target"] = Field(
        "shared",
        description=(
            "shared: every worker spreads its I/O over all targets; "
            "per_target: `workers` jobs on each target."
        ),
    )
    # adaptive: choose the levels from what was measured instead of running the whole ladder
    # (exact: the same optimal point as the full ladder; economy: within one step, fewer points)
    adaptive: Annotated[Literal["off", "exact", "economy"], BeforeValidator(_on_off)] = Field(
        "off",
        description=(
            "Choose load levels from what was measured instead of running "
            "the whole ladder (exact: same optimal point as the full "
            "ladder; economy: within one step, fewer points)."
        ),
    )

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

    # reserved at the end of the first target; fio's load stays out
    region: Size = Field(
        64 << 20,
        description=(
            "Reserved at the end of the first target for the verifiable "
            "writes; fio's load stays out of it."
        ),
    )
    block_size: BlockSize = Field(4096, description="Size of each verifiable block.")
    # the writer's rate (None: as fast as it goes, one at a time)
    iops: PositiveInt | None = Field(
        None,
        description=(
            "The writer's rate in writes per second (absent: as fast as "
            "it goes, one write at a time)."
        ),
    )


class Workload(Strict):
    name: Name = Field(
        description=("The workload's name (letters, digits, _ . -), unique in the plan.")
    )
    pattern: Literal["random", "sequential"] = Field(description="Access pattern.")
    bs: BlockSize = Field(description="Block size.")
    # read percentage: 100 = read only, 0 = write only
    read: Percent = Field(description="Read percentage: 100 = read only, 0 = write only.")
    region: Literal["backend", "frontend"] = Field(
        "backend",
        description=(
            "backend: the whole target; frontend: only the first "
            "`frontend_blocks` blocks (cache hits)."
        ),
    )
    # frontend = the first N blocks of each target
    frontend_blocks: Blocks = Field(
        1000, description="With region: frontend, the first N blocks of each target."
    )
    ioengine: Engine | None = Field(
        None, description="fio I/O engine for this workload (default: the plan's)."
    )
    direct: Bool | None = Field(
        None, description="O_DIRECT for this workload (default: the plan's)."
    )
    data: DataPattern | None = Field(
        None, description="What this workload's buffers contain (default: the plan's)."
    )
    # overrides the plan's load
    load: Load | None = Field(
        None, description="Load levels for this workload (default: the plan's)."
    )
    # overrides the plan's timing
    timing: Timing | None = Field(
        None, description="Timing for this workload (default: the plan's)."
    )
    # default: iops for random, mbps sequential
    metric: Literal["iops", "mbps"] | None = Field(
        None,
        description=(
            "The throughput the report ranks by (default: iops for random, mbps for sequential)."
        ),
    )
    # cliff: find the write cliff and the garbage-collection rate in this workload's points
    analysis: list[Literal["cliff", "steady"]] = Field(
        default_factory=list,
        description=(
            "Extra analyses: cliff (the write cliff and the "
            "garbage-collection rate), steady (SNIA steady state)."
        ),
    )
    # a pause after each point: a duration, or "gc" = bytes the point wrote / the GC rate
    pause_after: Wait | Literal["gc"] = Field(
        0.0,
        description=(
            'A pause after each point: a duration, or "gc" = bytes the point wrote / the GC rate.'
        ),
    )
    # cap per worker (a base load, a rate-limited test)
    rate_iops: PositiveInt | None = Field(
        None, description="IOPS cap per worker (a base load, a rate-limited test)."
    )
    # the report row / section this curve belongs to (default: derived)
    group: Label | None = Field(
        None,
        description=(
            "The report row / section this curve belongs to (default: derived from the name)."
        ),
    )
    # curves with the same chart are also drawn together, one line each
    chart: Label | None = Field(
        None,
        description=("Curves with the same chart name are also drawn together, one line each."),
    )
    # failures and disturbances injected while the load runs (see plan/events.py)
    events: list[Event] = Field(
        default_factory=list,
        description=(
            "Failures and disturbances injected while the load runs (see docs/failure-tests.md)."
        ),
    )
    repeat: Repeats | None = Field(
        None, description="Repetitions of this workload's points (default: the plan's repeat)."
    )
    # prove no acknowledged write was lost (see integrity/)
    verify: Verify | None = Field(
        None,
        description=(
            "Prove no acknowledged write was lost: checkable writes "
            "beside the load, read back after the point."
        ),
    )

    @model_validator(mode="after")
    def _frontend_fits(self) -> Workload:
        if self.region == "frontend" and self.frontend_blocks * self.bs > MAX_SIZE:
            raise ValueError(
                f"frontend_blocks x bs is more than {MAX_SIZE >> 60} EiB: use fewer blocks"
            )
        return self


class Fabric(Strict):
    """The links between one host and the storage: a ceiling for the charts."""

    # e.g. "4 x FC 16G", "2 x 25GbE iSCSI"
    links: list[str] = Field(
        min_length=1,
        description=(
            'The links between one host and the storage, e.g. "4 x FC 16G", "2 x 25GbE iSCSI".'
        ),
    )
    mtu: Mtu = Field(1500, description="MTU of the links, in bytes.")

    @field_validator("links")
    @classmethod
    def _known_links(cls, links: list[str]) -> list[str]:
        for text in links:
            parse_link(text)  # ValueError says which forms are accepted
        return links


class Precondition(Strict):
    """SNIA workload-independent preconditioning: write the targets `passes` times over."""

    passes: Passes = Field(2.0, description="How many times the targets are written over.")
    bs: BlockSize = Field(128 * 1024, description="Block size of the preconditioning writes.")
    pattern: Literal["sequential", "random"] = Field(
        "sequential", description="Access pattern of the preconditioning writes."
    )


class Rounds(Strict):
    """SNIA rounds: repeat some workloads until one of them is steady across rounds."""

    # names or globs of the repeated workloads
    workloads: list[str] = Field(
        min_length=1, description="Names or globs of the workloads repeated each round."
    )
    # the workload whose throughput must become steady
    track: str = Field(
        min_length=1,
        description=("The workload whose throughput must become steady across rounds."),
    )
    max: Steps = Field(25, description="At most this many rounds.")
    window: RoundWindow = Field(
        5,
        description=(
            "Steady when the last `window` rounds meet the SNIA criteria "
            "(so at least this many rounds)."
        ),
    )

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

    base_bs: BlockSize = Field(8192, description="Block size of the base load.")
    base_read: Percent = Field(50, description="Read percentage of the base load.")
    # total over all base jobs
    base_rate_iops: PositiveInt = Field(
        40000, description="Rate of the base load in IOPS, total over all base jobs."
    )
    base_jobs: Jobs = Field(4, description="fio jobs of the base load.")
    base_iodepth: IoDepth = Field(8, description="I/O depth of each base job.")
    bg_bs: BlockSize = Field(1 << 20, description="Block size of the background streams.")
    bg_read: Percent = Field(100, description="Read percentage of the background streams.")
    # added by each step
    bg_rate_iops: PositiveInt = Field(1000, description="IOPS added by each background step.")
    steps: Steps = Field(
        5, description="Background steps (each adds one stream at `bg_rate_iops`)."
    )
    bg_iodepth: IoDepth = Field(4, description="I/O depth of each background stream.")
    interval: Duration = Field(60.0, description="Length of each step.")
    # % for the verdict
    max_latency_increase: Increase = Field(
        20.0,
        description=("Verdict bound: the base load's latency may rise by at most this percent."),
    )

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

    # default: a folder beside the results
    directory: PathText | None = Field(
        None,
        description=("Directory the files are created in (default: a folder beside the results)."),
    )
    threads: list[Jobs] = Field(
        default_factory=lambda: [1, 2, 4, 8, 16, 32], description="Thread counts, one level each."
    )
    files_per_thread: Files = Field(
        1000, description="Files each thread creates, stats and deletes."
    )
    ops: list[MetadataOp] = Field(
        default_factory=lambda: list(FILE_OPS), description="Operations measured, in order."
    )


class LatencyBound(Strict):
    # seconds
    value: Latency = Field(
        0.001, description="The latency bound of the latency-bounded throughput."
    )
    stat: Literal["mean", "p99"] = Field(
        "mean", description="Which latency statistic must stay under the bound."
    )


class Expectation(Strict):
    """An acceptance criterion: some measured point of the workload must meet every bound,
    e.g. `{workload: rw8k, min_iops: 400000, max_lat_p99: 1ms}`."""

    # as the verdict table shows it; default: built from the bounds
    name: Label | None = Field(
        None, description=("As the verdict table shows it (default: built from the bounds).")
    )
    # a workload name or glob
    workload: str = Field(min_length=1, description="A workload name or glob.")
    min_iops: Rate | None = Field(
        None, description="Some point must reach at least this many IOPS."
    )
    # MB/s = 10^6 bytes/s
    min_mbps: Rate | None = Field(
        None,
        description=("Some point must reach at least this throughput, in MB/s (10^6 bytes/s)."),
    )
    max_lat_mean: Latency | None = Field(None, description="...with a mean latency at most this.")
    max_lat_p99: Latency | None = Field(
        None, description="...with a 99th percentile latency at most this."
    )
    # only points measured on this many hosts
    hosts: Count | None = Field(None, description="Only points measured on this many hosts.")

    @model_validator(mode="after")
    def _some_bound(self) -> Expectation:
        if not any((self.min_iops, self.min_mbps, self.max_lat_mean, self.max_lat_p99)):
            raise ValueError(
                "an expectation needs a bound: min_iops, min_mbps, max_lat_mean or max_lat_p99"
            )
        return self


class ReportOptions(Strict):
    """How the report names its headline figures."""

    headline_includes_flagged: Bool = Field(
        False,
        description=(
            "Let points with validity flags (e.g. generator-bound) be the optimal point, the "
            "maximum and the summary's figures, in the report, in `compare` and in acceptance "
            "verdicts; by default they are left out of them (still drawn and listed, marked "
            "as flagged)."
        ),
    )


class Plan(Strict):
    name: Name = Field(
        description=(
            "The plan's name (letters, digits, _ . -): runs and reports are named after it."
        )
    )
    description: str = Field(
        "",
        max_length=10000,
        description=("What the plan measures, shown by `arraybench templates` and in reports."),
    )
    scenario: Label = Field(
        "default",
        description=("Scenario label of the run (e.g. baseline, dedupe-on): compare runs by it."),
    )
    labels: dict[Label, Annotated[Label, BeforeValidator(_label_value)]] = Field(
        default_factory=dict, description="Free key/value labels stored with the run."
    )
    targets: list[Target] = Field(
        default_factory=list,
        description=(
            "Files or block devices under test (empty: a scratch file beside the results)."
        ),
    )
    allow_destroy: list[PathText] = Field(
        default_factory=list,
        description=(
            "Targets that may be overwritten although they carry data, or cannot be examined "
            "(every written target of a host without `ssh`): paths, matched resolved "
            "(locally) or normalised (on a host)."
        ),
    )
    engine: EngineName = Field(
        "fio",
        description=(
            "The load engine that runs the points (docs/engines.md); `hosts`, "
            "`interference` and `metadata` run on fio only."
        ),
    )
    ioengine: Engine = Field("libaio", description="fio I/O engine.")
    direct: Bool = Field(True, description="O_DIRECT I/O (bypass the page cache).")
    data: DataPattern = Field(
        DataPattern(),
        description=("What the written buffers contain (incompressible unless asked otherwise)."),
    )
    timing: Timing = Field(Timing(), description="Ramp and measured time of each point.")
    load: Load = Field(
        Load(workers=[1, 2, 4, 8, 16], iodepth=[1]),
        description="Load levels: workers x iodepth, or explicit pairs.",
    )
    latency_bound: LatencyBound = Field(
        LatencyBound(), description="The bound of the latency-bounded throughput in the summary."
    )
    fabric: Fabric | None = Field(
        None, description="The links to the storage: a ceiling drawn on the charts."
    )
    # bytes/s of the array's GC, if known (else measured)
    gc_throughput: Size | None = Field(
        None,
        description=(
            "Bytes/s the array's garbage collection processes, if known "
            "(else measured by the cliff analysis)."
        ),
    )
    # sample /proc/diskstats and CPU of the targets' devices
    monitor: Bool = Field(
        True,
        description=("Sample /proc/diskstats and CPU of the targets' devices during each point."),
    )
    array_monitor: ArrayMonitor | None = Field(
        None,
        description="The array's own counters pulled during the run (Prometheus query_range "
        "over each point, or a command printing samples), stored beside fio's figures.",
    )
    host_tuning: HostTuning | None = Field(
        None,
        description="Block queue settings (scheduler, nr_requests, read_ahead_kb ...) set on the "
        "targets' devices for the run, restored after it (also by `arraybench revert`).",
    )
    # SNIA: return block devices to fresh-out-of-box first (blkdiscard)
    purge: Bool = Field(
        False, description=("SNIA: return block devices to fresh-out-of-box first (blkdiscard).")
    )
    precondition: Precondition | None = Field(
        None, description=("SNIA workload-independent preconditioning before the first point.")
    )
    rounds: Rounds | None = Field(
        None, description=("SNIA rounds: repeat some workloads until one of them is steady.")
    )
    # empty: this machine, without fio servers
    hosts: list[Host] = Field(
        default_factory=list,
        description=("Load hosts running fio's server (empty: this machine, without fio servers)."),
    )
    # scaling scenarios: each a list of host names run together (S1, S2, S4 ...); default all
    host_sets: list[list[str]] | None = Field(
        None,
        description=(
            "Scaling scenarios: each a list of host names run together "
            "(S1, S2, S4 ...); default: all hosts."
        ),
    )
    on_host_failure: Literal["continue", "stop"] = Field(
        "stop",
        description=("When a host fails during a point: stop the run, or continue on the others."),
    )
    # many hosts: every host's I/O starts at the same wall-clock instant, this long after the
    # point's fio command (it must cover connecting to the servers and laying out files)
    start_lead: Annotated[float, _SECONDS, InRange(MIN_FIO_SECONDS, 3600.0, unit="s")] = Field(
        3.0,
        description=(
            "Many hosts: every host's I/O starts at the same instant this "
            "long after the point's fio command."
        ),
    )
    max_start_spread: Annotated[float, _SECONDS, InRange(MIN_FIO_SECONDS, 3600.0, unit="s")] = (
        Field(
            1.0,
            description=(
                "Many hosts: a point whose hosts started their I/O further apart than this "
                "is flagged start-spread (its per-second data do not line up)."
            ),
        )
    )
    interference: InterferenceTest | None = Field(
        None,
        description=(
            "dbi's interference test: a rate-limited base load with "
            "background streams added in steps."
        ),
    )
    metadata: MetadataTest | None = Field(
        None,
        description=("CSCS's metadata test (create, stat, delete files) on fio's file engines."),
    )
    curve: CurveTest | None = Field(
        None,
        description="vdbench's iorate=curve (SPC-1's response-time curve): after the grid, "
        "each workload at its maximum's load level, rate-limited to percentages of that "
        "maximum; latency against the IOPS achieved (plan/curve.py).",
    )
    repeat: Repeats = Field(1, description=REPEAT_TEXT)
    report: ReportOptions = Field(
        ReportOptions(), description="How the report names its headline figures."
    )
    scenarios: list[Scenario] | None = Field(
        None,
        min_length=1,
        description="Set-ups measured one after the other in this campaign (In&Out's "
        "controller tests): every workload's series runs in every scenario, between its "
        "`before` and `after` steps; the report tables each workload's maximum per scenario "
        "against the first (plan/scenarios.py).",
    )
    workloads: list[Workload] = Field(
        min_length=1, description="The workloads, each run at every load level."
    )

    @field_validator("scenarios")
    @classmethod
    def _scenarios(cls, scenarios: list[Scenario] | None, info: ValidationInfo) -> object:
        # fields declared above `scenarios` are in info.data: the error stays located there
        hosts = info.data.get("hosts") or []
        extra = any(info.data.get(k) for k in ("rounds", "interference", "metadata"))
        check_scenarios(scenarios or [], {h.name: h.ssh is not None for h in hosts}, extra)
        return scenarios

    # PASS/FAIL verdicts
    acceptance: list[Expectation] = Field(
        default_factory=list,
        description=(
            "Acceptance criteria: PASS/FAIL verdicts (exit code 3 when one fails). With "
            "repeats, each is judged on the levels' medians and states its margin; a bound "
            "inside the 95 % interval is NOT DECIDABLE (exit code 3 too: repeat more). "
            "Flagged points prove nothing (report.headline_includes_flagged): when only "
            "flagged points would pass, the verdict is NOT DECIDABLE and names them."
        ),
    )

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
    def _events_name_hosts(self) -> Plan:
        ssh = {h.name: h.ssh is not None for h in self.hosts}
        found = event_host_errors([w.events for w in self.workloads], ssh)
        if found:  # located at the event's host field (a plain ValueError names only the plan)
            raise ValidationError.from_exception_data("Plan", [
                InitErrorDetails(type=PydanticCustomError("event_host", message),
                                 loc=("workloads", *loc), input=None)
                for loc, message in found])  # fmt: skip
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
