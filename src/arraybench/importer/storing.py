"""Storing an import: every point built and range-checked first (`ready`, limits.py), then
the run, its points and its folder written as one (`store_run`: one transaction, the folder
removed on failure), so a refused or failed import leaves the store as it was."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from arraybench import __version__
from arraybench.analysis.aggregate import PointMetrics, job_bins, point_metrics
from arraybench.engines.measurement import EngineDocument, Measurement
from arraybench.errors import utf8_safe, utf8_safe_all
from arraybench.finding_kinds import IMPLAUSIBLE, IMPORT
from arraybench.importer.candidate import Candidate
from arraybench.importer.group_rate import as_one_group
from arraybench.importer.limits import (
    check_document,
    check_jobs,
    check_level,
    check_record,
    check_samples,
    number_text,
    refuse,
)
from arraybench.importer.registry import tool_of
from arraybench.plan.model import LatencyBound, Workload
from arraybench.plan.types import MAX_BLOCK
from arraybench.run.record import PointPlace, names_of, new_point, now_iso
from arraybench.store.db import Finding, NewPoint, RunRecord, Store
from arraybench.store.run_ids import new_run_id
from arraybench.units import fio_size


def _times(doc: EngineDocument, runtime_s: float) -> tuple[str, str]:
    if doc.timestamp is None:
        return "", ""
    end = datetime.fromtimestamp(doc.timestamp, UTC)
    start = end - timedelta(seconds=runtime_s)
    return start.isoformat(timespec="seconds"), end.isoformat(timespec="seconds")


def _runtime_s(jobs: Sequence[Measurement]) -> float:
    elapsed = [j.elapsed_s for j in jobs if j.elapsed_s]
    if elapsed:
        return max(elapsed)
    return max((d.runtime_ms for j in jobs for d in (j.read, j.write, j.trim)), default=0) / 1000


def _targets(c: Candidate) -> list[str]:
    found = [(c.doc.global_options | j.options).get("filename", "") for j in c.jobs]
    return list(dict.fromkeys(f for f in found if f))


def _latency_kind(c: Candidate) -> dict[str, str]:
    """{"latency": "clat"} when fio gave the distribution of completion latency only (no
    lat_percentiles=1): the report's histograms name their axis by it."""
    kinds = {d.lat_kind for j in c.jobs for d in (j.read, j.write) if d.ios}
    return {"latency": "clat"} if kinds == {"clat"} else {}


def _record(run_id: str, seq: int, c: Candidate) -> NewPoint:
    workload = Workload(name=c.workload, pattern=c.pattern, bs=c.bs, read=c.read_pct)
    runtime = _runtime_s(c.jobs)
    started, finished = _times(c.doc, runtime)
    place = PointPlace(run_id, seq, c.identity, c.ioengine, c.workers, c.iodepth, _targets(c),
                       str(c.source.path.parent.resolve()), c.devices)  # fmt: skip
    record = new_point(place, names_of(workload, c.ioengine, region="backend"), c.jobs, started,
                       finished, runtime, c.doc.engine_version or None)  # fmt: skip
    named = c.labels | _latency_kind(c)
    labels = json.dumps(named, sort_keys=True) if named else None
    return dataclasses.replace(record, hosts=c.hosts, scenario=c.scenario, labels_json=labels)


def _storable(record: NewPoint) -> NewPoint:
    """Text fields as SQLite takes them: a file or folder name's bytes that are no UTF-8
    become `\\xNN` (errors.utf8_safe), never an encoding error half-way through the store."""
    texts: dict[str, Any] = {f.name: utf8_safe(v) for f in dataclasses.fields(record)
                             if isinstance(v := getattr(record, f.name), str)}  # fmt: skip
    return dataclasses.replace(record, **texts)


def _finding(c: Candidate) -> Finding:
    return IMPORT.new({
        "source": utf8_safe(c.source.rel), "format": c.source.fmt, "run": c.doc_index,
        "group": c.groupid, "tool": _tools([c])[0],
        "jobs": utf8_safe_all(sorted({j.name for j in c.jobs})[:10]),
        "hostnames": utf8_safe_all(sorted({j.hostname for j in c.jobs if j.hostname})),
        "logs": utf8_safe_all(c.logs), "notes": utf8_safe_all(c.notes),
    })  # fmt: skip


def _tools(cands: list[Candidate]) -> list[str]:
    """The tools that wrote the imported results (fio unless another tool's reader read it)."""
    return sorted({tool_of(c.source.fmt) for c in cands})


