"""One campaign: plan -> points -> the plan's engine -> store, one committed point at a time.

The campaign owns its order (start, resume, SNIA rounds, the grid, the test kinds);
`run.setup` prepares what it runs on and `run.point` runs and stores each point.
Library code: it reports progress to an observer and raises ArraybenchError; it never prints.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from arraybench.analysis.aggregate import point_metrics
from arraybench.analysis.findings import steady_fields
from arraybench.analysis.steady import steady_state
from arraybench.engines.base import Engine, EngineFacts
from arraybench.engines.measurement import EngineDocument
from arraybench.engines.registry import engine_for
from arraybench.errors import FioRunError, StoreError
from arraybench.events.tuning import HostTuningSession, check_tuning
from arraybench.finding_kinds import (
    ADAPTIVE,
    DATA_READ_BACK,
    DATA_REDUCTION,
    PROVENANCE,
    ROUNDS,
    AdaptiveFinding,
    RoundsFinding,
)
from arraybench.hosts import HostError
from arraybench.plan.expand import Point, check_resolved, expand, round_points
from arraybench.plan.load import parse_plan_text
from arraybench.plan.model import Plan, Rounds
from arraybench.run import provenance, setup
from arraybench.run.adaptive_series import run_adaptive
from arraybench.run.array_pull import ArrayPull
from arraybench.run.context import Observer, RunContext, RunSettings
from arraybench.run.data_reduction import (
    data_finding,
    last_of_workloads,
    read_back,
    read_back_lines,
    sample_lines,
    sample_workloads,
    stored_misses,
    wants_sample,
)
from arraybench.run.fleet import Fleet, fleet_binary, host_spec
from arraybench.run.injections import StoreInjectionLog, refuse_leftovers
from arraybench.run.interrupts import raise_if_swallowed
from arraybench.run.kinds import TEST_KINDS, KindStep, TestKind, run_step
from arraybench.run.knee_rate import check_named_knees
from arraybench.run.plan_values import check_fio_features, check_plan_values, resolve_targets
from arraybench.run.point import run_point
from arraybench.run.progress import run_steps
from arraybench.run.record import PointPlace, SeriesNames, new_point, now_iso
from arraybench.run.scenarios import ScenarioSteps, split_by_scenario
from arraybench.store.db import Finding, PointRecord, RunRecord, Store
from arraybench.store.portable import IMPORTED_MARK
from arraybench.store.run_ids import new_run_id
from arraybench.targets.guard import TargetGuard


def all_points(plan: Plan) -> list[Point]:
    """Every point the plan can run, rounds at their maximum (for checks and the total)."""
    rounds = range(1, plan.rounds.max + 1) if plan.rounds else range(0)
    return expand(plan) + [p for r in rounds for p in round_points(plan, r)]


def rounds_verdict(points: Sequence[PointRecord], rounds: Rounds, upto: int) -> RoundsFinding:
    """The tracked workload's throughput per round (its first level) and the SNIA check."""
    values: list[float] = []
    for round_no in range(1, upto + 1):
        tracked = [p for p in points if p.workload == rounds.track and p.identity.round == round_no]
        if tracked:
            values.append(min(tracked, key=lambda p: p.seq).throughput())
    result = steady_state(values, window=rounds.window)
    return {"round": upto, "track": rounds.track, "window": rounds.window, "values": values,
            **steady_fields(result)}  # fmt: skip


@dataclass(frozen=True)
class CampaignResult:
    run_id: str
    status: str
    points_run: int
    points_skipped: int


