"""Cost of sampling a workload's data: fio writing the sample, measured per granule.

For each case (compression x dedupe at 8 KiB, by default the issue's 1:1, 2:1, 4:1 by 1:1,
2:1) fio writes the 32 MiB sample arraybench writes before a run and `plan check --data`
(`engines/fio/datasample.py` `sample_data`), and the script prints the seconds it took
(fio writing it, then the measurement) and the ratios reached beside the requested ones.
Target: under 5 s per workload. It prints figures; it is not a test.

    .venv/bin/python benchmarks/data_sample.py [--fio PATH] [--repeat 3] [--mib 32]
        [--dir /tmp/absample] [--smoke]

The sample goes where --dir points (default: a temporary folder on the disk, as a run's
results folder: fio writes it buffered, so the disk's write-back is not in the figure).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

from arraybench.engines.fio.datasample import SAMPLE_BYTES, sample_data
from arraybench.engines.fio.runner import fio_binary
from arraybench.plan.workload import DataPattern

CASES = [(c, d) for c in (1.0, 2.0, 4.0) for d in (1.0, 2.0)]
TARGET_S = 5.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fio", default=None, help="fio binary (default: fio on PATH)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mib", type=int, default=SAMPLE_BYTES >> 20, help="sample size")
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: temp)")
    parser.add_argument("--smoke", action="store_true", help="a few seconds: 2 cases, once")
    args = parser.parse_args()
    cases = CASES
    if args.smoke:  # does it run: the suite runs this (tests/integration/test_benchmarks_smoke.py)
        args.repeat, args.mib, cases = 1, 4, [(1.0, 1.0), (2.0, 2.0)]
    fio = args.fio or fio_binary()
    base = args.dir or Path(tempfile.mkdtemp(prefix="absample-"))
    size = args.mib << 20
    print(f"{fio}: a {args.mib} MiB sample per case, 8 KiB granules, {args.repeat} round(s)")
    worst = 0.0
    for compression, dedupe in cases:
        data = DataPattern(compression=compression, dedupe=dedupe)
        times = []
        for _ in range(args.repeat):
            sample = sample_data(fio, data, 8192, base, size)
            if sample.achieved is None:
                raise SystemExit(f"fio failed: {sample.error}")
            times.append(sample.seconds)
        got = sample.achieved
        median = statistics.median(times)
        worst = max(worst, max(times))
        print(f"compression {compression:g}:1, dedupe {dedupe:g}:1: median {median:.2f} s "
              f"(max {max(times):.2f} s); reached {got.compression:.2f}:1, "
              f"{got.dedupe:.2f}:1")  # fmt: skip
    verdict = "meets" if worst < TARGET_S else "MISSES"
    print(f"slowest sample {worst:.2f} s: {verdict} the target of {TARGET_S:g} s per workload")
    if args.dir is None:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
