"""The findings: one TypedDict per kind, the shape of its stored JSON, and typed access to it.

A neutral module like `records.py`: it imports nothing of arraybench but `records.py`,
so the analyses (below the store) write findings and the reports (above it) read them with the
same types. A writer builds a finding with `KIND.new({...})`, a reader gets the typed data with
`KIND.of(finding)` or `KIND.among(findings)`, so mypy checks every key against the kind's shape;
`check_finding` checks the keys again at run time when a finding is stored (`Store`), for the
data that reaches a writer as a plain dict (`asdict`, `as_dict`).

The JSON is what earlier versions stored: keys that older stores may lack are `NotRequired`, and
readers read them with `.get`. (No `from __future__ import annotations` here: on Python 3.11 a
TypedDict only knows its NotRequired keys when the annotations are evaluated.)
"""

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Generic, NotRequired, TypedDict, TypeVar, cast

from arraybench.records import Finding


class FindingKeyError(ValueError):
    """A finding whose keys are not its kind's: a bug in its writer, raised before storing."""


# per point, from the 1-second series (analysis.findings) -----------------------------------
class CliffFinding(TypedDict):
    """`cliff`: the write cliff (analysis.cliff.CliffResult's fields when found)."""

    found: bool
    seconds: int  # samples in the series
    time_s: NotRequired[float]
    level_before: NotRequired[float]
    level_after: NotRequired[float]
    drop_pct: NotRequired[float]
    gb_written_at_cliff: NotRequired[float | None]
    recovered: NotRequired[bool]
    recovery_time_s: NotRequired[float | None]
    level_recovered: NotRequired[float | None]
    level_min: NotRequired[float | None]
    low_end_s: NotRequired[float | None]
    gc_bytes_per_s: NotRequired[float | None]


class SteadyFields(TypedDict):
    """analysis.steady.SteadyResult's fields, as `steady` and `rounds` store them."""

    steady: bool
    window_start: int | None
    window_end: int | None
    average: float | None
    range_excursion: float | None
    slope: float | None
    slope_excursion: float | None
    intercept: float | None


class SteadyFinding(SteadyFields):
    """`steady`: SNIA criteria on the last `window` 1-second IOPS of a point, averaged into
    `rounds` equal rounds (analysis.steady.scaled_steady; absent: one second a round)."""

    window: int
    samples: int
    rounds: NotRequired[int]


class KernelCheckData(TypedDict):
    """fio's and the kernel's means over the same whole seconds (analysis.kernelcheck)."""

    seconds: int
    fio_iops: float
    kernel_iops: float
    fio_mbps: float
    kernel_mbps: float
    iops_held: bool  # a gap of the means held second by second (the per-second median too)
    mbps_held: bool


class MonitorFinding(TypedDict):
    """`monitor`: the kernel's view of the targets beside fio's: the monitor's own lines, and
    (since issue 35) the comparison every flag and column reads (`check`)."""

    flags: list[str]
    devices: list[str]
    check: NotRequired[KernelCheckData]


class FlagData(TypedDict):
    kind: str
    why: str
    change: str


class ValidityFinding(TypedDict):
    """`validity`: why a point's figures may not be what they seem (analysis.validity)."""

    flags: list[FlagData]


class ReductionData(TypedDict):
    """Ratios x:1 at a granule (engines.fio.datasample.Reduction, run/data_reduction.py)."""

    compression: float
    dedupe: float
    granule_bytes: int


class WorkloadData(TypedDict):
    """One writing workload's data: the ratios requested and those its fio sample reached."""

    requested: ReductionData
    preset: str | None
    bs: int
    achieved: ReductionData | None  # None: the sample could not be written (error)
    seconds: float  # writing and measuring the sample
    error: str | None
    misses: list[str]  # each ratio more than 10 % from the requested one


class TargetReadBack(TypedDict):
    """One target read back: its ratios over the bytes read (run.data_reduction)."""

    compression: float
    dedupe: float  # the sample's own: the target's when `whole`, else a lower bound
    granule_bytes: int
    bytes_read: int
    whole: bool  # the whole target was read
    seconds: float


class DataReadBackFinding(TypedDict):
    """`data_read_back`: the targets read back after a writing workload's last point."""

    workload: str
    scenario: str | None
    targets: dict[str, TargetReadBack]
    skipped: str | None  # why no target was read (a many-host point: hosts' targets)


