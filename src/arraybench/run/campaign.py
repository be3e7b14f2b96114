"""One campaign: plan -> points -> fio -> store, one committed point at a time.

Library code: it reports progress to an observer and raises ArraybenchError; it never prints.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import yaml

from arraybench import __version__
from arraybench.analysis.aggregate import PointMetrics, point_metrics
from arraybench.analysis.cliff import pause_after
from arraybench.analysis.findings import cliff_finding, steady_finding
from arraybench.analysis.steady import steady_state
from arraybench.analysis.validity import point_finding
from arraybench.errors import FioMissingError, FioParseError, FioRunError, PlanError
from arraybench.events.tuning import HostTuningSession, check_tuning
from arraybench.fio import runner
from arraybench.fio.jobfile import render_jobfile
from arraybench.fio.parse import parse_fio_json_file
from arraybench.fio.results import FioDocument
from arraybench.hosts import HostError
from arraybench.monitor.point import PointMonitor
from arraybench.plan.expand import (
    Point,
    check_resolved,
    expand,
    round_in_key,
    round_points,
    throughput_unit,
)
from arraybench.plan.load import parse_plan_text
from arraybench.plan.model import Plan, Rounds
from arraybench.run import provenance
from arraybench.run.adaptive_series import run_adaptive
from arraybench.run.context import RunContext
from arraybench.run.fleet import Fleet, HostRun, host_spec
from arraybench.run.kinds import TEST_KINDS, KindStep, TestKind, run_step
from arraybench.run.outline import write_seconds
from arraybench.run.plan_values import check_plan_values, resolve_targets
from arraybench.run.progress import run_steps
from arraybench.run.record import PointPlace, SeriesNames, names_of, new_point
from arraybench.run.scenarios import ScenarioSteps, run_label, split_by_scenario
from arraybench.run.sidecars import PointExtras
from arraybench.run.timeseries import point_samples
from arraybench.store.db import Finding, NewPoint, PointRecord, RunRecord, Sample, Store
from arraybench.targets.condition import purge_lines, purge_target, run_precondition
from arraybench.targets.guard import TargetGuard
from arraybench.targets.prepare import file_size, needs_layout

SCRATCH_NAME = "arraybench-scratch.dat"
MAX_ID_NAME = 100  # characters of the plan name in a run id (a folder name: 255 bytes at most)


def point_findings(point: Point, samples: Sequence[Sample]) -> list[Finding]:
    """Analyses the plan asks for on this point's 1-second series."""
    found = []
    if "cliff" in point.workload.analysis:
        found.append(Finding(None, "cliff", cliff_finding(samples, point.workload.bs)))
    if "steady" in point.workload.analysis or point.timing.steady:
        found.append(Finding(None, "steady", steady_finding(samples)))
    return found


def all_points(plan: Plan) -> list[Point]:
    """Every point the plan can run, rounds at their maximum (for checks and the total)."""
    rounds = range(1, plan.rounds.max + 1) if plan.rounds else range(0)
    return expand(plan) + [p for r in rounds for p in round_points(plan, r)]


def rounds_verdict(points: Sequence[PointRecord], rounds: Rounds, upto: int) -> dict[str, Any]:
    """The tracked workload's throughput per round (its first level) and the SNIA check."""
    values: list[float] = []
    for round_no in range(1, upto + 1):
        tracked = [
            p for p in points if p.workload == rounds.track and round_in_key(p.key) == round_no
        ]
        if tracked:
            values.append(min(tracked, key=lambda p: p.seq).throughput())
    result = steady_state(values, window=rounds.window)
    return {"round": upto, "track": rounds.track, "window": rounds.window, "values": values,
            **asdict(result)}  # fmt: skip


def gc_rate_of(findings: Sequence[Finding]) -> float | None:
    """The last measured garbage-collection rate (bytes/s) among cliff findings."""
    rates = [f.data.get("gc_bytes_per_s") for f in findings if f.kind == "cliff"]
    known = [r for r in rates if r]
    return float(known[-1]) if known else None


class Observer(Protocol):
    def campaign_started(self, run: RunRecord, todo: Sequence[Point], skipped: int) -> None: ...
    def target_preparing(self, path: str, size: int) -> None: ...
    def point_started(self, point: Point, index: int, total: int) -> None: ...
    def point_tick(self, point: Point, elapsed_s: float) -> None: ...
    def point_finished(self, point: Point, metrics: PointMetrics, unit: str) -> None: ...
    def warning(self, text: str) -> None: ...
    def pausing(self, point: Point, seconds: float) -> None: ...
    def points_skipped(self, points: Sequence[Point]) -> None: ...


