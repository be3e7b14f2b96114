"""What a test kind is: a test that is not a workload x level grid, run after the grid as
stored points with one finding each (interference, metadata). Plan scenarios are not a kind:
they wrap the grid itself (`run/scenarios.py`; docs/architecture.md says why).

A kind says which steps a plan asks of it, how long they take, the job file of each step and
the finding read from the engine's output (`ctx.engine`; interference and metadata write fio
job files: plans with them run fio, `run.plan_values`); the campaign runs, stores and
reports every registered kind the same way (`run.kinds.TEST_KINDS`), so a new kind touches
neither the campaign loop nor the outline.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from arraybench.engines.base import Engine, RunSpec
from arraybench.engines.measurement import EngineDocument
from arraybench.plan.model import Plan
from arraybench.point_identity import PointIdentity
from arraybench.run.context import RunContext
from arraybench.run.record import SeriesNames
from arraybench.run.spans import Phase


@dataclass(frozen=True)
class KindStep:
    """One stored point of a test kind."""

    identity: PointIdentity  # the stored point's (`interference/base+steps`, `metadata/t4`)
    seq: int
    folder_name: str  # under the run's points/
    phase: str  # what the progress display says while it runs
    phase_s: float  # expected seconds, for the progress display
    watchdog_s: float  # expected seconds of the job; the engine's watchdog starts from it
    names: SeriesNames  # the series it is stored under
    workers: int
    iodepth: int
    # what the step derives from, for a kind whose steps follow the grid (the curve): the
    # plan workload and the share of its maximum, carried here, never read back from the key
    source: str | None = None
    percent: int | None = None

    @property
    def key(self) -> str:
        return self.identity.key


# A kind may also define `resolve(step, ctx) -> KindStep`: the step as it will run, once the
# grid has run (the curve's level is its series' maximum); the campaign calls it if present.
# And `engine_of(ctx) -> Engine`: the engine its steps run on when it is not the run's (the
# metadata test on mdtest beside a grid on fio); `run_step` asks it if present.
class TestKind(Protocol):
    name: str  # the phase kind and the finding kind
    report_section: str  # the report function that draws its findings (report/sections/special.py)
    touches_targets: bool  # True: the targets are rechecked before each step

    def slots(self, plan: Plan) -> int:
        """Point numbers it reserves after the grid (whether the plan asks for it or not, so a
        later kind's numbers do not move)."""
        ...

    def steps(self, plan: Plan, first_seq: int) -> list[KindStep]: ...

    def outline(self, plan: Plan) -> Phase | None:
        """Its phase in `plan check`'s outline and the progress total; None: not in the plan."""
        ...

    def job_file(self, step: KindStep, ctx: RunContext) -> str:
        """The step's job file (and whatever must exist before the engine starts)."""
        ...

    def finding(
        self, step: KindStep, ctx: RunContext, folder: Path, document: EngineDocument
    ) -> Mapping[str, object]: ...  # its kind's TypedDict (finding_kinds.py)


def run_job(
    folder: Path, text: str, label: str, expected_s: float, engine: Engine,
    pins: Mapping[str, int] | None = None,
) -> EngineDocument:  # fmt: skip
    """Write the job file into a fresh point folder, run it, return the engine's results.
    `pins`: the targets' descriptors the engine opens instead of their paths
    (`TargetGuard.pinned`)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    job = folder / engine.job_name
    job.write_text(text)
    spec = RunSpec(label, engine.watchdog_seconds(expected_s), pins=dict(pins or {}))
    return engine.results(engine.run(job, spec), label)


def run_step(
    kind: TestKind, step: KindStep, ctx: RunContext, folder: Path
) -> tuple[EngineDocument, Mapping[str, object]]:
    """One step end to end: job file, the engine's run, the finding. A kind that touches the
    targets has the engine open them through descriptors checked just before
    (`TargetGuard.pinned`)."""
    targets = [t.path for t in ctx.plan.targets] if kind.touches_targets else []
    engine_of = getattr(kind, "engine_of", None)
    engine = engine_of(ctx) if engine_of else ctx.engine
    text = kind.job_file(step, ctx)
    with ctx.guard.pinned(targets) as pins:
        document = run_job(folder, text, step.key, step.watchdog_s, engine, pins)
    return document, kind.finding(step, ctx, folder, document)