class DataReductionFinding(TypedDict):
    """`data_reduction`: per writing workload, its data requested and achieved, measured
    before the run (run.data_reduction)."""

    workloads: dict[str, WorkloadData]


class HostsFinding(TypedDict):
    """`hosts`: one point on many hosts (run.fleet)."""

    hosts: list[str]
    per_host: dict[str, dict[str, float | None]]  # host -> its total metrics
    start_ms: dict[str, float]  # Unix ms, controller clock
    start_spread_ms: float | None
    start_gate_ms: float  # the planned instant, controller clock
    failures: dict[str, str]  # host -> why it failed
    watchdog: list[str]
    offsets_ms: dict[str, float]


class PathLine(TypedDict):
    target: str
    line: str


class EventRecordData(TypedDict):
    """events.records.EventRecord's fields: one step of one event."""

    index: int
    kind: str
    label: str
    action: str  # apply, revert, prompt, run, skipped
    outcome: str  # ok, failed, timeout
    planned_at_s: float | None
    started_unix: float
    ended_unix: float
    detail: str
    output: NotRequired[str]
    exit_code: NotRequired[int | None]


class EventImpactData(TypedDict):
    """analysis.events.EventImpact's fields: the load's dip around one event."""

    label: str
    kind: str
    start_unix: float
    end_unix: float | None
    metric: str  # iops, mbps
    baseline: float | None
    baseline_seconds: int
    low: float | None
    low_t: int | None
    dip_pct: float | None
    recovery_after_revert_s: float | None
    recovery_after_start_s: float | None
    max_latency_us: float | None
    io_errors: int | None
    during_seconds: NotRequired[int]
    band_pct: NotRequired[float | None]  # the recovery band: max(5 %, the baseline's spread)
    baseline_spread_pct: NotRequired[float | None]
    overshoot_pct: NotRequired[float | None]  # the highest second until back, % above baseline
    overshoot_seconds: NotRequired[int | None]  # seconds above the band until back


class OpenLoopStallData(TypedDict):
    """analysis.openloop.Stall's fields: one stretch in which completions fell under a tenth of
    the intended rate while I/O was due."""

    start_s: float  # from the schedule's origin
    length_s: float
    cause: str  # storage | generator
    unserved_peak_ios: float
    drain_s: float | None
    host: NotRequired[str]  # a many-host point: the host that stalled


class OpenLoopHostData(TypedDict):
    """One host's own open-loop figures on a many-host point."""

    intended_iops: float
    ios: int
    unserved_peak_ios: float
    longest_stall_s: float
    drain_s: float | None
    stalls: list[OpenLoopStallData]
    corrected_latency_us: dict[str, float]
    fio_latency_us: dict[str, float]
    stuck: bool


class KneeData(TypedDict):
    """The knee a `rate_of` point's rate is a share of: its run, point key, total IOPS."""

    run: str
    key: str
    iops: float
    share: int  # %


class OpenLoopFinding(TypedDict):
    """`open_loop`: a rate-limited point's schedule against its completions
    (analysis.openloop, run.openloop_watch)."""

    intended_iops: float  # the point's total intended rate
    origin_unix: float
    ios: int
    unserved_peak_ios: float
    longest_stall_s: float
    drain_s: float | None
    stalls: list[OpenLoopStallData]
    corrected_latency_us: dict[str, float]  # p50, p99, p99.9, max from the intended start
    fio_latency_us: dict[str, float]  # the same I/Os as fio measured them (clat)
    slot_s: float
    series: list[list[float]]  # [t_s, due, completed] for the chart
    stuck_limit_s: float | None
    stuck: bool
    generator_stalled: bool
    # a many-host point: each host's own figures, from its 1-second logs (`resolution_s` 1)
    hosts: NotRequired[dict[str, OpenLoopHostData]]
    resolution_s: NotRequired[float]  # the completions' time resolution (0.1 s locally)
    knee: NotRequired[KneeData]  # a `rate_of` point: the optimal point its rate is a share of


