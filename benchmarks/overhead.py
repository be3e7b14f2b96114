"""Overhead of arraybench around fio: the same point run by arraybench and by fio alone.

Runs A (fio alone, on arraybench's own job file) and B (arraybench, a one-point campaign)
alternately, A B, B A, ... on the same target, at 1, 2 and all cores (one fio worker per
core, iodepth 8), and prints per engine and core count the IOPS of each, the IOPS ratio B/A
of every round as min / median / max, and the CPU-time ratio. Target: IOPS ratio >= 0.98.
With ioengine=null the harness cost shows most (millions of IOPS).

--ablate finds what costs: fio alone on the job file with one of arraybench's choices taken
out or added at a time (its command line, the latency logs, every log, the latency
percentiles, `disable_slat`, `disable_clat`), and the job file run through arraybench's
runner with its host monitor (the /proc sampler) but no campaign; each against the job file
run by fio alone, interleaved round by round.

    .venv/bin/python benchmarks/overhead.py [--rounds 5] [--seconds 3] [--cores 1,2,all]
        [--engines null,libaio] [--ablate] [--dir /tmp/abbench] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from arraybench.engines.fio import runner
from arraybench.monitor.point import PointMonitor
from arraybench.plan.load import parse_plan_text
from arraybench.run.campaign import Campaign
from arraybench.run.context import Observer
from arraybench.store.db import Store

PLAN = """\
name: overhead
targets: [{{path: {target}, size: {size}}}]
ioengine: "{engine}"
direct: {direct}
timing: {{ramp: {ramp}s, duration: {seconds}s}}
load: {{workers: [{workers}], iodepth: [8]}}
workloads: [{{name: rr, pattern: random, bs: 4k, read: 100}}]
"""
DIRECT = {"null": False, "libaio": True}
LOGS = ("log_avg_msec=", "log_unix_epoch=", "per_job_logs=", "write_iops_log=",
        "write_bw_log=", "write_lat_log=")  # fmt: skip
PERCENTILES = ("lat_percentiles=", "percentile_list=")


class Quiet(Observer):
    """Every observer callback does nothing (the protocol's defaults)."""


@dataclass
class Setup:
    base: Path
    seconds: float
    ramp: int
    size: str

    def plan(self, engine: str, workers: int) -> str:
        return PLAN.format(target=self.base / "target.dat", engine=engine, size=self.size,
                           direct=str(DIRECT[engine]).lower(), seconds=f"{self.seconds:g}",
                           ramp=self.ramp, workers=workers)  # fmt: skip


@dataclass
class Series:
    """One way of running the point: IOPS and CPU seconds of each round."""

    label: str
    iops: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def fio_iops(json_path: Path) -> float:
    text = json_path.read_text()
    document = json.loads(text[text.index("{") :])  # fio may print notes before the JSON
    return sum(j["read"]["iops"] + j["write"]["iops"] for j in document["jobs"])


def run_arraybench(plan_text: str, results: Path) -> tuple[float, float, Path]:
    """B: a one-point campaign, as `arraybench run` runs it (minus start-up and report)."""
    store = Store(results)
    cpu0 = children_cpu() + time.process_time()
    result = Campaign(store, results, Quiet()).start(parse_plan_text(plan_text, "bench"), 1.0)
    cpu = children_cpu() + time.process_time() - cpu0
    point = store.points(result.run_id)[0]
    store.close()
    return float(point.metric("total", "iops") or 0), cpu, Path(point.folder) / "point.fio"


def run_fio(jobfile: Path, workdir: Path, args: tuple[str, ...] = ()) -> tuple[float, float]:
    """A: fio alone on a copy of the job file, JSON output (or `args` instead)."""
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.copy(jobfile, workdir / "point.fio")
    cpu0 = children_cpu()
    out = args or ("--output-format=json", "--output=fio.json")
    subprocess.run([runner.fio_binary(), "point.fio", *out], cwd=workdir, check=True)
    return fio_iops(workdir / "fio.json"), children_cpu() - cpu0


def run_harness(jobfile: Path, workdir: Path) -> tuple[float, float]:
    """arraybench's runner and host monitor (the /proc sampler) around fio, no campaign."""
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.copy(jobfile, workdir / "point.fio")
    cpu0 = children_cpu() + time.process_time()
    with PointMonitor([str(workdir)]):
        outcome = runner.run_jobfile(workdir / "point.fio", label="overhead", timeout_s=600)
    return fio_iops(outcome.json_path), children_cpu() + time.process_time() - cpu0


def edited(jobfile: Path, out: Path, drop: tuple[str, ...], add: tuple[str, ...] = ()) -> Path:
    """The job file without the options that start with one of `drop`, with `add` at its end
    (in the job's own section)."""
    kept = [
        line for line in jobfile.read_text().splitlines() if not drop or not line.startswith(drop)
    ]
    lines = kept + list(add)
    out.mkdir(parents=True, exist_ok=True)
    (out / "point.fio").write_text("\n".join(lines) + "\n")
    return out / "point.fio"


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def ratios(b: Series, a: Series) -> list[float]:
    return [y / x for x, y in zip(a.iops, b.iops, strict=True) if x > 0]


def print_against(reference: Series, others: list[Series], title: str) -> None:
    print(f"{title}: fio alone on the job file {statistics.median(reference.iops):,.0f} IOPS "
          f"(rounds {min(reference.iops):,.0f} - {max(reference.iops):,.0f})")  # fmt: skip
    for s in others:
        cpu = statistics.median(s.cpu) / statistics.median(reference.cpu)
        print(f"  {s.label:34s} {statistics.median(s.iops):>13,.0f} IOPS  ratio min/median/max "
              f"{spread(ratios(s, reference))}  CPU ratio {cpu:.3f}")  # fmt: skip


def rounds_of(runs: list[Callable[[int], tuple[float, float]]], series: list[Series],
              rounds: int) -> None:  # fmt: skip
    """Every way once per round, the order turned round every other round (drift is shared)."""
    for n in range(rounds):
        order = list(range(len(runs)))
        for k in order if n % 2 == 0 else order[::-1]:
            iops, cpu = runs[k](n)
            series[k].iops.append(iops)
            series[k].cpu.append(cpu)


def measure(setup: Setup, engine: str, workers: int, rounds: int) -> Path:
    """A against B; returns the job file arraybench wrote (for `ablate`)."""
    plan = setup.plan(engine, workers)
    tag = f"{engine}-w{workers}"
    _, _, jobfile = run_arraybench(plan, setup.base / f"warmup-{tag}")  # lays out the target
    a, b = Series("fio alone"), Series("arraybench")

    def run_b(n: int) -> tuple[float, float]:
        iops, cpu, _ = run_arraybench(plan, setup.base / f"ab-{tag}-{n}")
        return iops, cpu

    rounds_of([lambda n: run_fio(jobfile, setup.base / f"fio-{tag}-{n}"), run_b], [a, b], rounds)
    r = ratios(b, a)
    print(f"{engine:7s} {workers:3d} worker(s)  fio alone {statistics.median(a.iops):>13,.0f}  "
          f"arraybench {statistics.median(b.iops):>13,.0f} IOPS  ratio min/median/max "
          f"{spread(r)}  CPU ratio {statistics.median(b.cpu) / statistics.median(a.cpu):.3f}"
          f"  ({rounds} rounds of {setup.seconds:g} s)", flush=True)  # fmt: skip
    return jobfile


def ablate(setup: Setup, jobfile: Path, title: str, rounds: int, smoke: bool = False) -> None:
    """fio alone on the job file against each of arraybench's choices, one at a time."""
    d = setup.base / f"ablate-{title.replace(' ', '-')}"
    variants: dict[str, Callable[[int], tuple[float, float]]] = {
        "job file (reference)": lambda n: run_fio(jobfile, d / f"ref-{n}"),
        "+ runner's command line (json+)": lambda n: run_fio(
            jobfile, d / f"cmd-{n}", ("--output-format=json+", "--output=fio.json", "--eta=never")
        ),
        "- latency logs (write_lat_log)": lambda n: run_fio(
            edited(jobfile, d / "nolat", ("write_lat_log=",)), d / f"nolat-{n}"),
        "- every log": lambda n: run_fio(edited(jobfile, d / "nolog", LOGS), d / f"nolog-{n}"),
        "- lat_percentiles": lambda n: run_fio(
            edited(jobfile, d / "nopct", PERCENTILES), d / f"nopct-{n}"),
        "- disable_slat (the slat log back)": lambda n: run_fio(
            edited(jobfile, d / "slat", ("disable_slat=",)), d / f"slat-{n}"),
        "+ disable_clat=1": lambda n: run_fio(
            edited(jobfile, d / "noclat", (), ("disable_clat=1",)), d / f"noclat-{n}"),
        "runner + /proc sampler": lambda n: run_harness(jobfile, d / f"harness-{n}"),
    }  # fmt: skip
    if smoke:  # one of each kind: the reference, an option taken out, one added, the runner
        keep = (0, 2, 5, 7)
        variants = {k: v for n, (k, v) in enumerate(variants.items()) if n in keep}
    series = [Series(label) for label in variants]
    rounds_of(list(variants.values()), series, rounds)
    print_against(series[0], series[1:], f"{title}, {rounds} rounds")


def core_counts(text: str) -> list[int]:
    cpus = os.cpu_count() or 1
    counts = [cpus if part == "all" else int(part) for part in text.split(",")]
    return sorted({c for c in counts if 1 <= c <= cpus})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # fio alone varies run to run by up to 30 % with the null engine on a busy machine: the
    # spread of the per-round ratios says how far one figure can be trusted
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--ramp", type=int, default=1)
    parser.add_argument("--cores", default="1,2,all", help="worker counts; all = every CPU")
    parser.add_argument("--engines", default="null,libaio")
    parser.add_argument("--size", default="256m", help="the target file's size")
    parser.add_argument("--ablate", action="store_true", help="what costs, option by option")
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--smoke", action="store_true", help="a few seconds: does it run")
    args = parser.parse_args()
    if args.smoke:  # one short round of each way, so that the suite sees the script work
        args.rounds, args.seconds, args.ramp, args.size = 1, 0.3, 0, "16m"
        args.cores, args.engines = "1", "null"
    base = args.dir or Path(tempfile.mkdtemp(prefix="abbench-"))
    setup = Setup(base, args.seconds, args.ramp, args.size)
    print(f"{os.cpu_count()} CPUs, {runner.fio_version(runner.fio_binary())}", flush=True)
    try:
        for engine in args.engines.split(","):
            for workers in core_counts(args.cores):
                jobfile = measure(setup, engine, workers, args.rounds)
                if args.ablate or args.smoke:
                    ablate(setup, jobfile, f"{engine} {workers} worker(s)", args.rounds, args.smoke)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
