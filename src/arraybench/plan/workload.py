"""A workload and how it runs: its data, timing (steady state), load ladder and verification."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    BeforeValidator,
    Field,
    model_validator,
)

from arraybench.plan.confidence import steady_limit
from arraybench.plan.events import Event
from arraybench.plan.types import (
    MAX_SIZE,
    Blocks,
    BlockSize,
    Bool,
    Count,
    Duration,
    Engine,
    IoDepth,
    Jobs,
    Label,
    Name,
    Percent,
    PositiveInt,
    RampDuration,
    Repeats,
    Share,
    Size,
    SteadyWindow,
    Strict,
    Wait,
    _on_off,
    _pair,
)


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
    # the total per worker at the workload's mix, split per direction (plan/rate.py)
    rate_iops: PositiveInt | None = Field(
        None,
        description=(
            "IOPS per worker, reads and writes together at the workload's mix (a base load, "
            "a rate-limited test): 500 at read 70 is 350 reads + 150 writes a second, fio's "
            "rate_iops=350,150 (docs/validity.md: rates)."
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
    def _frontend_fits(self) -> Workload:
        if self.region == "frontend" and self.frontend_blocks * self.bs > MAX_SIZE:
            raise ValueError(
                f"frontend_blocks x bs is more than {MAX_SIZE >> 60} EiB: use fewer blocks"
            )
        return self