class EventsFinding(TypedDict):
    """`events`: what the injectors did, and the load's dip around each event
    (run.local_events, run.host_events)."""

    records: list[EventRecordData]
    impact: list[EventImpactData]
    paths: NotRequired[dict[str, list[PathLine]]]  # moment -> each target's path state
    io_errors: NotRequired[int]
    t0_unix: NotRequired[float | None]
    host_impact: NotRequired[dict[str, list[EventImpactData]]]  # host -> its own dip per event
    host_io_errors: NotRequired[dict[str, int]]  # host -> fio's I/O errors there
    hosts: NotRequired[list[str]]  # the point's hosts (events applied on a many-host point)


class BlockProblemData(TypedDict):
    """integrity.check.BlockProblem's fields: one acknowledged block not read back intact."""

    offset: int
    kind: str  # lost, corrupt, unreadable
    expected_generation: int
    found_generation: int | None
    written_at_ns: int
    detail: str
    after_failed_write: NotRequired[bool]


class IntegrityFinding(TypedDict):
    """`integrity`: the read-back of acknowledged writes (integrity.check.IntegrityReport)."""

    path: str
    journal: str
    block_size: int
    region_offset: int
    region_length: int
    stream_id: int
    direct: bool
    checked: int
    ok: int
    problems: list[BlockProblemData]  # the first ones (problems_omitted: the others)
    journal_records: int
    torn_records: int
    damaged_records: int
    failed_writes: int
    newer: int
    bytes_read: int
    elapsed_s: float
    torn_detail: str
    problems_omitted: int
    clean: bool
    lost: int
    corrupt: int
    unreadable: int
    summary: str
    writer_error: str | None
    host: NotRequired[str]  # a many-host point: one finding per host (run.host_verify)
    writer: NotRequired[dict[str, Any] | None]  # that host's writer's own counts (WriterStats)
    error: NotRequired[str | None]  # why that host's read-back could not run (counts: zero)


# the test kinds' points (run.kinds) ---------------------------------------------------------
class StepRowData(TypedDict):
    """analysis.interference.StepRow's fields: the base load in one phase of the test."""

    label: str
    kind: str  # base, step, background
    streams: int
    start_s: float
    end_s: float
    base_iops: float
    base_lat_mean_us: float | None
    bg_mbps: float
    base_iops_change_pct: float | None
    base_lat_change_pct: float | None
    base_p99_us: NotRequired[float | None]
    bg_lat_mean_us: NotRequired[float | None]  # the large I/O's own mean latency


class InterferenceChartData(TypedDict):
    """analysis.interference.InterferenceChart's fields."""

    t_s: list[float]
    base_iops: list[float | None]
    base_lat_us: list[float | None]
    bg_mbps: list[float | None]
    events: list[tuple[float, str]]  # [t_s, label] pairs once stored
    bg_lat_us: NotRequired[list[float | None] | None]


class InterferenceFinding(TypedDict):
    """`interference`: the base load's latency beside growing background streams."""

    target: str
    rows: list[StepRowData]
    tolerated_steps: int
    max_latency_increase: float
    chart: InterferenceChartData
    bg_bs: int
    bg_rate_iops: int | None


class MetadataRowData(TypedDict):
    """analysis.metadata.MetadataRow's fields: one operation at one thread level."""

    op: str
    threads: int
    ops_per_s: float | None
    lat_mean_us: float | None
    lat_p99_us: float | None
    files: int
    elapsed_ms: NotRequired[int]
    fio_iops: NotRequired[float]
    hosts: NotRequired[int]
    tool: NotRequired[str]  # "mdtest": ops_per_s is its SUMMARY's Mean, these the rest
    iterations: NotRequired[int]
    ops_min: NotRequired[float | None]
    ops_max: NotRequired[float | None]
    ops_std: NotRequired[float | None]


class MetadataFinding(TypedDict):
    """`metadata`: create/stat/delete rates at one thread level."""

    threads: int
    rows: list[MetadataRowData]


class CurveFinding(TypedDict):
    """`curve`: one rate of a workload's response-time curve (plan `curve:`)."""

    workload: str
    percent: int  # of the maximum
    max_iops: float  # the grid's maximum it is a fraction of
    max_key: str  # the point that measured it
    planned_iops: float
    achieved_iops: float
    lat_mean_us: float | None
    lat_p99_us: float | None
    tolerance_pct: float
    # the total within tolerance_pct % of planned_iops (below or above) and the read share
    # within tolerance_pct points of the planned mix; stored before: the total not below only
    reached: bool
    planned_read_pct: NotRequired[float]  # the workload's mix
    achieved_read_pct: NotRequired[float | None]  # reads in % of the I/Os
    misses: NotRequired[list[str]]  # how it missed (analysis.validity.rate_misses)


