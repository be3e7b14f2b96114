"""fio as an `Engine` (engines/base.py): a thin adapter over the job file writer, the
runner, the JSON parser and the interval logs, which stay fio's own modules."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from arraybench.engines.base import Capabilities, EngineFacts, RunOutcome, RunSpec
from arraybench.engines.fio import layout, runner
from arraybench.engines.fio.jobfile import render_jobfile
from arraybench.engines.fio.parse import parse_fio_json_file
from arraybench.engines.fio.precondition import precondition_jobfile
from arraybench.engines.fio.samples import point_samples
from arraybench.engines.fio.status import status_seconds
from arraybench.engines.fio.values import fio_path
from arraybench.engines.live import LiveReader
from arraybench.engines.measurement import EngineDocument
from arraybench.errors import FioRunError, OutputParseError
from arraybench.plan.expand import Point
from arraybench.plan.model import Plan, Precondition
from arraybench.records import Sample


class FioEngine:
    name = "fio"
    job_name = "point.fio"
    capabilities = Capabilities(many_hosts=True, kind_jobs=True, data_sample=True,
                                version_features=True, open_loop_logs=True)  # fmt: skip

    def __init__(self, binary: str | None = None) -> None:
        self._binary = binary

    @property
    def binary(self) -> str:
        """fio's path, looked up on first use (FioMissingError, exit 1, when not installed)."""
        if self._binary is None:
            self._binary = runner.fio_binary()
        return self._binary

    def check(self) -> EngineFacts:
        facts = runner.fio_facts(self.binary)
        return EngineFacts(self.name, facts.version, frozenset(facts.engines), self.binary)

    def watchdog_seconds(self, expected_s: float) -> float:
        return runner.watchdog_seconds(expected_s)

    def point_job(self, point: Point, sizes: Mapping[str, int], title: str = "") -> str:
        return render_jobfile(point, sizes, title=title)

    def precondition_job(self, plan: Plan, spec: Precondition, sizes: Mapping[str, int]) -> str:
        return precondition_jobfile(plan, spec, sizes)

    def run(self, job: Path, spec: RunSpec) -> RunOutcome:
        outcome = runner.run_jobfile(job, label=spec.label, timeout_s=spec.timeout_s,
                                     on_tick=spec.on_tick, binary=self.binary,
                                     on_start=spec.on_start, pins=spec.pins,
                                     status_interval_s=spec.status_interval_s)  # fmt: skip
        return RunOutcome(outcome.elapsed_s, job.parent)

    def results(self, outcome: RunOutcome, label: str) -> EngineDocument:
        """fio's last JSON document (earlier ones are status reports); a job that ended with
        an error is refused (fio can exit 0 with one)."""
        try:
            document = parse_fio_json_file(outcome.folder / runner.JSON_NAME)[-1]
        except OutputParseError as exc:
            raise FioRunError(f"point {label}: {exc.message}", f"see {outcome.folder}") from None
        runner.check_job_errors(label, document.jobs, outcome.folder)
        return document

    def samples(self, folder: Path) -> list[Sample]:
        return point_samples(folder)

    def live_reader(self, folder: Path) -> LiveReader:
        return status_seconds(folder / runner.JSON_NAME)  # --status-interval's reports

    def check_path(self, path: str, where: str) -> None:
        fio_path(path, where)

    def lay_out(self, path: Path, size: int, fd: int) -> str | None:
        return layout.lay_out(path, size, fd, self.binary)

    def end_leftovers(self, folder: Path) -> list[int]:
        return runner.end_leftover_fio(folder)
