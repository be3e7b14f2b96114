"""CSCS's metadata test as a test kind: create, stat and delete many small files at each
thread level; one stored point and one `metadata` finding per level. The test names its
tool (`metadata.engine`): fio's file engines write the job file here; mdtest is an engine of
its own (`engines/mdtest`), which this kind hands the run to (`engine_of`)."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

from arraybench.analysis.metadata import mdtest_rows, metadata_results
from arraybench.engines.base import Engine
from arraybench.engines.fio.features import DIR_OPS
from arraybench.engines.fio.metadata import (
    DIR_ENGINES_SINCE,
    MetadataSpec,
    leftovers,
    render_metadata_jobfile,
    supported_ops,
)
from arraybench.engines.fio.runner import fio_binary, fio_version
from arraybench.engines.mdtest.argv import MdtestSpec, ssh_config
from arraybench.engines.mdtest.engine import MdtestEngine, on_mdtest
from arraybench.engines.measurement import EngineDocument
from arraybench.errors import ArraybenchError, FioMissingError
from arraybench.finding_kinds import METADATA, MetadataFinding, MetadataRowData, fields_of
from arraybench.plan.model import MetadataTest, Plan
from arraybench.point_identity import PointIdentity
from arraybench.run.context import RunContext
from arraybench.run.kinds.base import KindStep
from arraybench.run.record import SeriesNames
from arraybench.run.spans import ZERO, Phase, Span

# operations per second of their kind (create, stat, delete), not I/Os: unit "ops/s"
NAMES = SeriesNames("metadata", "Metadata", "metadata", "metadata", 0, 0, "ops/s")


def metadata_directory(plan: Plan, test: MetadataTest, results_dir: Path) -> Path:
    """Absolute: fio runs in the point's folder, where a relative path (the default
    ./arraybench-results) would name another directory."""
    folder = Path(test.directory) if test.directory else results_dir / "scratch" / "metadata"
    return folder.resolve()


def metadata_seconds(test: MetadataTest, threads: int) -> Span:
    """A thread level of the metadata test; the high end is the runner's own expectation."""
    ops = threads * test.files_per_thread * len(planned_ops(test))
    return Span(0.3, 0.5 + ops / 20000, 10 + threads * test.files_per_thread / 500)


@functools.cache
def _supported(binary: str) -> tuple[frozenset[str], tuple[str, ...], str]:
    """What this fio times, a note per operation it cannot, its version: asked once."""
    ops, notes = supported_ops(binary)
    return frozenset(ops), tuple(notes), fio_version(binary)