class Campaign:
    def __init__(self, store: Store, results_dir: Path, observer: Observer) -> None:
        self.guard = TargetGuard()  # local targets as checked; rechecked before each job
        self.interactive = False  # prompts ask the operator (observer.confirm) when True
        self.run_id: str | None = None  # once the run exists in the store (for a resume hint)
        self.store = store
        self.results_dir = results_dir
        self.observer = observer

    def start(self, plan: Plan, scale: float) -> CampaignResult:
        check_resolved(plan)
        # a refused value stops before the run (a resume finds its own journal: not here)
        check_tuning(plan, self.results_dir, host_spec)
        check_named_knees(plan, self.store)  # a rate_of's named run: here, not at its point
        engine = engine_for(plan.engine)
        plan, settings, facts, targets = self._prepare(plan, engine)
        run_id = new_run_id(plan.name, self.results_dir)
        self.store.lock_run(run_id)
        run = setup.run_record(plan, run_id, scale, run_steps(plan), self.results_dir)
        (Path(run.folder) / "plan.yaml").write_text(run.plan_yaml)
        # before the run exists: a value the kernel refuses leaves no run marked running
        tuning = HostTuningSession.apply(plan, Path(run.folder), self.results_dir, host_spec)
        try:
            self.store.create_run(run)
            self.run_id = run.id
            found = provenance.collect(plan, targets.sizes, tuning.applied(), facts)
            self.store.add_finding(run.id, PROVENANCE.new(found))
            self._sample_data(plan, run, engine)
            return self._execute(self._context(run, plan, targets, engine, settings), facts.version)
        finally:
            self._restore(tuning)

    def _sample_data(self, plan: Plan, run: RunRecord, engine: Engine) -> None:
        """The data each writing workload will give the array, sampled through fio and
        measured, stored before the first point (docs/data.md); only when some workload asks
        for reduction (incompressible data needs no sample), and from an engine that writes it."""
        if not engine.capabilities.data_sample or not wants_sample(plan):
            return
        samples = sample_workloads(plan, Path(run.folder))
        self.store.add_finding(run.id, data_finding(samples))
        for line in sample_lines(samples):
            self.observer.note(line)

    def _prepare(
        self, plan: Plan, engine: Engine
    ) -> tuple[Plan, RunSettings, EngineFacts, setup.PreparedTargets]:
        """What a start and a resume both do before any I/O: the plan's values checked, no
        killed run's throttle left, targets resolved (fio opens exactly what the safety check
        examines), the engine checked against every point, the targets prepared."""
        check_plan_values(plan, self.results_dir)
        plan = resolve_targets(plan)
        refuse_leftovers(self.store, self.results_dir)  # a killed run's throttle still in place
        settings = setup.configure(plan)
        points = all_points(plan)
        facts = engine.check()
        setup.check_engines(points, facts)
        if engine.capabilities.version_features:  # sprandom, ...: refused on an older fio
            check_fio_features(plan, points, facts.version)
        targets = setup.prepare_targets(plan, points, engine, self.guard, self.observer,
                                        self.results_dir)  # fmt: skip
        return plan, settings, facts, targets

    def _context(
        self, run: RunRecord, plan: Plan, targets: setup.PreparedTargets, engine: Engine,
        settings: RunSettings,
    ) -> RunContext:  # fmt: skip
        return RunContext(
            run=run, plan=plan, sizes=targets.sizes, engine=engine, results_dir=self.results_dir,
            store=self.store, observer=self.observer, guard=self.guard, settings=settings,
            target_kinds=targets.kinds, interactive=self.interactive,
            data_misses=stored_misses(self.store.findings(run.id, DATA_REDUCTION.name)),
        )  # fmt: skip

    def _restore(self, tuning: HostTuningSession) -> None:
        for line in tuning.restore():  # the journal keeps it: `arraybench revert` retries
            self.observer.warning(f"host_tuning not restored: {line}; run `arraybench revert`")

    def resume(self, run_id: str) -> CampaignResult:
        run = self.store.get_run(run_id)
        if (Path(run.folder) / IMPORTED_MARK).exists():
            raise StoreError(
                f"run {run.id} was imported from a bundle: it is evidence of a run made "
                "elsewhere, and is not resumed here",
                "start a new run of its plan (plan/given.yaml in the bundle)",
            )
        self.store.lock_run(run.id)  # before anything is touched: a second resume stops here
        self.run_id = run.id
        plan = parse_plan_text(run.plan_yaml, f"{run.folder}/plan.yaml")
        engine = engine_for(plan.engine)
        left = engine.end_leftovers(Path(run.folder))  # the lock says their owner is gone
        if left:
            self.observer.warning(
                f"ended {len(left)} {engine.name} process(es) that the interrupted run had "
                "left running"
            )
        plan, settings, facts, targets = self._prepare(plan, engine)
        self.store.set_run_status(run_id, "running", None)
        tuning = HostTuningSession.apply(plan, Path(run.folder), self.results_dir, host_spec)
        try:
            return self._execute(self._context(run, plan, targets, engine, settings), facts.version)
        finally:
            self._restore(tuning)

    def _execute(self, ctx: RunContext, version: str) -> CampaignResult:
        run, plan = ctx.run, ctx.plan
        done = self.store.completed_keys(run.id)
        points = expand(plan)
        todo = [p for p in points if p.key not in done]
        if plan.rounds:  # the estimate counts the fewest rounds that can prove steady state
            todo += [p for r in range(1, plan.rounds.window + 1) for p in round_points(plan, r)
                     if p.key not in done]  # fmt: skip
        self.store.set_run_engine_version(run.id, version)
        self.observer.campaign_started(run, todo, len(done))
        status = "interrupted"
        fleet: Fleet | None = None
        if plan.array_monitor is not None:  # the array's counters, pulled beside the points
            ctx = replace(ctx, array=ArrayPull(plan.array_monitor, self.results_dir, run.id))
        try:
            if plan.hosts:
                fleet = Fleet(plan, fleet_binary(ctx.engine), self.observer.warning)
                fleet.journal = StoreInjectionLog(self.results_dir, run.id, "")
                ctx = replace(ctx, fleet=fleet)
                fleet.start(version)
            setup.condition(ctx)
            if plan.rounds:  # right after preconditioning, as SNIA runs them
                self._run_rounds(ctx)
            self._run_grid(ctx, points, done, len(todo))
            self._run_special(ctx, first_seq=len(all_points(plan)) + 1)
            raise_if_swallowed()  # not complete if the user asked it to stop meanwhile
            status = "complete"
        except (FioRunError, HostError):
            status = "failed"
            raise
        finally:
            if fleet:
                fleet.stop()
            for line in ctx.array.close() if ctx.array else []:
                self.observer.warning(line)
            # every revert of this process has run (failed ones warned): what is left pending
            # is a failed revert, not a killed controller's (run/injections.left_line)
            self.store.mark_reverts_failed(run.id, os.getpid())
            self.store.set_run_status(run.id, status, now_iso())
        ran = len(self.store.completed_keys(run.id)) - len(done)
        return CampaignResult(run.id, status, ran, len(done))

    def _run_grid(self, ctx: RunContext, points: list[Point], done: set[str], total: int) -> None:
        """The plan's points in order, each scenario's between its steps (run/scenarios.py)."""
        observer = ctx.observer
        steps = ScenarioSteps(self.store, ctx.run.id, ctx.plan, confirm=ctx.prompt_with(),
                              announce=lambda text, s: observer.phase_started("scenario", text, s),
                              finished=lambda: observer.phase_finished(False),
                              warning=ctx.observer.warning)  # fmt: skip
        counter = [0]
        for scenario, part in split_by_scenario(points):
            steps.enter(scenario, part, done)
            self._run_series(ctx, part, done, total, counter)
            steps.leave(scenario)

    def _run_series(
        self, ctx: RunContext, points: list[Point], done: set[str], total: int, counter: list[int]
    ) -> None:
        """Points in order; an adaptive series runs where its first point is."""
        run = ctx.run
        last = last_of_workloads(points)

        def run_one(point: Point) -> None:
            if point.key not in done:
                counter[0] += 1
                self.observer.point_started(point, counter[0], total)
                run_point(ctx, point)
                if point.adaptive == "off" and last.get(point.workload.name) == point.key:
                    self._read_back(ctx, point)

        def measure(point: Point) -> PointRecord | None:  # the adaptive search's view
            run_one(point)
            return self.store.point(run.id, point.key)

        series_done: set[object] = set()
        for point in points:
            if point.adaptive == "off":
                run_one(point)
            elif point.series not in series_done:
                series_done.add(point.series)
                series = [p for p in points if p.series == point.series]
                outcome = run_adaptive(series, point.adaptive, run.latency_bound_us,
                                       run.latency_stat, measure, self.store.samples)  # fmt: skip
                self._record_series(run, outcome.finding)
                if point.workload.name in last and last[point.workload.name] not in done:
                    self._read_back(ctx, series[-1])  # the series' last point may be skipped
                self.observer.points_skipped([p for p in outcome.skipped if p.key not in done])

    def _read_back(self, ctx: RunContext, point: Point) -> None:
        """What a writing workload left on its targets, read back and stored (docs/data.md)."""
        found = read_back(point, ctx.sizes, seed=point.seq)
        self.store.add_finding(ctx.run.id, found)
        for line in read_back_lines(DATA_READ_BACK.of(found)):
            self.observer.note(line)

    def _record_series(self, run: RunRecord, finding: AdaptiveFinding) -> None:
        """One `adaptive` finding per series (a resumed run does not repeat it)."""
        same = (finding["series"], finding["devices"], finding["hosts"])
        for known in ADAPTIVE.among(self.store.findings(run.id, ADAPTIVE.name)):
            if (known.get("series"), known.get("devices"), known.get("hosts")) == same:
                return
        self.store.add_finding(run.id, ADAPTIVE.new(finding))

    def _run_special(self, ctx: RunContext, first_seq: int) -> None:
        """The registered test kinds (run.kinds: interference, metadata), after the grid."""
        done = self.store.completed_keys(ctx.run.id)
        seq = first_seq
        for kind in TEST_KINDS:
            for step in kind.steps(ctx.plan, seq):
                if step.key not in done:
                    self._run_kind_step(ctx, kind, step)
            seq += kind.slots(ctx.plan)

    def _run_kind_step(self, ctx: RunContext, kind: TestKind, step: KindStep) -> None:
        raise_if_swallowed()
        ctx.observer.phase_started(kind.name, step.phase, step.phase_s)
        folder = Path(ctx.run.folder) / "points" / step.folder_name
        started = now_iso()
        if kind.touches_targets:
            self.guard.recheck(t.path for t in ctx.plan.targets)
        resolve = getattr(kind, "resolve", None)  # a step whose level the grid decides (curve)
        step = resolve(step, ctx) if resolve else step
        doc, data = run_step(kind, step, ctx, folder)
        place = PointPlace(ctx.run.id, step.seq, step.identity, _engine(doc), step.workers,
                           step.iodepth, ctx.run.targets, str(folder))  # fmt: skip
        self._store_special(place, step.names, started, doc, Finding(None, kind.name, data))
        ctx.observer.phase_finished(True)

    def _store_special(
        self, place: PointPlace, names: SeriesNames, started: str, doc: EngineDocument,
        finding: Finding,
    ) -> None:  # fmt: skip
        runtime = max((j.elapsed_s or 0.0) for j in doc.jobs)
        record = new_point(place, names, doc.jobs, started, now_iso(), runtime, doc.engine_version)
        self.store.add_point(record, point_metrics(doc.jobs), [], findings=[finding])

    def _run_rounds(self, ctx: RunContext) -> None:
        """SNIA rounds: repeat until the tracked workload is steady over the last window."""
        run, plan = ctx.run, ctx.plan
        assert plan.rounds is not None
        for round_no in range(1, plan.rounds.max + 1):
            done = self.store.completed_keys(run.id)
            for point in round_points(plan, round_no):
                if point.key not in done:
                    self.observer.point_started(point, round_no, plan.rounds.max)
                    run_point(ctx, point)
            verdict = rounds_verdict(self.store.points(run.id), plan.rounds, round_no)
            self.store.add_finding(run.id, ROUNDS.new(verdict))
            if verdict["steady"]:
                later = [p for r in range(round_no + 1, plan.rounds.max + 1)
                         for p in round_points(plan, r)]  # fmt: skip
                ctx.observer.rounds_ended(round_no, later)
                return


def _engine(doc: EngineDocument) -> str:
    return str(doc.global_options.get("ioengine", ""))
