"""One point to be, as the import reads it: the source file it came from and the group of
jobs of one fio invocation that makes it (`Candidate`), with what was inferred of it; what
was not imported and why (`Skipped`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from arraybench.engines.measurement import EngineDocument, Measurement
from arraybench.point_identity import PointIdentity, level_name
from arraybench.records import Sample

SeriesId = tuple[str, int, str]  # (file, run in it, part of the run)


@dataclass(frozen=True)
class Skipped:
    """A file (or part of one) not imported, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class Source:
    path: Path
    rel: str  # relative to the import root, for messages and names
    fmt: str  # "json", "text", "terse", "logs", or the other tool: diskspd, vdbench, elbencho


@dataclass(eq=False)
class Candidate:
    """One point to be: a group of jobs of one fio invocation, and what it is."""

    source: Source
    doc: EngineDocument
    doc_index: int  # 1-based among the file's documents
    groupid: int
    jobs: list[Measurement]
    options: dict[str, str]  # global options + the first job's
    rw: str
    pattern: str
    read_pct: int
    bs: int
    ioengine: str
    workers: int
    iodepth: int
    hosts: int | None
    devices: int | None = None
    scenario: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    workload: str = ""
    named: bool = False  # the workload name came from the file name pattern
    part: str = ""  # tells apart groups of one run that share a workload and load level
    notes: list[str] = field(default_factory=list)
    implausible: list[str] = field(default_factory=list)  # why its figures cannot all be true
    samples: list[Sample] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)

    @property
    def level(self) -> str:
        """As a campaign names its load levels: w<workers>-qd<iodepth>[-d<devices>][-h<hosts>]."""
        return level_name(self.workers, self.iodepth, self.devices, self.hosts)

    @property
    def identity(self) -> PointIdentity:
        """As a campaign names its points (an import's scenario is a label, not in the key)."""
        return PointIdentity(self.workload, self.level)

    @property
    def key(self) -> str:
        return self.identity.key

    @property
    def series(self) -> SeriesId:
        return (self.source.rel, self.doc_index, self.part)

    @property
    def where(self) -> str:
        return f"{self.source.rel} (run {self.doc_index}, group {self.groupid})"