def runnable_ops(test: MetadataTest) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The plan's operations this fio can time, and a note per one left out (the directory
    phases before fio 3.37: `engines/fio/features.py`)."""
    supported, notes, _ = _supported(fio_binary())
    ops = tuple(op for op in test.ops if op in supported)
    return ops, tuple(n for n in notes if n.split(":", 1)[0] in test.ops)


def planned_ops(test: MetadataTest) -> tuple[str, ...]:
    """The operations a run will time: those this fio can (all of the plan's when no fio is
    found here, as for a plan checked on another machine)."""
    if on_mdtest(test.engine, test.mdtest):  # mdtest times every one
        return tuple(test.ops)
    try:
        return runnable_ops(test)[0] or tuple(test.ops)
    except FioMissingError:
        return tuple(test.ops)


def left_out_line(test: MetadataTest) -> str | None:
    """One line for the operations this fio cannot time, or None when it times them all."""
    ops, notes = runnable_ops(test)
    left = [op for op in test.ops if op not in ops]
    if not left:
        return None
    if all(op.startswith("dir-") for op in left):
        version = _supported(fio_binary())[2]
        return (f"metadata test: {', '.join(left)} left out: {version} has no directory "
                f"engines (these figures need {DIR_OPS.needs}); name a newer fio with "
                "--fio PATH")  # fmt: skip
    return f"metadata test: {'; '.join(notes)}"


def _spec(test: MetadataTest, threads: int, directory: Path) -> MetadataSpec:
    ops, notes = runnable_ops(test)
    if not ops:
        hint = notes[0] if notes else "name another fio with --fio PATH"
        raise FioMissingError(
            f"metadata test: this fio can time none of {', '.join(test.ops)}", hint
        )
    return MetadataSpec(str(directory), threads, test.files_per_thread, ops)


def _fio_ops(test: MetadataTest) -> tuple[tuple[str, ...], list[str]]:
    """The operations fio runs, and what it leaves out: those this fio cannot time
    (directories before fio 3.37), each said; all asked when no fio is found here (the
    engine's own check says so, once)."""
    try:
        ops = runnable_ops(test)[0]
    except ArraybenchError:
        return tuple(test.ops), []
    return ops, [op for op in test.ops if op not in ops]


def _mdtest_spec(plan: Plan, test: MetadataTest, tasks: int, directory: Path) -> MdtestSpec:
    """mdtest in its own folder per level (`-d`), on the plan's hosts when it has some
    (mpirun's ssh launcher with their keys: an ssh_config beside, written here)."""
    hosts = tuple(h.address for h in plan.hosts)
    config = ""
    if plan.hosts:
        path = directory / "mdtest-ssh_config"
        path.write_text(ssh_config(plan.hosts))
        config = str(path)
    return MdtestSpec(str(directory / f"mdtest-t{tasks}"), tasks, test.files_per_thread,
                      tuple(test.ops), test.repetitions, hosts, test.mdtest, "mpirun",
                      config)  # fmt: skip


class MetadataKind:
    name = METADATA.name  # the phase kind and the finding kind
    report_section = "report.sections.special.metadata_report"
    touches_targets = False  # it works in its own directory

    def engine_of(self, ctx: RunContext) -> Engine:
        meta = ctx.plan.metadata
        if meta is not None and on_mdtest(meta.engine, meta.mdtest):
            return MdtestEngine(meta.mdtest)
        return ctx.engine

    def slots(self, plan: Plan) -> int:
        return 1 + max(plan.metadata.threads) if plan.metadata else 1

    def steps(self, plan: Plan, first_seq: int) -> list[KindStep]:
        meta = plan.metadata
        if meta is None:
            return []
        steps = []
        for threads in meta.threads:
            identity, seq = PointIdentity("metadata", f"t{threads}"), first_seq + threads
            ops = ", ".join(planned_ops(meta))
            each = "items per task" if on_mdtest(meta.engine, meta.mdtest) else "files per thread"
            phase = f"{identity.key}: {ops} x {meta.files_per_thread} {each}"
            # generous watchdog: slow metadata servers
            expected = 10 + threads * meta.files_per_thread / 500
            steps.append(KindStep(identity, seq, f"{seq:03d}-metadata-t{threads}", phase,
                                  metadata_seconds(meta, threads).typical, expected, NAMES,
                                  threads, 1))  # fmt: skip
        return steps

    def outline(self, plan: Plan) -> Phase | None:
        meta = plan.metadata
        if meta is None:
            return None
        span = ZERO
        for threads in meta.threads:
            span = span + metadata_seconds(meta, threads)
        title = (f"metadata test: {', '.join(planned_ops(meta))} of {meta.files_per_thread} "
                 f"files per thread at {', '.join(map(str, meta.threads))} threads, "
                 f"{_tool_said(meta)}")  # fmt: skip
        return Phase("metadata", title, span, len(meta.threads))

    def job_file(self, step: KindStep, ctx: RunContext) -> str:
        meta = ctx.plan.metadata
        assert meta is not None  # steps() gave this step
        directory = metadata_directory(ctx.plan, meta, ctx.results_dir)
        directory.mkdir(parents=True, exist_ok=True)
        engine = self.engine_of(ctx)
        if isinstance(engine, MdtestEngine):
            md = _mdtest_spec(ctx.plan, meta, step.workers, directory)
            if Path(md.directory).exists():  # a killed run's tree: create would time opens
                shutil.rmtree(md.directory)
            return engine.job(md)
        spec = _spec(meta, step.workers, directory)
        if step.workers == meta.threads[0] and (line := left_out_line(meta)):  # said once
            ctx.observer.warning(line)
        stale = leftovers(spec)
        if stale:  # a create phase over existing files would only time opens
            for path in stale:
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        return render_metadata_jobfile(spec)

    def finding(
        self, step: KindStep, ctx: RunContext, folder: Path, document: EngineDocument
    ) -> MetadataFinding:
        meta = ctx.plan.metadata
        assert meta is not None
        engine = self.engine_of(ctx)
        if isinstance(engine, MdtestEngine):
            summary = engine.summary(folder, step.key)
            rows = mdtest_rows(summary, meta.ops, step.workers)
            return {"threads": step.workers,
                    "rows": [fields_of(MetadataRowData, r) for r in rows]}  # fmt: skip
        spec = _spec(meta, step.workers, metadata_directory(ctx.plan, meta, ctx.results_dir))
        rows = metadata_results(document, spec)
        return {"threads": step.workers, "rows": [fields_of(MetadataRowData, r) for r in rows]}


def _tool_said(meta: MetadataTest) -> str:
    """The tool the test will run on, and why where `auto` chose fio."""
    if on_mdtest(meta.engine, meta.mdtest):
        return f"on mdtest through mpirun, {meta.repetitions} iteration(s) each"
    if meta.engine == "auto":
        left = ", ".join(_fio_ops(meta)[1])
        return (
            "on fio's file engines (mdtest or mpirun not found: install IOR's mdtest and "
            "Open MPI to run CSCS's tool)"
            + (
                f"; left out: {left} (this fio has no engine for them; fio's directory engines "
                f"since {DIR_ENGINES_SINCE})"
                if left
                else ""
            )
        )
    return "on fio's file engines"
