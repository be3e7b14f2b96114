"""What a load engine is to the campaign: the one interface `run/` and `targets/` call.

An engine owns one tool (fio today; elbencho's service mode or vdbench later): whether it is
there and which version, the job text for a point, running a job under a watchdog, reading
what it wrote into the tool-neutral `EngineDocument` of `Measurement`s, and the point's
1-second samples. The campaign never names the tool: it calls `ctx.engine`, which the
registry (`engines.registry`) chose from the plan's `engine:` key.

Stopping: `run` ends the tool's load itself when `RunSpec.timeout_s` passes (raising the
run error) and when anything interrupts it (Ctrl-C, the campaign's signal handlers raise in
the calling thread): the load is stopped before the exception goes on, so no interrupted
point leaves I/O running. Every method raises `ArraybenchError`s only (exit 1 for the
machine's failures, 2 for a user's value), never prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from arraybench.engines.live import LiveReader
from arraybench.engines.measurement import EngineDocument
from arraybench.plan.expand import Point
from arraybench.plan.model import Plan, Precondition
from arraybench.records import Sample


@dataclass(frozen=True)
class EngineFacts:
    """What `check` found: the engine usable, its version (stored with the run) and the I/O
    methods a point may ask for (`ioengine`; empty: the engine does not say)."""

    name: str
    version: str
    ioengines: frozenset[str] = frozenset()
    binary: str = ""  # the tool's path, recorded with the run ('' where it has none)


@dataclass(frozen=True)
class Capabilities:
    """What an engine can do besides running one point's job on local targets: `run/` asks
    these, never an engine's name (docs/engines.md). The defaults are a plain engine's."""

    grid: bool = True  # runs the plan's points (mdtest: only the metadata test)
    many_hosts: bool = False  # `hosts:`, one point's job across machines (client/server)
    kind_jobs: bool = False  # the interference and metadata tests' job files are in its syntax
    data_sample: bool = False  # writes the `data:` sample measured before the first point
    version_features: bool = False  # the plan's options checked against the tool's version
    # a rate-limited point's completions logged finely enough (fio's latency-histogram log
    # every 100 ms) for its open-loop figures (analysis/openloop.py)
    open_loop_logs: bool = False


@dataclass(frozen=True)
class RunSpec:
    """How one job runs: its label in messages, its watchdog, and the hooks around it."""

    label: str  # the point's key, in every error line
    timeout_s: float  # the watchdog: the load is stopped and the run refused past it
    on_tick: Callable[[float], None] | None = None  # seconds since start, a few times a second
    on_start: Callable[[int], None] | None = None  # the load's process id, once it runs
    pins: Mapping[str, int] = field(default_factory=dict)  # target path -> checked descriptor
    status_interval_s: int = 0  # live figures that often, where the engine writes them


@dataclass(frozen=True)
class RunOutcome:
    elapsed_s: float
    folder: Path  # the job's folder: its results and logs are read from there


class Engine(Protocol):
    name: str  # the plan's `engine:` value
    job_name: str  # the job file in a point's folder (`point.fio`): the one to re-run by hand
    capabilities: Capabilities  # what `run/` may ask of it beyond a local point

    def check(self) -> EngineFacts:
        """The tool found and answering; FioMissingError (one line, exit 2) when not."""
        ...

    def watchdog_seconds(self, expected_s: float) -> float:
        """The watchdog for a job expected to take `expected_s` (layout and start included)."""
        ...

    def point_job(self, point: Point, sizes: Mapping[str, int], title: str = "") -> str:
        """The job text for one point on local targets (`sizes`: target path -> bytes)."""
        ...

    def precondition_job(self, plan: Plan, spec: Precondition, sizes: Mapping[str, int]) -> str:
        """The job writing every target `spec.passes` times over (SNIA preconditioning)."""
        ...

    def run(self, job: Path, spec: RunSpec) -> RunOutcome:
        """Run the job file `job` in its folder to its end (see the module's note on stopping)."""
        ...

    def results(self, outcome: RunOutcome, label: str) -> EngineDocument:
        """The run's figures, one `Measurement` per job; a failed job is refused (exit 1)."""
        ...

    def samples(self, folder: Path) -> list[Sample]:
        """The run's 1-second series: IOPS and MB/s summed over jobs, latency per I/O."""
        ...

    def live_reader(self, folder: Path) -> LiveReader | None:
        """The live figures a job run in `folder` with `RunSpec.status_interval_s` writes;
        None when the engine writes none (the live view then shows progress only)."""
        ...

    def check_path(self, path: str, where: str) -> None:
        """PlanError (exit 2) when the engine would misread `path` as a target name."""
        ...

    def lay_out(self, path: Path, size: int, fd: int) -> str | None:
        """Fill the file open at `fd` (named `path`) with `size` bytes of incompressible data;
        None when done, else the line that says why not."""
        ...

    def end_leftovers(self, folder: Path) -> list[int]:
        """End the tool's processes an interrupted run left working in `folder` (the caller
        holds the run's lock); the ids ended."""
        ...
