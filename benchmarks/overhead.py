"""Overhead of arraybench around fio: the same point run by arraybench and by fio alone.

Runs A (fio alone, on arraybench's own job file) and B (arraybench, a one-point campaign)
alternately, A B A B ..., on the same target, and prints IOPS and CPU-time ratios B/A.
Target: IOPS ratio >= 0.98. With ioengine=null the harness cost shows most.

    .venv/bin/python benchmarks/overhead.py [--rounds 10] [--seconds 5] [--dir /tmp/abbench]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from arraybench.plan.load import parse_plan_text
from arraybench.run.campaign import Campaign
from arraybench.store.db import Store

PLAN = """\
name: overhead
targets: [{{path: {target}, size: 256m}}]
ioengine: "{engine}"
direct: {direct}
timing: {{ramp: 1s, duration: {seconds}s}}
load: {{workers: [2], iodepth: [8]}}
workloads: [{{name: rr, pattern: random, bs: 4k, read: 100}}]
"""


class Quiet:
    def __getattr__(self, name: str):  # every observer callback does nothing
        return lambda *args, **kwargs: None


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_arraybench(plan_text: str, results: Path) -> tuple[float, float, Path]:
    store = Store(results)
    cpu0 = children_cpu() + time.process_time()
    result = Campaign(store, results, Quiet()).start(parse_plan_text(plan_text, "bench"), 1.0)
    cpu = children_cpu() + time.process_time() - cpu0
    point = store.points(result.run_id)[0]
    store.close()
    return float(point.metric("total", "iops") or 0), cpu, Path(point.folder) / "point.fio"


def run_fio(jobfile: Path, workdir: Path) -> tuple[float, float]:
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.copy(jobfile, workdir / "point.fio")
    cpu0 = children_cpu()
    subprocess.run(
        ["fio", "point.fio", "--output-format=json", "--output=fio.json"], cwd=workdir, check=True
    )
    cpu = children_cpu() - cpu0
    jobs = json.loads((workdir / "fio.json").read_text())["jobs"]
    return sum(j["read"]["iops"] for j in jobs), cpu


def measure(engine: str, direct: bool, rounds: int, seconds: int, base: Path) -> None:
    plan = PLAN.format(
        target=base / "target.dat", engine=engine, direct=str(direct).lower(), seconds=seconds
    )
    a_iops, a_cpu, b_iops, b_cpu = [], [], [], []
    run_arraybench(plan, base / f"warmup-{engine}")  # lays out the target file once
    for n in range(rounds):
        iops, cpu, jobfile = run_arraybench(plan, base / f"ab-{engine}-{n}")
        b_iops.append(iops)
        b_cpu.append(cpu)
        iops, cpu = run_fio(jobfile, base / f"fio-{engine}-{n}")
        a_iops.append(iops)
        a_cpu.append(cpu)
    a, b = statistics.median(a_iops), statistics.median(b_iops)
    cpu_ratio = statistics.median(b_cpu) / statistics.median(a_cpu)
    print(
        f"{engine:8s} fio alone {a:12,.0f} IOPS  arraybench {b:12,.0f} IOPS  "
        f"IOPS ratio {b / a:.3f}  CPU ratio {cpu_ratio:.3f}"
        f"  ({rounds} rounds of {seconds}s, A/B alternating)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    # fio alone varies 4.9-7.1 M IOPS run to run with the null engine on 2 CPUs: a median of
    # few rounds is noise, 10 rounds give a ratio that repeats
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    base = args.dir or Path(tempfile.mkdtemp(prefix="abbench-"))
    measure("null", False, args.rounds, args.seconds, base)
    measure("libaio", True, args.rounds, args.seconds, base)
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
