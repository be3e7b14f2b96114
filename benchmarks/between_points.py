"""Time between points: arraybench against bare fio on the same ladder.

A ladder of random-read points (iodepth 1, 2, 4, ... at one worker) on one file, run by
`arraybench run` as a user runs it (a new process: start-up, checks, store, report at the end)
and by bare fio: one `fio` invocation per point on the job files arraybench wrote, one after
the other. Rounds alternate A (arraybench) and B (fio) so a busy machine slows both alike.
Prints every round's wall time, the medians, the ratio A/B and arraybench's seconds per point
beyond fio's. The target file is laid out once before the first round.

    .venv/bin/python benchmarks/between_points.py [--levels 5] [--seconds 5] [--rounds 3]
        [--size 512m] [--dir /tmp/between]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLAN = """\
name: between
targets: [{{path: {target}, size: {size}}}]
timing: {{ramp: 0s, duration: {seconds}s}}
load: {{workers: [1], iodepth: {depths}}}
workloads: [{{name: rr, pattern: random, bs: 4k, read: 100}}]
"""


def run_arraybench(plan: Path, results: Path) -> tuple[float, list[Path]]:
    """Wall seconds of one `arraybench run`, and the job files it wrote (in point order)."""
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "arraybench", "run", str(plan), "--results", str(results)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - began
    return wall, sorted((results / "runs").glob("*/points/*/point.fio"))


def run_fio(jobfiles: list[Path], workdir: Path) -> float:
    """Wall seconds of bare fio on each job file in turn, as a shell loop would run them."""
    began = time.perf_counter()
    for n, jobfile in enumerate(jobfiles):
        folder = workdir / f"{n:03d}"
        folder.mkdir(parents=True)
        shutil.copy(jobfile, folder / "point.fio")
        subprocess.run(
            ["fio", "point.fio", "--output-format=json", "--output=fio.json"],
            cwd=folder,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", default="512m")
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    base = args.dir or Path(tempfile.mkdtemp(prefix="between-"))
    base.mkdir(parents=True, exist_ok=True)
    depths = [2**n for n in range(args.levels)]
    plan = base / "plan.yaml"
    plan.write_text(PLAN.format(target=base / "target.dat", size=args.size,
                                seconds=args.seconds, depths=depths))  # fmt: skip
    print(f"ladder: {args.levels} points of {args.seconds} s (iodepth {depths}), "
          f"{args.size} file, {args.rounds} alternating rounds")  # fmt: skip
    _, jobfiles = run_arraybench(plan, base / "warmup")  # lays out the file once
    walls_a: list[float] = []
    walls_b: list[float] = []
    for n in range(args.rounds):
        wall_a, written = run_arraybench(plan, base / f"ab-{n}")
        wall_b = run_fio(written or jobfiles, base / f"fio-{n}")
        walls_a.append(wall_a)
        walls_b.append(wall_b)
        print(f"round {n + 1}: arraybench {wall_a:7.2f} s   bare fio {wall_b:7.2f} s")
    a, b = statistics.median(walls_a), statistics.median(walls_b)
    io = args.levels * args.seconds
    print(f"median wall time: arraybench {a:.2f} s, bare fio {b:.2f} s ({io} s of I/O)")
    print(f"ratio arraybench / bare fio: {a / b:.3f}")
    print(f"arraybench beyond fio: {(a - b) / args.levels:.2f} s per point "
          f"(fio's own beyond its I/O: {(b - io) / args.levels:.2f} s per point)")  # fmt: skip
    if args.dir is None:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
