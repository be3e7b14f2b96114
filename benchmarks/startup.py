"""Start-up: wall time of `arraybench --version`, `runs` and `show` of a small run.

Each command runs as a new process (`python -m arraybench ...`), `--repeat` times; prints the
min / median / max wall time, the median CPU time (user + system: what a busy machine inflates
least) and the modules it imported, against the target of 0.2 s of wall time. The
small run is one fio JSON of tests/data imported into a fresh results folder. With --src the
same commands also run on another source tree (e.g. a `git archive` of an older commit's src/),
interleaved, so both see the same load.

    .venv/bin/python benchmarks/startup.py [--repeat 10] [--src OLD/src] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SAMPLE = (
    Path(__file__).resolve().parent.parent
    / "tests" / "data" / "09_fioplot_fio3.1_json_ns_keys_randread.json"
)  # fmt: skip
TARGET_S = 0.2
COUNT = "import sys, runpy; sys.argv = ['arraybench', *sys.argv[1:]]\n" + (
    "try:\n    runpy.run_module('arraybench', run_name='__main__')\nexcept SystemExit:\n    pass\n"
    "print(len(sys.modules), file=sys.stderr)"
)


def env_for(src: Path | None) -> dict[str, str]:
    if src is None:
        return dict(os.environ)
    return os.environ | {
        "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")])
    }


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def once(args: list[str], src: Path | None) -> tuple[float, float]:
    """Wall and CPU seconds of one command (CPU time: what a busy machine inflates least)."""
    began, cpu = time.perf_counter(), children_cpu()
    subprocess.run([sys.executable, "-m", "arraybench", *args], env=env_for(src), check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - began, children_cpu() - cpu


def modules(args: list[str], src: Path | None) -> int:
    done = subprocess.run([sys.executable, "-c", COUNT, *args], env=env_for(src), check=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    return int(done.stderr.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--src", type=Path, default=None, help="also time this source tree")
    parser.add_argument("--smoke", action="store_true", help="a few seconds: each command once")
    args = parser.parse_args()
    if args.smoke:
        args.repeat = 1
    with tempfile.TemporaryDirectory(prefix="abstartup-") as tmp:
        results = str(Path(tmp) / "results")
        small = ["import", str(SAMPLE), "--results", results, "--name", "small"]
        subprocess.run([sys.executable, "-m", "arraybench", *small], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        commands = {"--version": ["--version"], "runs": ["runs", "--results", results],
                    "show (small run)": ["show", "latest", "--results", results]}  # fmt: skip
        trees = {"this tree": None} | ({f"--src {args.src}": args.src} if args.src else {})
        for tree in trees.values():  # bytecode compiled before anything is timed
            once(["--version"], tree)
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(args.repeat):
            for name, argv in commands.items():
                for label, tree in trees.items():
                    times.setdefault((name, label), []).append(once(argv, tree))
        print(f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average "
              f"{os.getloadavg()[0]:.2f}; wall time of {args.repeat} runs each")  # fmt: skip
        for (name, label), both in times.items():
            walls, cpus = [w for w, _ in both], [c for _, c in both]
            median = statistics.median(walls)
            verdict = "ok" if median < TARGET_S else "OVER"
            count = modules(commands[name], trees[label])
            cpu = statistics.median(cpus)
            print(f"{name:18s} {label:24s} min {min(walls):.3f}  median {median:.3f}  max "
                  f"{max(walls):.3f} s, CPU median {cpu:.3f} s  {count} modules  {verdict} "
                  f"(target {TARGET_S} s)", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