# imported points (importer) ----------------------------------------------------------------
class ImportFinding(TypedDict):
    """`import`: where an imported point came from."""

    source: str
    format: str
    run: int
    group: int | None
    tool: str
    jobs: list[str]
    hostnames: list[str]
    logs: list[str]
    notes: list[str]


class ImplausibleFinding(TypedDict):
    """`implausible`: why an imported point's figures cannot be right."""

    reasons: list[str]


# about the run as a whole (point_id None) --------------------------------------------------
class ProvenanceFinding(TypedDict):
    """`provenance`: the controller, the targets and the hosts (run.provenance)."""

    machine: dict[str, Any]
    targets: list[dict[str, Any]]
    hosts: list[dict[str, Any]]
    host_tuning: NotRequired[list[dict[str, str]]]
    engine: NotRequired[dict[str, str]]  # the load tool: name, version, binary (its path)


class AdaptiveFinding(TypedDict):
    """`adaptive`: which levels an adaptive series tried and what it concluded."""

    series: str
    devices: int | None
    hosts: list[str]
    mode: str
    reason: str
    tried: list[str]
    skipped: list[str]
    ladder: list[str]
    optimal: str | None
    maximum: str | None
    confidence: NotRequired[str]  # how sure the optimal level is ("" without a spread)
    noise: NotRequired[str]  # where the levels' spread came from ("": none)


class PurgeResult(TypedDict):
    target: str
    purged: bool
    how: str


class PurgeFinding(TypedDict):
    """`purge`: blkdiscard of the targets before the run."""

    targets: list[PurgeResult]


class PreconditionFinding(TypedDict):
    """`precondition`: what the preconditioning wrote and how long it took."""

    bytes: int
    seconds: float
    passes: float
    pattern: str
    bs: int
    folder: str


class RoundsFinding(SteadyFields):
    """`rounds`: the tracked workload's throughput per round and the SNIA verdict."""

    round: int
    track: str
    window: int
    values: list[float]


class ArraySeriesFinding(TypedDict):
    """`array_series`: the array's own per-second counters, attached after the run."""

    file: str
    map: dict[str, str]
    offset_s: float
    samples: list[list[Any]]  # [Unix seconds, {column: value}]


class ArrayPullFinding(TypedDict):
    """`array_pull`: a plan `array_monitor:` source that gave nothing for a point, and why."""

    source: str
    point: str
    error: str


T = TypeVar("T")


# plan `scenarios:` (run.scenarios) -------------------------------------------------------------
class ScenarioStepFinding(TypedDict):
    """`scenario_step`: one before/after step of a scenario as it ran (run.scenarios.StepRecord)."""

    scenario: str
    phase: str  # before | after
    index: int
    kind: str  # prompt | run
    step: str
    host: str | None
    outcome: str  # ok | failed | timeout | confirmed | assumed
    done: bool  # counts as done for a resume
    started: float  # Unix seconds
    ended: float
    exit_code: int | None
    output: str
    detail: str


class HostViewData(TypedDict):
    """run.scenarios.HostView's fields: the targets and block devices one host showed."""

    recorded: bool
    why_not: str | None
    targets: list[str]
    devices: list[str]


class ScenarioPathsFinding(TypedDict):
    """`scenario_paths`: every host's targets and devices at one moment of a scenario."""

    scenario: str
    moment: str  # before | start | end | after
    time: str  # ISO 8601, UTC
    t: float  # Unix seconds
    resumed: bool
    hosts: dict[str, HostViewData]


class WarmupFinding(TypedDict):
    """`warmup`: a logged ramp's 1-second samples (run.warmup), never in the point's figures;
    each row is [t, read_iops, write_iops, read_mbps, write_mbps, read_lat_us, write_lat_us]."""

    seconds: float  # the planned ramp
    samples: list[list[float | None]]
    # many hosts (run/point/hosts.py): the warm-up's own fio run on every host of the point,
    # the rows the hosts' per-second totals; the hosts whose warm-up failed; and the pause in
    # the load between the warm-up's end and the measured run's gated start (`start_lead`)
    hosts: NotRequired[list[str]]
    failed_hosts: NotRequired[list[str]]
    gap_s: NotRequired[float | None]


