"""An mdtest SUMMARY as fio's records (`EngineDocument` of `Measurement`s): the point a run
stores and the points `import` makes, from the same figures (no plan model imported: the
importer's registry loads this at every start)."""

from __future__ import annotations

from arraybench.engines.mdtest.summary import MdtestSummary
from arraybench.engines.measurement import DirStats, EngineDocument, Measurement

_EMPTY = DirStats(0, 0, 0, 0.0, 0.0, None, None, None, "lat")


def op_measurement(summary: MdtestSummary, op: str, elapsed_s: float | None = None) -> Measurement:
    """One operation of a SUMMARY as a job: its mean rate as IOPS, its items as I/Os (in
    `read`: an operation moves no data), the iterations' min/max/std among the options."""
    rate = summary.rate(op)
    assert rate is not None
    runtime_ms = round(summary.items * 1000 / rate.mean) if rate.mean > 0 else 0
    stats = DirStats(ios=summary.items, io_bytes=0, runtime_ms=runtime_ms, iops=rate.mean,
                     bw_bytes=0.0, lat_mean_ns=None, lat_min_ns=None, lat_max_ns=None,
                     lat_kind="lat")  # fmt: skip
    # an operation moves no data: random reads of a nominal 4 KiB is the mode fio's records
    # carry that is counted in operations per second (IOPS), as mdtest counts
    options = {
        "ioengine": "mdtest", "rw": "randread", "bs": "4k", "workload": f"mdtest-{op}",
        "numjobs": str(summary.tasks // summary.nodes), "hosts": str(summary.nodes),
        "iterations": str(summary.iterations), "ops_min": f"{rate.min}",
        "ops_max": f"{rate.max}", "ops_std": f"{rate.std}",
    }  # fmt: skip
    return Measurement(name=op, groupid=0, error=0, read=stats, write=_EMPTY, trim=_EMPTY,
                       options=options, elapsed_s=elapsed_s)  # fmt: skip


def summary_document(
    summary: MdtestSummary, elapsed_s: float | None = None, ops: tuple[str, ...] = ()
) -> EngineDocument:
    """A SUMMARY as one document: a job per operation (`ops`, else every non-zero row)."""
    names = ops or tuple(r.op for r in summary.rates if r.mean > 0)
    jobs = [op_measurement(summary, op, elapsed_s) for op in names if summary.rate(op)]
    return EngineDocument(engine_version=summary.version, timestamp=None, timestamp_ms=None,
                       global_options={"ioengine": "mdtest"}, jobs=jobs, all_clients=None,
                       disk_util=[], preamble="",
                       notes=(f"{summary.version}: SUMMARY rate of {summary.tasks} task(s) on "
                              f"{summary.nodes} node(s), mean of {summary.iterations} "
                              "iteration(s)",))  # fmt: skip
