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

    path: str = Field(
        min_length=1,
        description="The file or block device fio opens (a file is created when missing).",
    )
    size: Size | None = Field(
        None, description="For files: the size to create and use. Block devices use their own size."
    )


class Ssh(Strict):
    """Start and stop `fio --server` on the host over SSH (key login only)."""

    user: str | None = Field(None, description="SSH login user (default: the current user).")
    host: str | None = Field(None, description="SSH address when it differs from the fio address.")
    port: PositiveInt = Field(22, description="SSH port.")
    key: str | None = Field(
        None, description="SSH identity file (key login only, never a password)."
    )
    fio: str = Field("fio", description="The fio binary on the host.")


class Host(Strict):
    """A load host: fio's server on `address:port`, started over SSH or already running."""

    name: str = Field(
        min_length=1,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$",
        description="The host's name in reports and in host_sets (letters, digits, _ . -).",
    )
    address: str = Field(
        min_length=1,
        description=(
            "The address fio's server listens on (one address: the server has no authentication)."
        ),
    )
    port: Annotated[int, Field(gt=0, lt=65536)] = Field(8765, description="fio's server port.")
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
            "This host's own targets (paths on the host); empty: the plan's targets, same paths "
            "on every host."
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

    compressibility: Percent = Field(
        0, description="Percent of each written buffer that compresses (0: incompressible)."
    )
    dedupe: Percent = Field(0, description="Percent of written buffers that repeat (deduplicable).")


class SteadyStop(Strict):
    """End a point as soon as it is steady (fio's steadystate), instead of after `duration`.

    Whether it did is recorded per point, with the SNIA PTS check of its last window.
    """

    metric: Literal["iops", "bw"] = Field(
        "iops", description="What must be steady: iops or bw (bandwidth)."
    )
    limit: Annotated[float, Field(gt=0, le=100)] = Field(
        20.0, description="Maximum deviation from the window mean, in percent."
    )
    window: Duration = Field(60.0, description="The steady-state window fio watches.")


class Timing(Strict):
    ramp: RampDuration = Field(2.0, description="Warm-up per point, not measured.")
    duration: Duration = Field(
        10.0, description="Measured time per point (the upper bound with `steady`)."
    )
    steady: SteadyStop | None = Field(
        None, description="End each point as soon as it is steady instead of after `duration`."
    )


class Load(Strict):
    """Load levels: workers per host x iodepth, or explicit (workers, iodepth) pairs."""

    workers: list[PositiveInt] | None = Field(
        None,
        description="Workers (fio jobs) per host, one load level each; crossed with `iodepth`.",
    )
    iodepth: list[PositiveInt] | None = Field(
        None, description="I/O depth per worker, one load level each; crossed with `workers`."
    )
    pairs: list[tuple[PositiveInt, PositiveInt]] | None = Field(
        None,
        description=(
            "Explicit (workers, iodepth) load levels, e.g. [[1, 1], [4, 8]]; instead of "
            "workers/iodepth."
        ),
    )
    # device-count ladder: the first N targets; "all" = 1, 2, ... up to every target
    devices: list[PositiveInt] | Literal["all"] | None = Field(
        None,
        description=(
            'Device-count ladder: run on the first N targets for each N; "all" = 1, 2, ... up to '
            "every target."
        ),
    )
    # shared: every worker spreads its I/O over all targets (In&Out);
    # per_target: `workers` jobs on each target (dbi's numjobs per device)
    spread: Literal["shared", "per_target"] = Field(
        "shared",
        description=(
            "shared: every worker spreads its I/O over all targets; per_target: `workers` jobs on"
            " each target."
        ),
    )
    # adaptive: choose the levels from what was measured instead of running the whole ladder
    # (exact: the same optimal point as the full ladder; economy: within one step, fewer points)
    adaptive: Annotated[Literal["off", "exact", "economy"], BeforeValidator(_on_off)] = Field(
        "off",
        description=(
            "Choose load levels from what was measured instead of running the whole ladder "
            "(exact: same optimal point as the full ladder; economy: within one step, fewer "
            "points)."
        ),
    )

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

    region: Size = Field(
        64 << 20,
        description=(
            "Reserved at the end of the first target for the verifiable writes; fio's load stays "
            "out of it."
        ),
    )
    block_size: Size = Field(4096, description="Size of each verifiable block.")
    iops: PositiveInt | None = Field(
        None,
        description=(
            "The writer's rate in writes per second (absent: as fast as it goes, one write at a "
            "time)."
        ),
    )