KINDS: dict[str, "FindingKind[Any]"] = {}  # name -> kind: every kind the store accepts


@dataclass(frozen=True)
class FindingKind(Generic[T]):
    """A kind of finding: its stored name and the TypedDict of its data. Declaring one
    registers it: a new test kind declares its finding kind in its own module."""

    name: str
    shape: type[T]

    def __post_init__(self) -> None:
        known = KINDS.setdefault(self.name, self)
        if known.shape is not self.shape:
            raise ValueError(f"two finding kinds named {self.name!r}")

    def new(self, data: T, point_id: int | None = None) -> Finding:
        return Finding(point_id, self.name, cast(Mapping[str, object], data))

    def of(self, finding: Finding) -> T:
        """The finding's data as this kind's type (a finding of another kind is a bug)."""
        if finding.kind != self.name:
            raise ValueError(f"a {finding.kind!r} finding read as {self.name!r}")
        return cast(T, finding.data)

    def among(self, findings: Iterable[Finding]) -> list[T]:
        """The data of the findings of this kind, in their order."""
        return [cast(T, f.data) for f in findings if f.kind == self.name]


CLIFF = FindingKind("cliff", CliffFinding)
STEADY = FindingKind("steady", SteadyFinding)
MONITOR = FindingKind("monitor", MonitorFinding)
VALIDITY = FindingKind("validity", ValidityFinding)
HOSTS = FindingKind("hosts", HostsFinding)
EVENTS = FindingKind("events", EventsFinding)
OPEN_LOOP = FindingKind("open_loop", OpenLoopFinding)
INTEGRITY = FindingKind("integrity", IntegrityFinding)
INTERFERENCE = FindingKind("interference", InterferenceFinding)
METADATA = FindingKind("metadata", MetadataFinding)
CURVE = FindingKind("curve", CurveFinding)
IMPORT = FindingKind("import", ImportFinding)
IMPLAUSIBLE = FindingKind("implausible", ImplausibleFinding)
PROVENANCE = FindingKind("provenance", ProvenanceFinding)
ADAPTIVE = FindingKind("adaptive", AdaptiveFinding)
PURGE = FindingKind("purge", PurgeFinding)
PRECONDITION = FindingKind("precondition", PreconditionFinding)
ROUNDS = FindingKind("rounds", RoundsFinding)
ARRAY_SERIES = FindingKind("array_series", ArraySeriesFinding)
ARRAY_PULL = FindingKind("array_pull", ArrayPullFinding)
SCENARIO_STEP = FindingKind("scenario_step", ScenarioStepFinding)
SCENARIO_PATHS = FindingKind("scenario_paths", ScenarioPathsFinding)
WARMUP = FindingKind("warmup", WarmupFinding)
DATA_REDUCTION = FindingKind("data_reduction", DataReductionFinding)
DATA_READ_BACK = FindingKind("data_read_back", DataReadBackFinding)


def fields_of(shape: type[T], record: Any) -> T:
    """A dataclass record as the TypedDict that mirrors its fields (`EventImpactData` for an
    EventImpact): `asdict`, typed; tests/unit/test_finding_kinds.py keeps the two in step."""
    return cast(T, asdict(record))


def check_finding(kind: str, data: Mapping[str, object]) -> None:
    """Raise FindingKeyError unless `kind` is known and `data` has exactly its keys: every
    required one, no unknown one (a misspelt key is both)."""
    known = KINDS.get(kind)
    if known is None:
        raise FindingKeyError(
            f"unknown finding kind {kind!r}: declare it with its TypedDict, "
            "FindingKind(name, shape) (finding_kinds.py)"
        )
    shape = cast(Any, known.shape)  # a TypedDict class: its key sets are runtime attributes
    required: frozenset[str] = shape.__required_keys__
    unknown = sorted(set(data) - required - shape.__optional_keys__)
    missing = sorted(required - set(data))
    wrong = [f"{what} key(s) {', '.join(keys)}" for what, keys in
             (("unknown", unknown), ("missing", missing)) if keys]  # fmt: skip
    if wrong:
        raise FindingKeyError(f"{kind} finding ({known.shape.__name__}): {'; '.join(wrong)}")