@dataclass(frozen=True)
class CampaignResult:
    run_id: str
    status: str
    points_run: int
    points_skipped: int


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def id_safe(name: str) -> str:
    """A name as it can stand in a run id and a folder name: no `/`, no control character or
    other punctuation, not longer than a file name can be."""
    return re.sub(r"[^\w.+=-]+", "_", name).lstrip(".")[:MAX_ID_NAME] or "run"


def new_run_id(plan_name: str, store_dir: Path) -> str:
    """A new run id, its folder created here: mkdir is atomic, so two runs started in the same
    second in one results folder get two ids, never one."""
    base = time.strftime("%Y%m%d-%H%M%S") + f"-{id_safe(plan_name)}"
    runs = store_dir / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    run_id, n = base, 1
    while True:
        try:
            (runs / run_id).mkdir()
            return run_id
        except FileExistsError:
            n += 1
            run_id = f"{base}-{n}"


def scratch_path(results_dir: Path) -> str:
    return str((results_dir / "scratch" / SCRATCH_NAME).resolve())


def plan_yaml(plan: Plan) -> str:
    return yaml.safe_dump(plan.model_dump(mode="json", exclude_none=True), sort_keys=False)


class Campaign:
    def __init__(self, store: Store, results_dir: Path, observer: Observer) -> None:
        self.gc_rate: float | None = None  # declared in the plan (gc_throughput), if any
        self.monitor = True  # sample the targets' devices and CPU beside fio
        self.kinds: dict[str, str] = {}  # target path -> "file", "new-file" or "block"
        self.fleet: Fleet | None = None  # the plan's hosts, when it has any
        self.on_host_failure = "stop"
        self.allow_destroy: tuple[str, ...] = ()
        self.max_start_spread_s = 1.0  # the plan's max_start_spread
        self.guard = TargetGuard()  # local targets as checked; rechecked before each fio
        self.interactive = False  # prompts ask the operator (observer.confirm) when True
        self.run_id: str | None = None  # once the run exists in the store (for a resume hint)
        self.store = store
        self.results_dir = results_dir
        self.observer = observer

    # setup --------------------------------------------------------------------------------
    def _check_engines(self, points: Sequence[Point], fio: str) -> None:
        engines = runner.available_engines(fio)
        for point in points:
            if engines and point.ioengine not in engines:
                raise FioMissingError(
                    f"point {point.key}: ioengine {point.ioengine!r} is not available in this fio",
                    f"use one of: {', '.join(sorted(engines))}",
                )

    def _prepare_targets(self, plan: Plan, points: Sequence[Point], fio: str) -> dict[str, int]:
        """Safety-check every target, create missing files; return target sizes in bytes."""
        if plan.hosts:  # the targets live on the hosts: the fleet inspects them at start
            every = [*plan.targets, *(t for h in plan.hosts for t in h.targets)]
            return {t.path: t.size for t in every if t.size}
        writes = any(p.writes for p in points)
        sizes: dict[str, int] = {}
        scratch = scratch_path(self.results_dir)
        if any(t.path == scratch for t in plan.targets):
            Path(scratch).parent.mkdir(parents=True, exist_ok=True)
        for target in plan.targets:
            info = self.guard.check(target.path, writes=writes, allow_destroy=plan.allow_destroy,
                                    direct=any(p.direct for p in points))  # fmt: skip
            self.kinds[target.path] = info.kind
            if info.kind != "new-file":  # arraybench creates new files itself, just below
                for text in info.warnings:
                    self.observer.warning(text)
            if info.kind == "block":
                sizes[target.path] = info.size_bytes or 0
                continue
            want = target.size or (info.size_bytes or 0)
            if want <= 0:
                raise PlanError(
                    f"target {target.path}: a new file needs a size", "add `size: 1g` to the target"
                )
            path = Path(target.path)
            if needs_layout(path, want):
                self.observer.target_preparing(target.path, want)
                self.guard.lay_out(target.path, want, fio)
            sizes[target.path] = min(want, file_size(path))
        return sizes

    def _run_record(self, plan: Plan, run_id: str, scale: float, total: int) -> RunRecord:
        return RunRecord(
            id=run_id,
            plan_name=plan.name,
            scenario=run_label(plan.scenario, plan.scenarios),
            labels=dict(plan.labels),
            plan_yaml=plan_yaml(plan),
            folder=str(self.results_dir / "runs" / run_id),
            scale=scale,
            status="running",
            started=now_iso(),
            finished=None,
            total_points=total,
            fio_version=None,
            arraybench_version=__version__,
            host=socket.gethostname(),
            kernel=platform.release(),
            targets=[t.path for t in plan.targets]
            + [f"{h.name}:{t.path}" for h in plan.hosts for t in h.targets],
            latency_bound_us=plan.latency_bound.value * 1e6,
            latency_stat=plan.latency_bound.stat,
        )

    # running ------------------------------------------------------------------------------
    def _configure(self, plan: Plan) -> None:
        """The plan's campaign-wide settings, for a new run and a resumed one alike."""
        self.gc_rate = float(plan.gc_throughput) if plan.gc_throughput else None
        self.monitor = plan.monitor
        self.on_host_failure = plan.on_host_failure
        self.allow_destroy = tuple(plan.allow_destroy)
        self.max_start_spread_s = plan.max_start_spread

    def start(self, plan: Plan, scale: float) -> CampaignResult:
        check_resolved(plan)
        check_plan_values(plan, self.results_dir)
        plan = resolve_targets(plan)  # fio opens exactly what the safety check examines
        check_tuning(plan, self.results_dir, host_spec)  # a refused value stops before the run
        self._configure(plan)
        points = all_points(plan)
        fio = runner.fio_binary()
        self._check_engines(points, fio)
        sizes = self._prepare_targets(plan, points, fio)
        run_id = new_run_id(plan.name, self.results_dir)
        self.store.lock_run(run_id)
        run = self._run_record(plan, run_id, scale, run_steps(plan))
        (Path(run.folder) / "plan.yaml").write_text(run.plan_yaml)
        # before the run exists: a value the kernel refuses leaves no run marked running
        tuning = HostTuningSession.apply(plan, Path(run.folder), self.results_dir, host_spec)
        try:
            self.store.create_run(run)
            self.run_id = run.id
            found = provenance.collect(plan, sizes, tuning.applied())
            self.store.add_finding(run.id, "provenance", found)
            return self._execute(RunContext(run, plan, sizes, fio, self.results_dir))
        finally:
            self._restore(tuning)

    def _restore(self, tuning: HostTuningSession) -> None:
        for line in tuning.restore():  # the journal keeps it: `arraybench revert` retries
            self.observer.warning(f"host_tuning not restored: {line}; run `arraybench revert`")

    def resume(self, run_id: str) -> CampaignResult:
        run = self.store.get_run(run_id)
        self.store.lock_run(run.id)  # before anything is touched: a second resume stops here
        self.run_id = run.id
        left = runner.end_leftover_fio(Path(run.folder))  # the lock says their owner is gone
        if left:
            self.observer.warning(
                f"ended {len(left)} fio process(es) that the interrupted run had left running"
            )
        plan = parse_plan_text(run.plan_yaml, f"{run.folder}/plan.yaml")
        check_plan_values(plan, self.results_dir)
        plan = resolve_targets(plan)
        self._configure(plan)
        points = all_points(plan)
        fio = runner.fio_binary()
        self._check_engines(points, fio)
        sizes = self._prepare_targets(plan, points, fio)
        self.store.set_run_status(run_id, "running", None)
        tuning = HostTuningSession.apply(plan, Path(run.folder), self.results_dir, host_spec)
        try:
            return self._execute(RunContext(run, plan, sizes, fio, self.results_dir))
        finally:
            self._restore(tuning)

    def _execute(self, ctx: RunContext) -> CampaignResult:
        run, plan, fio = ctx.run, ctx.plan, ctx.fio
        done = self.store.completed_keys(run.id)
        points = expand(plan)
        todo = [p for p in points if p.key not in done]
        if plan.rounds:  # the estimate counts the fewest rounds that can prove steady state
            todo += [p for r in range(1, plan.rounds.window + 1) for p in round_points(plan, r)
                     if p.key not in done]  # fmt: skip
        version = runner.fio_version(fio)
        self.store.set_run_fio_version(run.id, version)
        self.observer.campaign_started(run, todo, len(done))
        status = "interrupted"
        try:
            if plan.hosts:
                self.fleet = Fleet(plan, fio, self.observer.warning)
                self.fleet.start(version)
            self._condition(ctx)
            if plan.rounds:  # right after preconditioning, as SNIA runs them
                self._run_rounds(ctx)
            self._run_grid(ctx, points, done, len(todo))
            self._run_special(ctx, first_seq=len(all_points(plan)) + 1)
            status = "complete"
        except (FioRunError, HostError):
            status = "failed"
            raise
        finally:
            if self.fleet:
                self.fleet.stop()
            self.store.set_run_status(run.id, status, now_iso())
        ran = len(self.store.completed_keys(run.id)) - len(done)
        return CampaignResult(run.id, status, ran, len(done))

    def _run_grid(self, ctx: RunContext, points: list[Point], done: set[str], total: int) -> None:
        """The plan's points in order, each scenario's between its steps (run/scenarios.py)."""
        steps = ScenarioSteps(self.store, ctx.run.id, ctx.plan, confirm=self._confirm(),
                              announce=lambda text, s: self._phase("scenario", text, s),
                              finished=lambda: self._notify("phase_finished", False),
                              warning=self.observer.warning)  # fmt: skip
        counter = [0]
        for scenario, part in split_by_scenario(points):
            steps.enter(scenario, part, done)
            self._run_series(ctx, part, done, total, counter)
            steps.leave(scenario)

    def _confirm(self) -> Callable[[str], None] | None:
        return getattr(self.observer, "confirm", None) if self.interactive else None

    def _run_series(
        self, ctx: RunContext, points: list[Point], done: set[str], total: int, counter: list[int]
    ) -> None:
        """Points in order; an adaptive series runs where its first point is."""
        run = ctx.run

        def run_one(point: Point) -> None:
            if point.key not in done:
                counter[0] += 1
                self.observer.point_started(point, counter[0], total)
                self._run_point(ctx, point)

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
                                       run.latency_stat, measure)  # fmt: skip
                self._record_series(run, outcome.finding)
                self.observer.points_skipped([p for p in outcome.skipped if p.key not in done])

    def _record_series(self, run: RunRecord, finding: dict[str, Any]) -> None:
        """One `adaptive` finding per series (a resumed run does not repeat it)."""
        same = ("series", "devices", "hosts")
        for known in self.store.findings(run.id, "adaptive"):
            if all(known.data.get(k) == finding[k] for k in same):
                return
        self.store.add_finding(run.id, "adaptive", finding)

    def _condition(self, ctx: RunContext) -> None:
        """Purge and precondition once per run (a resumed run does not repeat them)."""
        run, plan, sizes, fio = ctx.run, ctx.plan, ctx.sizes, ctx.fio
        kinds = {f.kind for f in self.store.findings(run.id)}
        if plan.purge and "purge" not in kinds:
            self._phase("purge", "blkdiscard of the block devices", 1.0)
            results = [purge_target(t.path, self.kinds.get(t.path, "file")) for t in plan.targets]
            self._notify("phase_finished", False)
            for line in purge_lines(results):
                self.observer.warning(line)
            self.store.add_finding(run.id, "purge", {"targets": results})
        if plan.precondition and "precondition" not in kinds:
            written = sum(sizes.values()) * plan.precondition.passes
            self._phase("precondition", f"writing the targets {plan.precondition.passes:g} "
                        "times over", write_seconds(written))  # fmt: skip
            folder = Path(run.folder) / "precondition"
            self.guard.recheck(t.path for t in plan.targets)
            done = run_precondition(plan, plan.precondition, sizes, folder, fio)
            self._notify("phase_finished", False)
            self.store.add_finding(run.id, "precondition", done)

    def _notify(self, name: str, *args: Any) -> None:
        """Progress beyond the Observer protocol (phases, rounds ended): observers that do
        not show progress need not know them."""
        method = getattr(self.observer, name, None)
        if method is not None:
            method(*args)

    def _phase(self, kind: str, text: str, expected_s: float) -> None:
        method = getattr(self.observer, "phase_started", None)
        if method is not None:
            method(kind, text, expected_s)
        else:  # an observer without phases sees them as before
            self.observer.warning(f"{kind}: {text}")

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
        self._phase(kind.name, step.phase, step.phase_s)
        folder = Path(ctx.run.folder) / "points" / step.folder_name
        started = now_iso()
        if kind.touches_targets:
            self.guard.recheck(t.path for t in ctx.plan.targets)
        doc, data = run_step(kind, step, ctx, folder)
        place = PointPlace(ctx.run.id, step.seq, step.key, _engine(doc), step.workers,
                           step.iodepth, ctx.run.targets, str(folder))  # fmt: skip
        self._store_special(place, step.names, started, doc, Finding(None, kind.name, data))
        self._notify("phase_finished", True)

    def _store_special(
        self, place: PointPlace, names: SeriesNames, started: str, doc: FioDocument,
        finding: Finding,
    ) -> None:  # fmt: skip
        runtime = max((j.elapsed_s or 0.0) for j in doc.jobs)
        record = new_point(place, names, doc.jobs, started, now_iso(), runtime, doc.fio_version)
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
                    self._run_point(ctx, point)
            verdict = rounds_verdict(self.store.points(run.id), plan.rounds, round_no)
            self.store.add_finding(run.id, "rounds", verdict)
            if verdict["steady"]:
                later = [p for r in range(round_no + 1, plan.rounds.max + 1)
                         for p in round_points(plan, r)]  # fmt: skip
                self._notify("rounds_ended", round_no, later)
                return

    def _run_point(self, ctx: RunContext, point: Point) -> None:
        run, sizes, fio = ctx.run, ctx.sizes, ctx.fio
        folder = Path(run.folder) / "points" / f"{point.seq:03d}-{point.key.replace('/', '-')}"
        if folder.exists():  # left by an interrupted attempt: start it afresh
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        started = now_iso()
        if point.level.hosts:
            self._run_point_on_hosts(ctx, point, folder, started)
            return
        extras = self._extras(point, folder, sizes)
        jobfile = folder / "point.fio"
        fio_sizes = extras.fio_sizes() if extras else sizes
        self.guard.recheck(t.path for t in point.targets)  # a link swapped since the check
        jobfile.write_text(render_jobfile(point, fio_sizes, title=f"run {run.id}"))
        with PointMonitor([t.path for t in point.targets], self.monitor) as monitor:
            if extras:
                extras.live_iops = monitor.live_iops
            try:
                outcome = runner.run_jobfile(
                    jobfile,
                    label=point.key,
                    timeout_s=runner.watchdog_seconds(point.expected_seconds),
                    on_tick=lambda elapsed: self.observer.point_tick(point, elapsed),
                    binary=fio,
                    on_start=extras.started if extras else None,
                )
            finally:
                if extras:
                    extras.finish()  # events reverted, acknowledged writes read back
        try:
            document = parse_fio_json_file(outcome.json_path)[-1]
        except FioParseError as exc:
            raise FioRunError(f"point {point.key}: {exc.message}", f"see {folder}") from None
        runner.check_job_errors(point.key, document.jobs, folder)
        metrics = point_metrics(document.jobs)
        record = self._point_fields(run, point, folder, started, outcome.elapsed_s, document)
        samples = point_samples(folder)
        findings = point_findings(point, samples)
        if extras:
            findings += extras.findings(samples, document.jobs)
            self._report_extras(point, extras)
        host = monitor.result(samples)
        if point.workload.verify:  # the integrity writer's I/O is on the device by design
            host.flags = []
        if host.flags:
            findings.append(
                Finding(None, "monitor", {"flags": host.flags, "devices": host.devices})
            )
            # not printed per point: the report says it once per run (report.assemble)
        files = all(self.kinds.get(t.path) in ("file", "new-file") for t in point.targets)
        flags = point_finding(point, record, samples, monitor_flags=host.flags, cpus=os.cpu_count(),
                              cpu=host.cpu, file_target=files)  # fmt: skip
        findings += [flags] if flags else []
        pause = self._pause_seconds(run, point, metrics, findings)
        record = replace(
            record,
            pause_s=pause,
            kernel_iops=host.kernel_iops,
            kernel_mbps=host.kernel_mbps,
            cpu_busy_pct=host.cpu_busy_pct,
        )
        self.store.add_point(record, metrics, samples, host.host, host.cpu, findings)
        self.observer.point_finished(point, metrics, throughput_unit(point.workload))
        if pause > 0:
            self.observer.pausing(point, pause)
            time.sleep(pause)

    def _extras(self, point: Point, folder: Path, sizes: dict[str, int]) -> PointExtras | None:
        if not (point.workload.events or point.workload.verify):
            return None
        confirm = self._confirm()
        return PointExtras(point, folder, sizes, live_iops=list, confirm=confirm,
                           allow_destroy=self.allow_destroy)  # fmt: skip

    def _report_extras(self, point: Point, extras: PointExtras) -> None:
        if extras.integrity is not None:
            line = f"point {point.key}: {extras.integrity.summary_line()}"
            note = getattr(self.observer, "note", None)
            if extras.integrity_failed or note is None:
                self.observer.warning(line if extras.integrity_failed else line + " (clean)")
            else:
                note(line + " (clean)")
        if extras.timeline is not None:
            failed = [r for r in extras.timeline.records() if r.outcome != "ok"]
            for r in failed:
                self.observer.warning(f"point {point.key}: event {r.label} ({r.action}): "
                                      f"{r.outcome}: {r.detail}")  # fmt: skip

    def _run_point_on_hosts(
        self, ctx: RunContext, point: Point, folder: Path, started: str
    ) -> None:
        """One point on all of its hosts at once; a failed host leaves a partial point."""
        run, sizes = ctx.run, ctx.sizes
        assert self.fleet is not None
        timeout = runner.watchdog_seconds(point.expected_seconds)
        result = self.fleet.run_point(point, folder, sizes, f"run {run.id}", timeout)
        if not result.jobs:
            raise HostError(f"point {point.key}: no host returned results "
                            f"({'; '.join(result.finding['failures'].values())})",
                            f"see {folder}")  # fmt: skip
        runner.check_job_errors(point.key, result.jobs, folder)
        metrics = point_metrics(result.jobs)
        record = self._point_fields(run, point, folder, started, result.elapsed_s, result)
        record = replace(record, hosts=len(point.level.hosts), partial=int(bool(result.failed)),
                         failed_hosts=",".join(result.failed), start_spread_ms=result.spread_ms,
                         pause_s=0.0)  # fmt: skip
        findings = [Finding(None, "hosts", result.finding), *point_findings(point, result.samples)]
        flags = point_finding(point, record, result.samples,  # fio's CPU only: no monitor
                              max_start_spread_ms=self.max_start_spread_s * 1000)  # fmt: skip
        findings += [flags] if flags else []
        self.store.add_point(record, metrics, result.samples, findings=findings)
        self.observer.point_finished(point, metrics, throughput_unit(point.workload))
        if result.failed:
            why = "; ".join(result.finding["failures"].values())
            message = (
                f"point {point.key}: host(s) {', '.join(result.failed)} failed ({why}); "
                "stored as partial"
            )
            if self.on_host_failure == "stop":
                raise HostError(message, "fix the host, then continue with --resume")
            self.observer.warning(message)

    def _pause_seconds(
        self, run: RunRecord, point: Point, metrics: PointMetrics, findings: list[Finding]
    ) -> float:
        """The pause after a point: fixed, or the HUS VM rule bytes written / GC rate."""
        rule = point.workload.pause_after
        if rule != "gc":
            return float(rule)
        rate = self.gc_rate or gc_rate_of(findings)
        if rate is None:
            rate = gc_rate_of(self.store.findings(run.id, "cliff"))
        if rate is None or rate <= 0:
            self.observer.warning(
                f"point {point.key}: pause_after: gc, but no GC throughput is known yet "
                "(set gc_throughput in the plan or run a workload with analysis: [cliff] first)"
            )
            return 0.0
        return pause_after(metrics.write.bytes, rate)

    def _point_fields(
        self,
        run: RunRecord,
        point: Point,
        folder: Path,
        started: str,
        elapsed: float,
        ran: FioDocument | HostRun,
    ) -> NewPoint:
        targets = [t.path for t in point.targets]
        level = point.level
        place = PointPlace(run.id, point.seq, point.key, point.ioengine, level.workers,
                           level.iodepth, targets, str(folder), level.devices)  # fmt: skip
        names = names_of(point.workload, point.ioengine)
        record = new_point(place, names, ran.jobs, started, now_iso(), elapsed, ran.fio_version)
        return replace(record, scenario=point.scenario)


def _engine(doc: FioDocument) -> str:
    return str(doc.global_options.get("ioengine", ""))