def _run_record(
    run_id: str, run_name: str, folder: Path, plan_text: str, cands: list[Candidate]
) -> RunRecord:
    versions = sorted({c.doc.engine_version for c in cands if c.doc.engine_version})
    hostnames = sorted({j.hostname for c in cands for j in c.jobs if j.hostname})
    targets = list(dict.fromkeys(t for c in cands for t in _targets(c)))
    starts = sorted(s for c in cands if (s := _times(c.doc, _runtime_s(c.jobs))[0]))
    bound = LatencyBound()
    return RunRecord(
        id=run_id, plan_name=run_name, scenario="imported",
        labels={"source": "imported results", "tools": ", ".join(_tools(cands))},
        plan_yaml=plan_text, folder=str(folder),
        scale=1.0, status="running", started=starts[0] if starts else now_iso(), finished=None,
        total_points=len(cands), engine_version=", ".join(versions) or None,
        arraybench_version=__version__,
        host=", ".join(hostnames) or "unknown (imported)", kernel="unknown",
        targets=targets, latency_bound_us=bound.value * 1e6, latency_stat=bound.stat,
    )  # fmt: skip


@dataclass(frozen=True)
class Ready:
    """One point built and checked, to be stored (its run id set when the run exists)."""

    candidate: Candidate
    record: NewPoint
    metrics: PointMetrics
    findings: list[Finding]


def ready(seq: int, c: Candidate) -> Ready:
    """Build and range-check one point (limits.py) before anything is written; ImportRefused
    names its file, run and group."""
    check_document(c.where, c.doc)
    check_jobs(c.where, c.jobs)
    for level in ("workers", "iodepth", "devices", "hosts"):
        check_level(c.where, level, getattr(c, level))
    if not 1 <= c.bs <= MAX_BLOCK:  # the plan's limit: Linux moves at most 2 GiB in one I/O
        raise refuse(c.where, f"block size {number_text(c.bs)}",
                     f"is out of range (1 to {fio_size(MAX_BLOCK)} per I/O)")  # fmt: skip
    check_samples(c.where, c.samples)
    try:
        record = _storable(_record("", seq, c))
        # fio's group total (its "Run status group" line), not a sum of the jobs' own rates
        metrics = point_metrics(as_one_group(c.jobs, client=_client(c)))
        findings = [_finding(c)]
        if c.implausible:
            findings.append(IMPLAUSIBLE.new({"reasons": utf8_safe_all(c.implausible)}))
    except (ValueError, ArithmeticError) as exc:  # pydantic's ValidationError is a ValueError
        raise refuse(c.where, "this point", f"cannot be stored: {_why(exc)}") from None
    check_record(f"{c.where}: point {c.key}", record, metrics.as_dict())
    return Ready(c, record, metrics, findings)


def _client(c: Candidate) -> bool:
    """Whether the point's jobs ran on fio servers (`fio --client`, one or many)."""
    return (c.hosts or 1) > 1 or c.doc.all_clients is not None


def _why(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"{where}: {first['msg']}" if where else str(first["msg"])
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def store_run(store: Store, run_name: str, points: list[Ready], imported: dict[str, Any]) -> str:
    """The run (its description `imported` kept as its plan text), its points and its folder
    as one: the points in one transaction with the run's row; on any failure (or Ctrl-C) the
    transaction is rolled back and the run's folder removed, so the store and the results
    folder are as they were."""
    results_dir = store.path.parent
    runs = results_dir / "runs"
    had_runs = runs.exists()
    run_id = new_run_id(run_name, results_dir)
    folder = runs / run_id
    cands = [r.candidate for r in points]
    try:
        description = {"name": run_name, "imported": utf8_safe_all(imported)}
        plan_text = yaml.safe_dump(description, sort_keys=False, allow_unicode=True)
        (folder / "import.yaml").write_text(plan_text)
        run = _run_record(run_id, run_name, folder, plan_text, cands)
        with store.atomic():
            store.create_run(dataclasses.replace(run, status="complete", finished=now_iso()))
            for r in points:
                point_id = store.add_point(
                    dataclasses.replace(r.record, run_id=run_id),
                    r.metrics,
                    r.candidate.samples,
                    findings=r.findings,
                )
                # json+ bins: the report's latency histograms and percentile charts
                store.add_report_files(point_id, job_bins(r.candidate.jobs), {})
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        if not had_runs:
            with contextlib.suppress(OSError):
                runs.rmdir()
        raise
    return run_id