class Workload(Strict):
    name: str = Field(
        min_length=1,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$",
        description="The workload's name (letters, digits, _ . -), unique in the plan.",
    )
    pattern: Literal["random", "sequential"] = Field(description="Access pattern.")
    bs: Size = Field(description="Block size.")
    read: Percent = Field(description="Read percentage: 100 = read only, 0 = write only.")
    region: Literal["backend", "frontend"] = Field(
        "backend",
        description=(
            "backend: the whole target; frontend: only the first `frontend_blocks` blocks (cache "
            "hits)."
        ),
    )
    frontend_blocks: PositiveInt = Field(
        1000, description="With region: frontend, the first N blocks of each target."
    )
    ioengine: str | None = Field(
        None, description="fio I/O engine for this workload (default: the plan's)."
    )
    direct: bool | None = Field(
        None, description="O_DIRECT for this workload (default: the plan's)."
    )
    data: DataPattern | None = Field(
        None, description="What this workload's buffers contain (default: the plan's)."
    )
    load: Load | None = Field(
        None, description="Load levels for this workload (default: the plan's)."
    )
    timing: Timing | None = Field(
        None, description="Timing for this workload (default: the plan's)."
    )
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
            "Extra analyses: cliff (the write cliff and the garbage-collection rate), steady "
            "(SNIA steady state)."
        ),
    )
    # a pause after each point: a duration, or "gc" = bytes the point wrote / the GC rate
    pause_after: Annotated[float, BeforeValidator(_duration), Field(ge=0)] | Literal["gc"] = Field(
        0.0,
        description=(
            'A pause after each point: a duration, or "gc" = bytes the point wrote / the GC rate.'
        ),
    )
    rate_iops: PositiveInt | None = Field(
        None, description="IOPS cap per worker (a base load, a rate-limited test)."
    )
    group: str | None = Field(
        None,
        description=(
            "The report row / section this curve belongs to (default: derived from the name)."
        ),
    )
    chart: str | None = Field(
        None, description="Curves with the same chart name are also drawn together, one line each."
    )
    # failures and disturbances injected while the load runs (see plan/events.py)
    events: list[Event] = Field(
        default_factory=list,
        description=(
            "Failures and disturbances injected while the load runs (see docs/failure-tests.md)."
        ),
    )
    verify: Verify | None = Field(
        None,
        description=(
            "Prove no acknowledged write was lost: checkable writes beside the load, read back "
            "after the point."
        ),
    )


class Fabric(Strict):
    """The links between one host and the storage: a ceiling for the charts."""

    links: list[str] = Field(
        min_length=1,
        description=(
            'The links between one host and the storage, e.g. "4 x FC 16G", "2 x 25GbE iSCSI".'
        ),
    )
    mtu: PositiveInt = Field(1500, description="MTU of the links, in bytes.")

    @field_validator("links")
    @classmethod
    def _known_links(cls, links: list[str]) -> list[str]:
        for text in links:
            parse_link(text)  # ValueError says which forms are accepted
        return links


class Precondition(Strict):
    """SNIA workload-independent preconditioning: write the targets `passes` times over."""

    passes: Annotated[float, Field(gt=0)] = Field(
        2.0, description="How many times the targets are written over."
    )
    bs: Size = Field(128 * 1024, description="Block size of the preconditioning writes.")
    pattern: Literal["sequential", "random"] = Field(
        "sequential", description="Access pattern of the preconditioning writes."
    )


class Rounds(Strict):
    """SNIA rounds: repeat some workloads until one of them is steady across rounds."""

    workloads: list[str] = Field(
        min_length=1, description="Names or globs of the workloads repeated each round."
    )
    track: str = Field(
        min_length=1, description="The workload whose throughput must become steady across rounds."
    )
    max: PositiveInt = Field(25, description="At most this many rounds.")
    window: Annotated[int, Field(ge=2)] = Field(
        5,
        description=(
            "Steady when the last `window` rounds meet the SNIA criteria (so at least this many "
            "rounds)."
        ),
    )


class InterferenceTest(Strict):
    """dbi's mixed workload: a rate-limited base load, background streams added in steps."""

    base_bs: Size = Field(8192, description="Block size of the base load.")
    base_read: Percent = Field(50, description="Read percentage of the base load.")
    base_rate_iops: PositiveInt = Field(
        40000, description="Rate of the base load in IOPS, total over all base jobs."
    )
    base_jobs: PositiveInt = Field(4, description="fio jobs of the base load.")
    base_iodepth: PositiveInt = Field(8, description="I/O depth of each base job.")
    bg_bs: Size = Field(1 << 20, description="Block size of the background streams.")
    bg_read: Percent = Field(100, description="Read percentage of the background streams.")
    bg_rate_iops: PositiveInt = Field(1000, description="IOPS added by each background step.")
    steps: PositiveInt = Field(
        5, description="Background steps (each adds one stream at `bg_rate_iops`)."
    )
    bg_iodepth: PositiveInt = Field(4, description="I/O depth of each background stream.")
    interval: Duration = Field(60.0, description="Length of each step.")
    max_latency_increase: Annotated[float, Field(gt=0)] = Field(
        20.0, description="Verdict bound: the base load's latency may rise by at most this percent."
    )


MetadataOp = Literal["create", "stat", "delete", "dir-create", "dir-stat", "dir-delete"]
FILE_OPS: tuple[MetadataOp, ...] = ("create", "stat", "delete")


class MetadataTest(Strict):
    """CSCS's mdtest-like test on fio's file engines, in a directory."""

    directory: str | None = Field(
        None,
        description="Directory the files are created in (default: a folder beside the results).",
    )
    threads: list[PositiveInt] = Field(
        default_factory=lambda: [1, 2, 4, 8, 16, 32], description="Thread counts, one level each."
    )
    files_per_thread: PositiveInt = Field(
        1000, description="Files each thread creates, stats and deletes."
    )
    ops: list[MetadataOp] = Field(
        default_factory=lambda: list(FILE_OPS), description="Operations measured, in order."
    )


