"""Speed of `import_paths` on a tree of fio outputs made by copying the real samples.

Copies the fio result samples of tests/data (JSON, json+ and normal text, 1 to 10 points each)
round-robin into a tree of N files (default 300), imports the tree into a fresh results store
and prints files/s and points/s. Target: >= 100 files/s. It prints figures; it is not a test.

    .venv/bin/python benchmarks/import_speed.py [--files 300] [--dir /tmp/abimport] [--repeat 3]
        [--smoke]

The store is written where --dir points (default: a temporary folder). An import is one
SQLite transaction (WAL, synchronous=FULL: all or nothing, issue 24), so the fsyncs are paid
once per import, not per point; "store share" is the rest of the time over the points, the
building and range checks of each point included. "parse only" gives the reading rate without
the store (--dir /dev/shm/x shows the import where fsync costs nothing).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from arraybench.engines.fio.parse import parse_fio_json, parse_fio_json_file
from arraybench.engines.fio.textparse import looks_like_fio_text, parse_fio_text
from arraybench.errors import OutputParseError
from arraybench.importer import import_paths
from arraybench.store.db import Store

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"


def result_samples() -> list[Path]:
    """The samples that hold fio results (not logs, job files or failed runs)."""
    found = []
    for path in sorted(DATA.iterdir()):
        if path.suffix == ".log" or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        if looks_like_fio_text(text):
            found.append(path)
            continue
        try:
            parse_fio_json_file(path)
        except OutputParseError:  # not fio JSON (a failed run)
            continue
        found.append(path)
    return found


def make_tree(root: Path, count: int) -> int:
    """`count` files in root/siteK/devM/runNNNN/, cycling through the samples; their bytes."""
    samples = result_samples()
    size = 0
    for i in range(count):
        source = samples[i % len(samples)]
        folder = root / f"site{i % 3}" / f"dev{i % 7}" / f"run{i:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, folder / source.name)
        size += source.stat().st_size
    return size


def parse_only(tree: Path) -> float:
    """Seconds to read and parse every file of the tree, without storing anything."""
    began = time.perf_counter()
    for path in sorted(p for p in tree.rglob("*") if p.is_file()):
        text = path.read_text(errors="replace")
        if looks_like_fio_text(text):
            parse_fio_text(text, path.name)
        else:
            parse_fio_json(text)
    return time.perf_counter() - began


def one_import(tree: Path, results: Path) -> tuple[float, int, int]:
    if results.exists():
        shutil.rmtree(results)
    store = Store(results)
    began = time.perf_counter()
    result = import_paths(store, [tree], run_name="speed")
    elapsed = time.perf_counter() - began
    store.close()
    return elapsed, len(result.points), len(result.skipped)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: temp)")
    parser.add_argument("--smoke", action="store_true", help="a few seconds: 20 files, once")
    args = parser.parse_args()
    if args.smoke:  # does it run: the suite runs this (tests/integration/test_benchmarks_smoke.py)
        args.files, args.repeat = 20, 1
    base = args.dir or Path(tempfile.mkdtemp(prefix="abimport-"))
    tree, results = base / "tree", base / "results"
    if tree.exists():
        shutil.rmtree(tree)
    size = make_tree(tree, args.files)
    print(f"tree: {args.files} fio output files, {size / 1e6:.1f} MB, "
          f"{len(result_samples())} distinct samples, in {tree}")  # fmt: skip
    parse = min(parse_only(tree) for _ in range(args.repeat))
    print(f"parse only: {parse:.2f} s, {args.files / parse:,.0f} files/s")
    times = []
    for round_no in range(1, args.repeat + 1):
        elapsed, points, skipped = one_import(tree, results)
        times.append(elapsed)
        print(f"round {round_no}: {elapsed:.2f} s, {args.files / elapsed:,.0f} files/s, "
              f"{points / elapsed:,.0f} points/s ({points} points, {skipped} skipped)")  # fmt: skip
    best, median = min(times), statistics.median(times)
    per_point = (median - parse) / points * 1000 if points else 0.0
    print(f"store share: about {per_point:.1f} ms per point (one transaction per import)")
    verdict = "meets" if args.files / median >= 100 else "MISSES"
    print(f"median {args.files / median:,.0f} files/s (best {args.files / best:,.0f}); "
          f"{verdict} the target of 100 files/s")  # fmt: skip
    if args.dir is None:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
