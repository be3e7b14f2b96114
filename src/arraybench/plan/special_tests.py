"""The plan's tests beside the grid: SNIA preconditioning and rounds, interference, metadata."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
    model_validator,
)

from arraybench.plan.types import (
    MAX_FIO_INT,
    MAX_JOBS,
    BlockSize,
    Duration,
    Files,
    Increase,
    IoDepth,
    Jobs,
    Passes,
    PathText,
    Percent,
    PositiveInt,
    Repeats,
    RoundWindow,
    Steps,
    Strict,
)


class Precondition(Strict):
    """SNIA workload-independent preconditioning: write the targets `passes` times over."""

    passes: Passes = Field(2.0, description="How many times the targets are written over.")
    bs: BlockSize = Field(128 * 1024, description="Block size of the preconditioning writes.")
    pattern: Literal["sequential", "random", "sprandom"] = Field(
        "sequential",
        description=(
            "Access pattern of the preconditioning writes; `sprandom` (fio >= 3.41): fio's "
            "SanDisk pseudo-random preconditioning, random writes that leave the device in its "
            "random-write steady state in one pass over its capacity (`passes`: 1)."
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _sprandom_is_one_pass(cls, data: object) -> object:
        """fio's sprandom decides what it writes (one pass, less its over-provisioning):
        another count of passes would be a promise the run does not keep."""
        if isinstance(data, dict) and data.get("pattern") == "sprandom":
            if data.get("passes", 1) != 1:
                raise ValueError("pattern sprandom writes the targets once (fio decides how "
                                 "much): leave passes out, or give 1")  # fmt: skip
            data = {**data, "passes": 1.0}
        return data


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


MetadataOp = Literal["create", "stat", "read", "delete", "dir-create", "dir-stat", "dir-delete"]
FILE_OPS: tuple[MetadataOp, ...] = ("create", "stat", "delete")
MetadataEngine = Literal["fio", "mdtest", "auto"]


class MetadataTest(Strict):
    """CSCS's metadata test: mdtest over MPI (`engine: mdtest`), or mdtest-like on fio's file
    engines (the default), in a directory."""

    # default: a folder beside the results
    directory: PathText | None = Field(
        None,
        description=("Directory the files are created in (default: a folder beside the results)."),
    )
    threads: list[Jobs] = Field(
        default_factory=lambda: [1, 2, 4, 8, 16, 32],
        description="Thread counts (mdtest: tasks per node), one level each.",
    )
    files_per_thread: Files = Field(
        1000, description="Files each thread creates, stats and deletes (mdtest's -n)."
    )
    ops: list[MetadataOp] = Field(
        default_factory=lambda: list(FILE_OPS), description="Operations measured, in order."
    )
    engine: MetadataEngine = Field(
        "fio",
        description="The tool: `fio` (its file engines), `mdtest` (IOR's mdtest through "
        "mpirun, docs/engines.md), `auto` (mdtest when mdtest and mpirun are found, else fio).",
    )
    repetitions: Repeats = Field(
        1, description="Iterations of each level (mdtest's -i: min/max/mean stored); mdtest only."
    )
    mdtest: PathText = Field(
        "mdtest", description="mdtest's path (on every host), or its name on PATH."
    )

    @model_validator(mode="after")
    def _fio_can_do(self) -> MetadataTest:
        # `auto` may fall back to fio: what fio cannot do needs mdtest for sure
        if self.engine != "mdtest":
            if "read" in self.ops:
                raise ValueError("ops: `read` (mdtest's file read phase) needs engine: mdtest")
            if self.repetitions > 1:
                raise ValueError("repetitions > 1 needs engine: mdtest (fio runs each level once)")
        return self
