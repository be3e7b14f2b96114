"""The two tests that are not a workload x level grid: dbi's mixed-workload interference
test and CSCS's metadata test. Each runs as stored points with findings for the report."""

from __future__ import annotations

import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

from arraybench.analysis.interference import (
    chart_data,
    read_base_histograms,
    read_interference_logs,
    run_start_second,
    step_table,
    verdict,
)
from arraybench.analysis.metadata import metadata_results
from arraybench.errors import PlanError
from arraybench.fio import runner
from arraybench.fio.interference import InterferenceSpec, render_interference_jobfile
from arraybench.fio.interference import total_seconds as interference_seconds
from arraybench.fio.metadata import MetadataSpec, leftovers, render_metadata_jobfile
from arraybench.fio.parse import FioDocument, parse_fio_json_file
from arraybench.plan.model import InterferenceTest, MetadataTest, Plan

INTERFERENCE_KEY = "interference/base+steps"


def interference_spec(plan: Plan, test: InterferenceTest) -> InterferenceSpec:
    try:
        # fio 3.33 aborts (double free) when rate-limited jobs share a list of several
        # files, so the test runs on the first target; the report says which
        return InterferenceSpec(
            targets=[plan.targets[0].path],
            base_bs=test.base_bs,
            base_read_pct=test.base_read,
            base_rate_iops=test.base_rate_iops,
            base_jobs=test.base_jobs,
            base_iodepth=test.base_iodepth,
            bg_bs=test.bg_bs,
            bg_read_pct=test.bg_read,
            bg_rate_iops_per_step=test.bg_rate_iops,
            steps=test.steps,
            bg_iodepth=test.bg_iodepth,
            interval_s=test.interval,
            ioengine=plan.ioengine,
            direct=plan.direct,
        )
    except ValueError as exc:
        raise PlanError(f"interference: {exc}", "fix the interference section") from None


def metadata_directory(plan: Plan, test: MetadataTest, results_dir: Path) -> Path:
    """Absolute: fio runs in the point's folder, where a relative path (the default
    ./arraybench-results) would name another directory."""
    folder = Path(test.directory) if test.directory else results_dir / "scratch" / "metadata"
    return folder.resolve()


def run_fio(folder: Path, text: str, label: str, expected_s: float, fio: str) -> FioDocument:
    """Write the job file into a fresh point folder, run fio, return its last JSON document."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    jobfile = folder / "point.fio"
    jobfile.write_text(text)
    outcome = runner.run_jobfile(
        jobfile, label=label, timeout_s=runner.watchdog_seconds(expected_s), binary=fio
    )
    document = parse_fio_json_file(outcome.json_path)[-1]
    runner.check_job_errors(label, document.jobs, folder)
    return document


def interference_findings(
    spec: InterferenceSpec, test: InterferenceTest, folder: Path
) -> dict[str, Any]:
    base_iops, base_lat, bg_mbps = read_interference_logs(folder)
    t0 = run_start_second(base_iops)
    rows = step_table(
        spec, base_iops, base_lat, bg_mbps, t0, base_hist=read_base_histograms(folder)
    )
    chart = chart_data(spec, base_iops, base_lat, bg_mbps, t0)
    return {
        "target": spec.targets[0],
        "rows": [asdict(r) for r in rows],
        "tolerated_steps": verdict(rows, test.max_latency_increase),
        "max_latency_increase": test.max_latency_increase,
        "chart": asdict(chart),
        "bg_bs": spec.bg_bs,
        "bg_rate_iops": spec.bg_rate_iops_per_step,
    }


def run_interference(
    plan: Plan, test: InterferenceTest, folder: Path, fio: str, size: int | None
) -> tuple[FioDocument, dict[str, Any]]:
    spec = interference_spec(plan, test)
    seconds = interference_seconds(spec)
    document = run_fio(
        folder, render_interference_jobfile(spec, size), INTERFERENCE_KEY, seconds, fio
    )
    return document, interference_findings(spec, test, folder)


def run_metadata(
    test: MetadataTest, threads: int, directory: Path, folder: Path, fio: str
) -> tuple[FioDocument, dict[str, Any]]:
    directory.mkdir(parents=True, exist_ok=True)
    spec = MetadataSpec(str(directory), threads, test.files_per_thread, tuple(test.ops))
    stale = leftovers(spec)
    if stale:  # a create phase over existing files would only time opens
        for path in stale:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    label = f"metadata/t{threads}"
    expected = 10 + threads * test.files_per_thread / 500  # generous: slow metadata servers
    document = run_fio(folder, render_metadata_jobfile(spec), label, expected, fio)
    rows = metadata_results(document, spec)
    return document, {"threads": threads, "rows": [asdict(r) for r in rows]}
