"""Metadata test results: operations per second and latency per operation and thread count.

Input is the last JSON document of one run of arraybench.engines.fio.metadata's job file. Each phase
(stonewall group) is one section whose jobs carry the operation's name. Per phase:

* ``files``: operations done, fio's ``total_ios`` summed over the jobs (one fake I/O per file).
* ``ops_per_s``: ``files`` / the phase's wall time, the longest job's runtime (jobs of a phase
  start together; the phase ends with its last job). fio's runtime has 1 ms resolution.
* ``fio_iops``: fio's own iops summed over the jobs (each job's files / its own runtime); at
  least ``ops_per_s``, equal when every job ran equally long. Kept as a cross-check.
* latency: the engine's timing of the system call alone (fio's ``clat``), mean weighted by
  count, p99 from the merged json+ bins (arraybench.analysis.aggregate.combine).

A phase with a fio error or fewer operations than threads x files_per_thread is not a
measurement: FioRunError names it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from arraybench.analysis.aggregate import combine
from arraybench.engines.fio.metadata import MetadataSpec
from arraybench.engines.mdtest.argv import ALL_OPS
from arraybench.engines.mdtest.summary import MdtestSummary
from arraybench.engines.measurement import EngineDocument, Measurement
from arraybench.errors import FioRunError, OutputParseError
from arraybench.units import format_latency, format_ops

OP_LABELS = {  # mdtest's names for the phases
    "dir-create": "Directory creation",
    "dir-stat": "Directory stat",
    "dir-delete": "Directory removal",
    "create": "File creation",
    "stat": "File stat",
    "read": "File read",
    "delete": "File removal",
    "tree-create": "Tree creation",  # mdtest's own: the directory tree its tasks work in
    "tree-delete": "Tree removal",
}
TREE_OPS = ("tree-create", "tree-delete")
TABLE_METRICS = ("ops_per_s", "lat_mean_us", "lat_p99_us", "ops_min", "ops_max")


@dataclass(frozen=True)
class MetadataRow:
    op: str
    threads: int  # per host
    ops_per_s: float | None  # files / elapsed; None when the phase took under fio's 1 ms
    lat_mean_us: float | None
    lat_p99_us: float | None
    files: int  # operations done (files or directories), all threads (and hosts)
    elapsed_ms: int = 0  # the phase's wall time: its longest job's runtime
    fio_iops: float = 0.0  # fio's per-job iops summed (cross-check, >= ops_per_s)
    hosts: int = 1
    # mdtest's: ops_per_s is its SUMMARY's Mean over `iterations`, these its Min/Max/Std Dev
    tool: str = "fio"
    iterations: int = 1
    ops_min: float | None = None
    ops_max: float | None = None
    ops_std: float | None = None


def _phase_jobs(document: EngineDocument, op: str) -> list[Measurement]:
    return [job for job in document.jobs if job.name == op]


def _check_count(op: str, jobs: Sequence[Measurement], spec: MetadataSpec, hosts: int) -> None:
    if len(jobs) != spec.threads * hosts:
        raise OutputParseError(
            f"metadata test: fio output has {len(jobs)} '{op}' job(s), expected "
            f"{spec.threads * hosts} ({spec.threads} thread(s) x {hosts} host(s))",
            "parse the output of the job file rendered from this same spec",
        )


def _check_errors(op: str, jobs: Sequence[Measurement]) -> None:
    failed = [job for job in jobs if job.error]
    if failed:
        code = failed[0].error
        raise FioRunError(
            f"metadata test: the {op} phase failed in {len(failed)} of {len(jobs)} job(s): "
            f"fio error {code} ({os.strerror(code)})",
            "stat and delete need the files the create phase made; see fio's output",
        )


def _row(op: str, jobs: Sequence[Measurement], spec: MetadataSpec, hosts: int) -> MetadataRow:
    stats = [job.direction(name) for job in jobs for name in ("read", "write", "trim")]
    active = [s for s in stats if s.ios > 0]
    metrics = combine(active)
    expected = spec.total_per_op * hosts
    if metrics.ios != expected:
        raise FioRunError(
            f"metadata test: the {op} phase did {metrics.ios} operation(s), expected {expected}"
            f" ({spec.threads} thread(s) x {spec.files_per_thread} x {hosts} host(s))",
            "an incomplete phase is not a measurement; see fio's output",
        )
    elapsed_ms = max((s.runtime_ms for s in active), default=0)
    ops_per_s = metrics.ios * 1000.0 / elapsed_ms if elapsed_ms > 0 else None
    return MetadataRow(
        op=op,
        threads=spec.threads,
        ops_per_s=ops_per_s,
        lat_mean_us=metrics.lat_mean_us,
        lat_p99_us=metrics.lat_p99_us,
        files=metrics.ios,
        elapsed_ms=elapsed_ms,
        fio_iops=metrics.iops,
        hosts=hosts,
    )


def metadata_results(document: EngineDocument, spec: MetadataSpec) -> list[MetadataRow]:
    """One row per operation of ``spec``, in run order."""
    hosts = len({job.hostname for job in document.jobs}) or 1
    phases = {op: _phase_jobs(document, op) for op in spec.ordered_ops}
    for op, jobs in phases.items():  # a failed phase is the cause of anything else amiss
        _check_errors(op, jobs)
    for op, jobs in phases.items():
        _check_count(op, jobs, spec, hosts)
    return [_row(op, jobs, spec, hosts) for op, jobs in phases.items()]


def mdtest_rows(
    summary: MdtestSummary, ops: Sequence[str], tasks_per_node: int
) -> list[MetadataRow]:
    """One row per asked operation (run order) of mdtest's SUMMARY rate, its figures as mdtest
    printed them, then mdtest's tree creation and removal where it timed them; an asked
    operation missing from the table is refused (FioRunError)."""
    rows = []
    timed_trees = [op for op in TREE_OPS if (rate := summary.rate(op)) and rate.max > 0]
    for op in [*(op for op in ALL_OPS if op in ops), *timed_trees]:
        rate = summary.rate(op)
        if rate is None:
            raise FioRunError(f"metadata test: mdtest's SUMMARY has no {OP_LABELS[op]!r} row",
                              "see mdtest.txt beside the point")  # fmt: skip
        rows.append(MetadataRow(op=op, threads=tasks_per_node, ops_per_s=rate.mean,
                                lat_mean_us=None, lat_p99_us=None, files=summary.items,
                                hosts=summary.nodes, tool="mdtest",
                                iterations=summary.iterations, ops_min=rate.min,
                                ops_max=rate.max, ops_std=rate.std))  # fmt: skip
    return rows


def metadata_table(rows: Sequence[MetadataRow], metric: str = "ops_per_s") -> list[list[str]]:
    """Header row, then one row per operation (run order), one column per thread count.

    ``metric``: ops_per_s (default), lat_mean_us or lat_p99_us. Missing cells are "–".
    """
    if metric not in TABLE_METRICS:
        raise ValueError(f"metric must be one of {', '.join(TABLE_METRICS)}, got {metric!r}")
    threads = sorted({row.threads for row in rows})
    ops = [op for op in (*ALL_OPS, *TREE_OPS) if any(row.op == op for row in rows)]
    cells = {(row.op, row.threads): getattr(row, metric) for row in rows}
    fmt = format_latency if metric.startswith("lat_") else format_ops
    noun = "task" if any(row.tool == "mdtest" for row in rows) else "thread"
    header = ["Operation", *(f"{n} {noun}{'s' if n > 1 else ''}" for n in threads)]
    table = [header]
    for op in ops:
        table.append([OP_LABELS[op], *(fmt(cells.get((op, n))) for n in threads)])
    return table
