"""`verify` on a many-host point: the integrity writer on every host of the point, over SSH.

For each host: a probe (arraybench usable there, the verify target's kind and size), a
region of its own at the end of the host's first target (the i-th host of the point the i-th
region from the end, and every host's load stops before all of them: hosts may share one
LUN, see ``HostsVerify.prepare``), a
writer whose journal lives on the host (``hosts[].ssh.journals``/RUN/HOST/POINT.journal), and
after the point (and after its events were reverted) the read-back on the host. Each host gets
its own "integrity" finding, so the report, `show` and the console name the host of every lost,
corrupt or unreadable block; a failed check on any host fails the run's verdict (exit 3).

The journal path depends only on the run, the host and the point: a point interrupted by a
crash (of the host or of the controller) and run again with ``--resume`` continues the same
journal, so the acknowledged writes from before the crash are read back too.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from arraybench.errors import PlanError
from arraybench.finding_kinds import INTEGRITY
from arraybench.hosts.server import HostError, HostSpec
from arraybench.integrity.remote import (
    RemoteCheck,
    RemoteWriter,
    check_over_ssh,
    check_timeout,
    probe_over_ssh,
)
from arraybench.integrity.writer import WriterConfig, WriterStats
from arraybench.plan.expand import Point, host_point
from arraybench.plan.model import Host, Plan
from arraybench.records import Finding
from arraybench.run.load import LoadResult
from arraybench.run.sidecar import Line, Sidecar
from arraybench.units import format_size

T = TypeVar("T")
WRITER_MARGIN_S = 120.0  # a writer outlives its point by at most this (a hung connection)


def check_verify_hosts(plan: Plan) -> None:
    """PlanError (exit 2) when `verify` would run on a host arraybench cannot reach over SSH."""
    if not plan.hosts:
        return
    for w, workload in enumerate(plan.workloads):
        if workload.verify is None:
            continue
        for h, host in enumerate(plan.hosts):
            if host.ssh is None:
                raise PlanError(
                    f"hosts[{h}] ({host.name}): workloads[{w}].verify runs the integrity writer "
                    "on every host over SSH, and this host has no ssh settings",
                    "add `ssh: {user: ..., key: ..., python: ...}` to the host",
                )


def check_hosts_can_verify(hosts: Sequence[Host], specs: dict[str, HostSpec]) -> None:
    """Before the first point: every host runs arraybench's integrity tools under its
    ``ssh.python`` (one SSH round trip each, at once); HostError naming each host that
    cannot, rather than a failure at the first verify point."""

    def probe(host: Host) -> None:
        assert host.ssh is not None  # check_verify_hosts
        probe_over_ssh(specs[host.name], host.ssh.python, host.ssh.journals)

    errors = [e for e in _each(list(hosts), probe) if e is not None]
    if errors:
        lines = "; ".join(e.message if isinstance(e, HostError) else str(e) for e in errors)
        raise HostError(lines, "install arraybench on the host, or name its Python in "
                        "hosts[].ssh.python")  # fmt: skip


@dataclass
class HostIntegrity:
    """One host's verify of one point."""

    host: str
    target: str
    journal: str
    python: str
    offset: int = 0
    direct: bool = False
    writer: RemoteWriter | None = None
    stats: WriterStats | None = None
    report: RemoteCheck | None = None
    writer_error: str | None = None
    check_error: str | None = None

    @property
    def failed(self) -> bool:
        return self.report is None or not self.report.clean

    def summary(self) -> str:
        if self.report is None:
            return f"host {self.host}: integrity NOT checked: {self.check_error}"
        return f"host {self.host}: {self.report.summary}"

    def finding(self) -> Finding:
        if self.report is not None:
            data = dict(self.report.data)  # the host's counts: complete, even when cut
        else:  # no read-back: the counts stay zero, `error` says why (a NO DATA verdict)
            data = {**NO_READBACK, "path": self.target, "journal": self.journal}
        data |= {"host": self.host, "summary": self.summary(), "journal": self.journal,
                 "writer_error": self.writer_error, "error": self.check_error,
                 "writer": self.stats.to_dict() if self.stats else None}  # fmt: skip
        return Finding(None, INTEGRITY.name, data)  # keys checked by the store


# an integrity finding's counts when the read-back could not run
NO_READBACK: dict[str, Any] = {
    "block_size": 0, "region_offset": 0, "region_length": 0, "stream_id": 0, "direct": False,
    "checked": 0, "ok": 0, "problems": [], "journal_records": 0, "torn_records": 0,
    "damaged_records": 0, "failed_writes": 0, "newer": 0, "bytes_read": 0, "elapsed_s": 0.0,
    "torn_detail": "", "problems_omitted": 0, "clean": False, "lost": 0, "corrupt": 0,
    "unreadable": 0,
}  # fmt: skip


def _each(items: Sequence[T], work: Callable[[T], None]) -> list[BaseException | None]:
    """``work`` on every item at once; the exception of each (None when it went well)."""
    if not items:
        return []

    def guarded(item: T) -> BaseException | None:
        try:
            work(item)
        except Exception as exc:  # every host gets its turn; the caller decides
            return exc
        return None

    with ThreadPoolExecutor(max_workers=min(16, len(items))) as pool:
        return list(pool.map(guarded, items))