class LatencyBound(Strict):
    value: Annotated[float, BeforeValidator(_duration), Field(gt=0)] = Field(
        0.001, description="The latency bound of the latency-bounded throughput."
    )
    stat: Literal["mean", "p99"] = Field(
        "mean", description="Which latency statistic must stay under the bound."
    )


class Expectation(Strict):
    """An acceptance criterion: some measured point of the workload must meet every bound,
    e.g. `{workload: rw8k, min_iops: 400000, max_lat_p99: 1ms}`."""

    name: str | None = Field(
        None, description="As the verdict table shows it (default: built from the bounds)."
    )
    workload: str = Field(min_length=1, description="A workload name or glob.")
    min_iops: Annotated[float, Field(gt=0)] | None = Field(
        None, description="Some point must reach at least this many IOPS."
    )
    min_mbps: Annotated[float, Field(gt=0)] | None = Field(
        None, description="Some point must reach at least this throughput, in MB/s (10^6 bytes/s)."
    )
    max_lat_mean: Duration | None = Field(None, description="...with a mean latency at most this.")
    max_lat_p99: Duration | None = Field(
        None, description="...with a 99th percentile latency at most this."
    )
    hosts: PositiveInt | None = Field(None, description="Only points measured on this many hosts.")

    @model_validator(mode="after")
    def _some_bound(self) -> Expectation:
        if not any((self.min_iops, self.min_mbps, self.max_lat_mean, self.max_lat_p99)):
            raise ValueError(
                "an expectation needs a bound: min_iops, min_mbps, max_lat_mean or max_lat_p99"
            )
        return self


class Plan(Strict):
    name: str = Field(
        min_length=1,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$",
        description=(
            "The plan's name (letters, digits, _ . -): runs and reports are named after it."
        ),
    )
    description: str = Field(
        "", description="What the plan measures, shown by `arraybench templates` and in reports."
    )
    scenario: str = Field(
        "default",
        min_length=1,
        description="Scenario label of the run (e.g. baseline, dedupe-on): compare runs by it.",
    )
    labels: dict[str, str] = Field(
        default_factory=dict, description="Free key/value labels stored with the run."
    )
    targets: list[Target] = Field(
        default_factory=list,
        description="Files or block devices under test (empty: a scratch file beside the results).",
    )
    allow_destroy: list[str] = Field(
        default_factory=list,
        description="Block devices that may be overwritten although they carry data (exact paths).",
    )
    ioengine: str = Field("libaio", description="fio I/O engine.")
    direct: bool = Field(True, description="O_DIRECT I/O (bypass the page cache).")
    data: DataPattern = Field(
        DataPattern(),
        description="What the written buffers contain (incompressible unless asked otherwise).",
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
    gc_throughput: Size | None = Field(
        None,
        description=(
            "Bytes/s the array's garbage collection processes, if known (else measured by the "
            "cliff analysis)."
        ),
    )
    monitor: bool = Field(
        True,
        description="Sample /proc/diskstats and CPU of the targets' devices during each point.",
    )
    purge: bool = Field(
        False, description="SNIA: return block devices to fresh-out-of-box first (blkdiscard)."
    )
    precondition: Precondition | None = Field(
        None, description="SNIA workload-independent preconditioning before the first point."
    )
    rounds: Rounds | None = Field(
        None, description="SNIA rounds: repeat some workloads until one of them is steady."
    )
    hosts: list[Host] = Field(
        default_factory=list,
        description="Load hosts running fio's server (empty: this machine, without fio servers).",
    )
    # scaling scenarios: each a list of host names run together (S1, S2, S4 ...); default all
    host_sets: list[list[str]] | None = Field(
        None,
        description=(
            "Scaling scenarios: each a list of host names run together (S1, S2, S4 ...); default:"
            " all hosts."
        ),
    )
    on_host_failure: Literal["continue", "stop"] = Field(
        "stop",
        description="When a host fails during a point: stop the run, or continue on the others.",
    )
    # many hosts: every host's I/O starts at the same wall-clock instant, this long after the
    # point's fio command (it must cover connecting to the servers and laying out files)
    start_lead: Duration = Field(
        3.0,
        description=(
            "Many hosts: every host's I/O starts at the same instant this long after the point's "
            "fio command."
        ),
    )
    interference: InterferenceTest | None = Field(
        None,
        description=(
            "dbi's interference test: a rate-limited base load with background streams added in "
            "steps."
        ),
    )
    metadata: MetadataTest | None = Field(
        None, description="CSCS's metadata test (create, stat, delete files) on fio's file engines."
    )
    workloads: list[Workload] = Field(
        min_length=1, description="The workloads, each run at every load level."
    )
    acceptance: list[Expectation] = Field(
        default_factory=list,
        description="Acceptance criteria: PASS/FAIL verdicts (exit code 3 when one fails).",
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
