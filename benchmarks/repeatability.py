"""How many repeats give a ±3 % interval at 95 % on this machine, and what the spread costs.

Runs quick's workloads with `--repeat N` (the ladder measured N times, interleaved) on a
scratch file, then per workload: the median coefficient of variation of its levels, the
half-width of the 95 % Student t interval that N repeats gave, and the repeats that
coefficient needs for ±3 %. The cost: the run's wall time against one repetition's share.

    .venv/bin/python benchmarks/repeatability.py [--repeat 5] [--scale 0.2] [--only GLOB]
        [--target PATH] [--keep DIR] [--smoke]
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from arraybench.analysis.repeats import groups
from arraybench.analysis.statistics import mean, stdev, t95
from arraybench.store.db import Store

GOAL_PCT = 3.0
MAX_REPEATS = 100


def repeats_for(cv_pct: float, goal_pct: float = GOAL_PCT) -> int | None:
    """The fewest repeats whose 95 % Student t half-width is within `goal_pct` of the mean,
    for a coefficient of variation `cv_pct` (both in %); None above MAX_REPEATS."""
    for n in range(2, MAX_REPEATS + 1):
        if t95(n - 1) * cv_pct / math.sqrt(n) <= goal_pct:
            return n
    return None


def _run(args: argparse.Namespace, results: Path, target: Path) -> float:
    command = [
        sys.executable,
        "-m",
        "arraybench",
        "run",
        "quick",
        "--repeat",
        str(args.repeat),
        "--scale",
        str(args.scale),
        "--target",
        str(target),
        "--results",
        str(results),
    ]
    for glob in args.only:
        command += ["--only", glob]
    for override in getattr(args, "overrides", []):
        command += ["--set", override]
    started = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def _report(results: Path, wall: float, repeat: int) -> None:
    store = Store(results, create=False)
    run = store.list_runs()[-1][0]
    cvs: dict[str, list[float]] = defaultdict(list)
    halves: dict[str, list[float]] = defaultdict(list)
    for g in groups(store.points(run.id)):
        values = [p.throughput() for p in g.points]
        if len(values) < 2 or mean(values) <= 0:
            continue
        cvs[g.points[0].workload].append(stdev(values) / mean(values) * 100)
        halves[g.points[0].workload].append(g.throughput().half_width_pct or 0.0)
    print(f"| workload | median CV | ±95 % with {repeat} repeats | repeats for ±{GOAL_PCT:g} % |")
    print("|---|---:|---:|---:|")
    for workload, values in cvs.items():
        cv = statistics.median(values)
        need = repeats_for(cv)
        print(f"| {workload} | {cv:.1f} % | {statistics.median(halves[workload]):.1f} % | "
              f"{need if need else f'> {MAX_REPEATS}'} |")  # fmt: skip
    print(
        f"\nwall time {wall:.0f} s for {repeat} repetitions: {wall / repeat:.0f} s each "
        f"(the spread costs {repeat - 1} x one sweep)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scale", type=float, default=0.2)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--target", type=Path)
    parser.add_argument("--keep", type=Path, help="results directory to keep")
    parser.add_argument(
        "--smoke", action="store_true", help="a few seconds: one point twice at --scale 0.02"
    )
    args = parser.parse_args()
    if args.smoke:  # does it run: the suite runs this (tests/integration/test_benchmarks_smoke.py)
        args.repeat, args.scale, args.only = 2, 0.02, ["rand-8k-read"]
        args.overrides = ["load.workers=[1]"]
    with tempfile.TemporaryDirectory(prefix="arraybench-repeat-") as tmp:
        results = args.keep or Path(tmp) / "results"
        target = args.target or Path(tmp) / "scratch.dat"
        wall = _run(args, results, target)
        _report(results, wall, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