class HostsVerify(Sidecar):
    """The writers and read-backs of one many-host point (see the module's docstring)."""

    def __init__(
        self,
        point: Point,
        hosts: dict[str, Host],
        specs: dict[str, HostSpec],
        *,
        run_id: str,
        folder: Path,
        allow_destroy: Sequence[str] = (),
        limit_s: float,
    ) -> None:
        assert point.workload.verify is not None
        self.point = point
        self.verify = point.workload.verify
        self.specs = specs
        self.allow_destroy = tuple(allow_destroy)
        self.limit_s = limit_s + WRITER_MARGIN_S
        self.hosts: list[HostIntegrity] = []
        self._plan_sizes: dict[str, dict[str, int]] = {}
        for name in point.level.hosts:
            host = hosts[name]
            assert host.ssh is not None  # check_verify_hosts
            target = host_point(point, host).targets[0]
            journal = posixpath.join(host.ssh.journals, run_id, name, f"{folder.name}.journal")
            self.hosts.append(HostIntegrity(name, target.path, journal, host.ssh.python))
            if target.size:
                self._plan_sizes[name] = {target.path: target.size}

    # -- before the point ------------------------------------------------------------------
    def prepare(self, sizes: dict[str, int]) -> dict[str, int]:
        """Probe every host; the target sizes fio may use. HostError when a host cannot run
        the writer or its target has no size.

        Each host's region is its own: the i-th host of the point writes the i-th region from
        the end of its target, and every host's load stops before all of them. Two hosts may
        name one shared LUN (by the same path or by two different ones: nothing on the
        controller can tell), and regions that overlapped would show each writer's blocks to
        the other's read-back as corruption nobody caused."""
        region = self.verify.region
        reserved = region * len(self.hosts)
        ends: dict[str, int] = {}

        def probe(h: HostIntegrity) -> None:
            # the plan's size where it gives one (an SSH round trip saved: ~1 s); the writer
            # itself then says whether the host can run it
            size = self._plan_sizes.get(h.host, {}).get(h.target)
            found = None if size else probe_over_ssh(self.specs[h.host], h.python, h.target)
            size = size or (found.size if found else None)
            if (found and found.kind == "other") or not size:
                other = found is not None and found.kind == "other"
                why = "is not a file or a block device" if other else "has no size"
                raise HostError(f"host {h.host}: verify target {h.target} {why}",
                                "give the target a size in the plan")  # fmt: skip
            if size <= reserved:
                raise HostError(f"host {h.host}: {len(self.hosts)} verify regions of "
                                f"{format_size(region)} (one per host of the point) leave "
                                f"nothing of {h.target} ({format_size(size)}) for the load",
                                "use a smaller verify.region")  # fmt: skip
            ends[h.host] = size

        self._raise_first(_each(self.hosts, probe))
        limits: dict[str, int] = {}
        for index, h in enumerate(self.hosts):
            h.offset = ends[h.host] - region * (index + 1)
            load_end = ends[h.host] - reserved
            limits[h.target] = min(limits.get(h.target, load_end), load_end)
        return {**sizes, **limits}

    def start(self) -> None:
        """A writer on every host, each ready before this returns; HostError (and none left
        running) when any cannot start."""

        def start(h: HostIntegrity) -> None:
            cfg = WriterConfig(path=h.target, length=self.verify.region, offset=h.offset,
                               block_size=self.verify.block_size, direct=self.point.direct,
                               iops=self.verify.iops, allow_destroy=self.allow_destroy)  # fmt: skip
            h.writer = RemoteWriter(self.specs[h.host], h.python, cfg, h.journal, self.limit_s)
            h.writer.start()
            h.direct = h.writer.direct

        errors = _each(self.hosts, start)
        if any(errors):
            self.stop()
            self._raise_first(errors)

    # -- after the point -------------------------------------------------------------------
    def stop(self) -> None:
        """Stop every host's writer (the load has ended); a failure is the host's
        writer_error, never an exception: the read-back still reads what was journaled."""

        def stop(h: HostIntegrity) -> None:
            writer, h.writer = h.writer, None
            if writer is None or writer.proc is None:
                return
            try:
                h.stats = writer.stop()
            except HostError as exc:
                h.writer_error = exc.one_line()

        _each(self.hosts, stop)

    def check(self) -> None:
        """The read-back on every host (after the events were reverted)."""
        timeout = check_timeout(self.verify.region)

        def check(h: HostIntegrity) -> None:
            try:
                h.report = check_over_ssh(self.specs[h.host], h.python, h.target, h.journal,
                                          direct=h.direct, timeout_s=timeout)  # fmt: skip
            except HostError as exc:
                h.check_error = exc.one_line()

        _each(self.hosts, check)

    def findings(self, result: LoadResult) -> list[Finding]:
        return [h.finding() for h in self.hosts]

    def lines(self) -> list[Line]:
        """One console line per host, the host named in each: a failed check warns, a clean
        one is a note."""
        found = []
        for h in self.hosts:
            line = f"point {self.point.key}: {h.summary()}"
            if h.writer_error:
                line += f" (writer: {h.writer_error})"
            found.append(Line(h.failed, line if h.failed else line + " (clean)"))
        return found

    @staticmethod
    def _raise_first(errors: list[BaseException | None]) -> None:
        for exc in errors:
            if exc is not None:
                raise exc
