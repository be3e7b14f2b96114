"""A workload and how it runs: its data, timing (steady state), load ladder and verification."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Field,
    field_validator,
    model_validator,
)

from arraybench.plan.confidence import steady_limit
from arraybench.plan.events import Event
from arraybench.plan.types import (
    _NUMBER,
    _REAL,
    _SIZE,
    MAX_SIZE,
    Blocks,
    BlockSize,
    Bool,
    Count,
    Duration,
    Engine,
    InRange,
    IoDepth,
    Jobs,
    Label,
    Percent,
    PositiveInt,
    RampDuration,
    Repeats,
    Share,
    Size,
    SteadyWindow,
    Strict,
    Wait,
    WorkloadName,
    _on_off,
    _pair,
)
from arraybench.point_identity import GRID_MARK

# the ratios a named preset stands for: (compression, dedupe); `zeros` writes zero buffers
DATA_PRESETS: dict[str, tuple[float, float]] = {
    "incompressible": (1.0, 1.0),
    "zeros": (1.0, 1.0),  # fio's zero_buffers: every granule reduces to nothing
    "db": (2.0, 1.0),  # database pages: about 2:1 compression, little dedupe
    "vdi": (2.0, 3.0),  # cloned desktops: 2:1 compression, 3:1 dedupe
}
DataPresetName = Literal["incompressible", "zeros", "db", "vdi"]


def expand_data_grid(raw: object) -> object:
    """A plan's `data_grid: [A, B]`: each workload becomes NAME@A and NAME@B with `data: A`,
    `data: B`, before the plan is validated, so every later step (points, keys, samples,
    findings) sees plain workloads whose names keep the points apart. A workload already named
    with the mark is a stored plan's copy (a run's plan.yaml holds the expanded list): kept.
    A workload with its own `data:` is left as it is and refused by `Plan` (no grid value can
    be its data). A read-only workload (`read: 100`) writes nothing the data could shape: it
    runs once, unnamed by the grid (what it reads is what the target was last given)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("data_grid"), list):
        return raw
    values = [v for v in raw["data_grid"] if isinstance(v, str) and v in DATA_PRESETS]
    workloads = raw.get("workloads")
    if len(values) != len(raw["data_grid"]) or not isinstance(workloads, list):
        return raw  # the field's own check says what is wrong
    expanded: list[object] = []
    for w in workloads:
        name = w.get("name") if isinstance(w, dict) else None
        if not isinstance(name, str) or GRID_MARK in name or "data" in w or w.get("read") == 100:
            expanded.append(w)
            continue
        expanded += [{**w, "name": f"{name}{GRID_MARK}{v}", "data": v} for v in values]
    return {**raw, "workloads": expanded}


# fio writes at most 99 % of a buffer compressible (or repeated): 100:1
MAX_RATIO = 100.0
Ratio = Annotated[float, _REAL, InRange(1.0, MAX_RATIO, "x:1 factors; 1.0 = none")]
# arrays reduce 4-32 KiB blocks; below 512 B the sample's hashing is the cost, not the data
Granule = Annotated[int, _SIZE, InRange(512, 1 << 20, "an array's reduction block", unit="B")]


def _data_form(value: object) -> object:
    """A preset's name, or the percentages of earlier versions (``compressibility``: % of a
    buffer that compresses; with it ``dedupe`` is a % of repeated buffers), as ratios."""
    if isinstance(value, str):
        if value not in DATA_PRESETS:
            raise ValueError(f"unknown preset {value[:40]!r}: use one of {', '.join(DATA_PRESETS)} "
                             "or {compression: 2.0, dedupe: 1.5, granule: 8k}")  # fmt: skip
        return {"preset": value}
    if isinstance(value, dict) and "compressibility" in value:
        old = dict(value)
        percents = {k: old.pop(k, 0) for k in ("compressibility", "dedupe")}
        for key, pct in percents.items():
            if isinstance(pct, bool) or not isinstance(pct, int) or not 0 <= pct <= 99:
                raise ValueError(f"{key}: {pct!r} is not a percentage from 0 to 99; write "
                                 "ratios now: {compression: 2.0, dedupe: 1.5}")  # fmt: skip
        old["compression"] = round(100 / (100 - percents["compressibility"]), 3)
        old["dedupe"] = round(100 / (100 - percents["dedupe"]), 3)
        return old
    return value


def data_schema(schema: dict[str, Any]) -> None:
    """A `data:` key's JSON Schema: the object, or a preset's name (`data: zeros`)."""
    branches = schema.pop("anyOf", None) or [{"$ref": schema.pop("$ref")}]
    schema["anyOf"] = [*branches, {"enum": list(DATA_PRESETS)}]


