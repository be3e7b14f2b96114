"""`verify` on a local point: the integrity writer beside fio, on a region at the end of the
first target that fio's load is kept out of. It starts when fio starts and stops with it,
before the events are reverted (a failback that loses cached writes does so after the last
acknowledged write); after the reverts every acknowledged block is read back, so a
failover's lost writes show up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arraybench.finding_kinds import INTEGRITY
from arraybench.integrity import IntegrityReport, check_region
from arraybench.integrity.writer import WriterConfig, spawn_writer, stop_writer, supports_direct
from arraybench.plan.expand import Point
from arraybench.records import Finding
from arraybench.run.load import LoadResult, LoadStart
from arraybench.run.sidecar import Line, Sidecar

JOURNAL = "integrity.journal"


class LocalVerify(Sidecar):
    def __init__(self, point: Point, folder: Path, allow_destroy: tuple[str, ...] = ()) -> None:
        assert point.workload.verify is not None
        self.point = point
        self.verify = point.workload.verify
        self.target = point.targets[0].path
        self.journal = folder / JOURNAL
        self.allow_destroy = allow_destroy
        self.size = 0
        self.writer: Any = None
        self.writer_error: str | None = None
        self.integrity: IntegrityReport | None = None

    def prepare(self, sizes: dict[str, int]) -> dict[str, int]:
        """Target sizes as fio sees them: the verify region is kept out of its load."""
        self.size = sizes[self.target]
        return {**sizes, self.target: self.size - self.verify.region}

    def load_started(self, load: LoadStart) -> None:
        cfg = WriterConfig(
            path=self.target, length=self.verify.region, offset=self.size - self.verify.region,
            block_size=self.verify.block_size, direct=self.point.direct, iops=self.verify.iops,
            allow_destroy=self.allow_destroy,
        )  # fmt: skip
        self.writer = spawn_writer(cfg, self.journal)

    def stop(self) -> None:
        if self.writer is None:
            return
        try:
            stop_writer(self.writer)
        except Exception as exc:  # the check still reads what was journaled
            self.writer_error = str(exc)

    def check(self) -> None:
        """Every acknowledged block read back (after the events were reverted)."""
        if self.writer is not None:
            direct = self.point.direct and supports_direct(self.target)
            self.integrity = check_region(self.target, self.journal, direct=direct)

    def findings(self, result: LoadResult) -> list[Finding]:
        if self.integrity is None:
            return []
        data = self.integrity.as_dict()
        data |= {"summary": self.integrity.summary_line(), "writer_error": self.writer_error}
        return [Finding(None, INTEGRITY.name, data)]  # keys checked by the store

    def lines(self) -> list[Line]:
        """A failed check warns; a clean one is a note."""
        if self.integrity is None:
            return []
        line = f"point {self.point.key}: {self.integrity.summary_line()}"
        clean = self.integrity.clean
        return [Line(not clean, line + (" (clean)" if clean else ""))]
