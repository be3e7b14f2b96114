"""Time between points: arraybench against bench-fio and bare fio on the same ladder.

A ladder of random-read points (iodepth 1, 2, 4, ... at one worker) on one file, run by
`arraybench run` as a user runs it (a new process: start-up, checks, store, report at the end),
by bench-fio (fio-plot's runner: one fio per point, with the same 1-second logs) and by bare
fio: one `fio` invocation per point on the job files arraybench wrote, one after the other.
Each round runs the three, the first of them rotating, so a busy machine slows all alike.
Prints every round's wall time, the medians, the ratios and each tool's seconds per point
outside I/O. The target file is laid out once before the first round.

bench-fio is found on PATH, in $BENCH_FIO, or in /tmp/benchfio-venv (see INSTALL_HINT).

    .venv/bin/python benchmarks/between_points.py [--levels 5] [--seconds 5] [--rounds 3]
        [--size 512m] [--dir /tmp/between] [--bench-fio PATH | --without-bench-fio]
        [--src OLD/src] [--smoke]
"""

from __future__ import annotations

import argparse
import os
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


BENCH_FIO_VENV = Path("/tmp/benchfio-venv")
INSTALL_HINT = f"python3 -m venv {BENCH_FIO_VENV} && {BENCH_FIO_VENV}/bin/pip install fio-plot"


def find_bench_fio(given: str | None) -> str | None:
    """bench-fio's path: --bench-fio, $BENCH_FIO, PATH, then the venv of INSTALL_HINT."""
    for candidate in (given, os.environ.get("BENCH_FIO"), shutil.which("bench-fio"),
                      str(BENCH_FIO_VENV / "bin" / "bench-fio")):  # fmt: skip
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def run_bench_fio(
    bench_fio: str, target: Path, size: str, depths: list[int], seconds: int, out: Path
) -> float:
    """Wall seconds of one bench-fio ladder: the same file, engine, direct I/O, block size,
    random read at one job, time based, without fio's random map, as arraybench's job files."""
    command = [bench_fio, "-d", str(target), "-t", "file", "-s", size, "-o", str(out),
               "--iodepth", *map(str, depths), "--numjobs", "1", "--runtime", str(seconds),
               "-m", "randread", "-b", "4k", "-e", "libaio", "--direct", "1", "--time-based",
               "--quiet", "--extra-opts", "norandommap=1", "randrepeat=0"]  # fmt: skip
    began = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - began
    found = len(list(out.rglob("*.json")))
    if found != len(depths):
        raise SystemExit(f"bench-fio wrote {found} results for {len(depths)} points in {out}")
    return wall


def arraybench_env(src: Path | None) -> dict[str, str]:
    """arraybench's environment as an installed copy runs: its bytecode cached (a shell with
    PYTHONDONTWRITEBYTECODE would compile every module at every start); `src`: another tree."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if src is not None:
        env["PYTHONPATH"] = str(src.resolve())
    return env


def run_arraybench(plan: Path, results: Path, src: Path | None = None) -> tuple[float, list[Path]]:
    """Wall seconds of one `arraybench run`, and the job files it wrote (in point order)."""
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "arraybench", "run", str(plan), "--results", str(results)],
        check=True,
        stdout=subprocess.DEVNULL,
        env=arraybench_env(src),
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


def print_summary(walls: dict[str, list[float]], levels: int, seconds: int) -> None:
    io = levels * seconds
    median = {name: statistics.median(w) for name, w in walls.items()}
    print(f"median wall time ({io} s of I/O): "
          + ", ".join(f"{name} {m:.2f} s" for name, m in median.items()))  # fmt: skip
    fio = median["bare fio"]
    for name, m in median.items():
        if name != "bare fio":
            print(f"ratio {name} / bare fio: {m / fio:.3f}")
    if "bench-fio" in median:
        print(f"ratio arraybench / bench-fio: {median['arraybench'] / median['bench-fio']:.3f}")
    for name, m in median.items():
        print(f"{name:>16}: {(m - io) / levels:.3f} s per point outside I/O, "
              f"{(m - fio) / levels:+.3f} s per point beyond bare fio")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", default="512m")
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--bench-fio", default=None, help="bench-fio's path")
    parser.add_argument("--without-bench-fio", action="store_true")
    parser.add_argument("--src", type=Path, default=None,
                        help="also time the arraybench of this source tree (its src/ folder), "
                        "e.g. a `git archive` of an older commit")  # fmt: skip
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a few seconds: 1 point of 1 s, one round, bare fio only",
    )
    args = parser.parse_args()
    if args.smoke:  # does it run: the suite runs this (tests/integration/test_benchmarks_smoke.py)
        args.levels, args.seconds, args.rounds, args.size = 1, 1, 1, "16m"
        args.without_bench_fio = True
    bench_fio = None if args.without_bench_fio else find_bench_fio(args.bench_fio)
    if bench_fio is None and not args.without_bench_fio:
        raise SystemExit(
            "bench-fio not found (PATH, $BENCH_FIO, --bench-fio, "
            f"{BENCH_FIO_VENV}/bin); install it with:\n    {INSTALL_HINT}\n"
            "or compare with bare fio only: --without-bench-fio"
        )
    base = args.dir or Path(tempfile.mkdtemp(prefix="between-"))
    base.mkdir(parents=True, exist_ok=True)
    depths = [2**n for n in range(args.levels)]
    target = base / "target.dat"
    plan = base / "plan.yaml"
    plan.write_text(PLAN.format(target=target, size=args.size,
                                seconds=args.seconds, depths=depths))  # fmt: skip
    print(f"ladder: {args.levels} points of {args.seconds} s (iodepth {depths}), "
          f"{args.size} file, {args.rounds} rounds, the first tool rotating; "
          f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    _, jobfiles = run_arraybench(plan, base / "warmup")  # lays out the file once
    walls: dict[str, list[float]] = {"arraybench": [], "bare fio": []}
    if args.src:
        run_arraybench(plan, base / "warmup-src", args.src)  # its bytecode compiled
        walls["arraybench --src"] = []
    if bench_fio:
        walls["bench-fio"] = []
    for n in range(args.rounds):
        names = list(walls)
        for name in names[n % len(names) :] + names[: n % len(names)]:
            if name == "arraybench":
                wall, _ = run_arraybench(plan, base / f"ab-{n}")
            elif name == "arraybench --src":
                wall, _ = run_arraybench(plan, base / f"src-{n}", args.src)
            elif name == "bare fio":  # the warm-up's job files: the same points
                wall = run_fio(jobfiles, base / f"fio-{n}")
            else:
                assert bench_fio is not None
                wall = run_bench_fio(bench_fio, target, args.size, depths, args.seconds,
                                     base / f"bench-fio-{n}")  # fmt: skip
            walls[name].append(wall)
        print(f"round {n + 1}: " + ", ".join(f"{k} {w[-1]:.2f} s" for k, w in walls.items())
              + f"   (load {os.getloadavg()[0]:.2f})")  # fmt: skip
    print_summary(walls, args.levels, args.seconds)
    if args.dir is None:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