class DataPattern(Strict):
    """What the written buffers contain, as the ratios an array's inline reduction would
    reach on them: incompressible and unique unless asked otherwise (docs/data.md)."""

    compression: Ratio = Field(
        1.0, description="Compression ratio of each granule, x:1 (1.0: incompressible)."
    )
    dedupe: Ratio = Field(
        1.0, description="Dedupe ratio over aligned granules, x:1 (1.0: every granule unique)."
    )
    granule: Granule = Field(
        8192, description="The block at which the array compresses and deduplicates."
    )
    read_back: Size | None = Field(
        None,
        description=(
            "After the last point of a writing workload, read this many bytes of each local "
            "target back (all of it when the target is no larger; else 1 MiB regions at "
            "random) and measure its ratios: what the array was given (docs/data.md)."
        ),
    )
    preset: Literal["incompressible", "zeros", "db", "vdi"] | None = Field(
        None,
        description=(
            "A named data pattern, written `data: NAME` (incompressible, zeros, db = 2:1 "
            "compression, vdi = 2:1 compression and 3:1 dedupe); sets the ratios."
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _forms(cls, value: object) -> object:
        value = _data_form(value)
        if isinstance(value, dict) and value.get("preset") in DATA_PRESETS:
            ratios = DATA_PRESETS[value["preset"]]
            value = {"compression": ratios[0], "dedupe": ratios[1], **value}
        return value

    @property
    def zeros(self) -> bool:
        return self.preset == "zeros"

    @property
    def reduced(self) -> bool:
        """Whether the data is anything but incompressible and unique."""
        return self.zeros or self.compression > 1.0 or self.dedupe > 1.0


class SteadyStop(Strict):
    """End a point as soon as it is steady (fio's steadystate), instead of after `duration`.

    Whether it did is recorded per point, with the SNIA PTS check of its last window.
    """

    metric: Literal["iops", "bw", "lat"] = Field(
        "iops",
        description=(
            "What must be steady: iops, bw (bandwidth), or lat (mean latency; fio >= 3.42)."
        ),
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
    stuck_io: Duration | None = Field(
        None,
        description=(
            "How long an I/O of a rate-limited (open-loop) point may stay unserved, like a "
            "SCSI or NVMe timeout: a stall longer than this is a finding (the point's "
            "`open_loop.stuck`, a warning on the console)."
        ),
    )
    end_on_stuck_io: bool = Field(
        False,
        description=(
            "End a point whose targets' devices completed under a tenth of its intended "
            "rate for `stuck_io` (the kernel's per-second counts, block devices only): fio "
            "is stopped as on Ctrl-C and what it measured so far is kept (the point is "
            "flagged stopped-early)."
        ),
    )
    log_ramp: bool = Field(
        False,
        description=(
            "Log the warm-up: run the ramp as its own fio phase just before the measured one, "
            "its 1-second samples drawn shaded on the point's chart and left out of its "
            "figures (points without events or verify; those ramp unlogged). On many hosts "
            "the warm-up is a gated run of its own on every host: the load pauses about "
            "`start_lead` before the measured run, which the report states."
        ),
    )

    @model_validator(mode="after")
    def _stuck_limit(self) -> Timing:
        if self.end_on_stuck_io and self.stuck_io is None:
            raise ValueError("end_on_stuck_io needs stuck_io: how long an I/O may stay unserved")
        return self


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


_SECTOR = 512  # integrity/layout.py's SECTOR


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

    # the integrity writer does direct I/O in whole sectors (integrity/layout.py refuses
    # anything else when the run starts); said here so the plan error carries FILE:LINE
    @field_validator("block_size", "region")
    @classmethod
    def _whole_sectors(cls, value: int) -> int:
        if value % _SECTOR:
            raise ValueError(
                f"{value} B is not a whole number of {_SECTOR}-byte sectors: use e.g. 4k"
            )
        return value

    @model_validator(mode="after")
    def _one_block_fits(self) -> Verify:
        if self.region < self.block_size:
            raise ValueError(
                f"region ({self.region} B) is smaller than one block ({self.block_size} B)"
            )
        return self


class RateOf(Strict):
    """An open-loop rate as a share of a knee: the optimal point's throughput (docs/headline.md)
    of a workload's series measured earlier in this run, or in a named run (In&Out-style)."""

    share: Annotated[int, _NUMBER, Field(strict=True), InRange(1, 1000)] = Field(
        description="The intended rate, in % of the knee's total IOPS (over 100: beyond it)."
    )
    workload: WorkloadName | None = Field(
        None,
        description="The workload whose series gives the knee (default: this workload; in "
        "this run it must be another workload, listed before this one, with a ladder of its "
        "own).",
    )
    run: Label | None = Field(
        None,
        description="The run whose stored series gives the knee (default: this run).",
    )
    scenario: Label | None = Field(
        None,
        description="The plan scenario whose series gives the knee (default: the point's "
        "own scenario). In this run it must be the plan's first scenario: the workload runs "
        "in every scenario, the first included (In&Out: the baseline's knee, the failover "
        "at a share of it).",
    )


class Workload(Strict):
    name: WorkloadName = Field(
        description=(
            "The workload's name (letters, digits, _ . -), unique in the plan; a plan's "
            "`data_grid` names its copies NAME@DATA."
        )
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
        None,
        description="What this workload's buffers contain (default: the plan's).",
        json_schema_extra=data_schema,
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
    # the total per worker at the workload's mix, split per direction (plan/rate.py)
    rate_iops: PositiveInt | None = Field(
        None,
        description=(
            "IOPS per worker, reads and writes together at the workload's mix (a base load, "
            "a rate-limited test): 500 at read 70 is 350 reads + 150 writes a second, fio's "
            "rate_iops=350,150 (docs/validity.md: rates)."
        ),
    )
    # an open-loop rate resolved when the point starts (run/knee_rate.py)
    rate_of: RateOf | None = Field(
        None,
        description=(
            "An open-loop rate as a share of a knee, instead of rate_iops: the total over the "
            "point's workers of `share` % of the optimal point's IOPS of `workload`'s series "
            "(this run, or `run`), resolved when the point starts and recorded as its "
            "open_loop intended_iops (docs/availability.md: open loop)."
        ),
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
    def _one_rate(self) -> Workload:
        if self.rate_iops is not None and self.rate_of is not None:
            raise ValueError("rate_iops and rate_of: give one rate, not both")
        return self

    @model_validator(mode="after")
    def _frontend_fits(self) -> Workload:
        if self.region == "frontend" and self.frontend_blocks * self.bs > MAX_SIZE:
            raise ValueError(
                f"frontend_blocks x bs is more than {MAX_SIZE >> 60} EiB: use fewer blocks"
            )
        return self
