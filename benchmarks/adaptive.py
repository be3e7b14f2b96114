"""Adaptive against exhaustive: the same series on the same target, wall time and agreement.

Each round runs the exhaustive ladder (every level, fixed-length points, as the reports ran
them), then the adaptive series (exact and economy), whose points may also end early once
steady (fio's steadystate, `timing.steady`). Prints, per run, the wall time against the same
round's exhaustive sweep, the maximum's shortfall and how many ladder steps the optimal point
is off; with two rounds or more also the noise floor: how far two exhaustive sweeps of the
very same ladder differ. Targets from the issue: max within 3 %, optimal within one step,
time <= 35 %.

    .venv/bin/python benchmarks/adaptive.py [--target PATH | --loop] [--ramp 5 --seconds 60]
        [--window 10 --limit 10] [--rounds 2] [--markdown] [--keep DIR] [--smoke]
    .venv/bin/python benchmarks/adaptive.py --analyse DIR   # the figures again, from --keep

The defaults are dbi's plan (ramp_time=5, runtime=60, METHODOLOGY.md section 3) on HUS VM's
ten-level ladder; `--seconds 6 --ramp 1 --window 2` is the short plan of earlier figures.
--loop makes a 512 MiB loop device over a file (root) and runs on it with direct I/O.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from arraybench.analysis.curves import maximum, optimal_point
from arraybench.errors import StoreError
from arraybench.plan.load import parse_plan_text
from arraybench.report.build import curve_points, order_points
from arraybench.run.campaign import Campaign
from arraybench.run.context import Observer
from arraybench.store.db import Store

LADDER = [1, 2, 4, 8, 16, 32, 64, 96, 128, 192]  # iodepth, HUS VM's numjobs ladder
SIZE_MIB = 512
PLAN = """\
name: adaptive-bench
targets: [{{path: {target}, size: {size}m}}]
allow_destroy: [{target}]
ioengine: libaio
direct: true
monitor: false
timing: {{ramp: {ramp:g}s, duration: {seconds:g}s{steady}}}
load: {{workers: [1], iodepth: {ladder}, adaptive: {mode}}}
workloads: [{{name: rr, pattern: random, bs: 4k, read: 100}}]
"""
STEADY = ", steady: {{metric: iops, limit: {limit:g}, window: {window:g}s}}"


@dataclass
class Sweep:
    mode: str
    round: int
    wall: float
    points: int
    early: int  # points that ended once steady
    fio_seconds: float  # sum of the points' measured runtimes
    max: float
    max_qd: int
    opt_qd: int


class Quiet(Observer):
    """Every observer callback does nothing (the protocol's defaults)."""


def run(args: argparse.Namespace, target: str, mode: str, rnd: int, results: Path) -> Sweep:
    steady = STEADY.format(limit=args.limit, window=args.window) if mode != "off" else ""
    text = PLAN.format(target=target, size=SIZE_MIB, ramp=args.ramp, seconds=args.seconds,
                       steady=steady, ladder=LADDER, mode=mode)  # fmt: skip
    store = Store(results)
    began = time.monotonic()
    result = Campaign(store, results, Quiet()).start(parse_plan_text(text, "bench"), 1.0)
    return summarise(store, result.run_id, mode, rnd, time.monotonic() - began)


def summarise(store: Store, run_id: str, mode: str, rnd: int, wall: float) -> Sweep:
    points = order_points(store.points(run_id))
    curve = curve_points(points)
    best, knee = maximum(curve), optimal_point(curve)
    assert best is not None and knee is not None
    depth = {p.key: p.iodepth for p in points}
    return Sweep(mode, rnd, wall, len(points), sum(1 for p in points if p.ended_early),
                 sum(p.runtime_s for p in points), best.throughput, depth[best.key],
                 depth[knee.key])  # fmt: skip


def stored(folder: Path) -> list[Sweep]:
    """The sweeps kept by an earlier `--keep FOLDER` (wall time from the run's own stamps,
    to the second), in the order they ran."""
    found: list[tuple[str, Sweep]] = []
    for path in folder.glob("*-*"):
        mode, rnd = path.name.rsplit("-", 1)
        store = Store(path, create=False)
        run = store.list_runs()[0][0]
        if run.finished is None:
            continue  # interrupted: not a whole sweep
        wall = datetime.fromisoformat(run.finished) - datetime.fromisoformat(run.started)
        found.append((run.started, summarise(store, run.id, mode, int(rnd), wall.total_seconds())))
    return [sweep for _, sweep in sorted(found, key=lambda item: item[0])]


def window_spread(folder: Path, windows: list[int]) -> list[str]:
    """How far the mean of a window of seconds strays from the whole point's mean in the
    exhaustive sweeps: what a point ending after one steady window of that length can miss
    on this target (median over the ladder's levels of each level's worst window)."""
    lines = []
    for path in sorted(folder.glob("off-*")):
        store = Store(path, create=False)
        run = store.list_runs()[0][0]
        series = [[(x.read_iops or 0.0) + (x.write_iops or 0.0) for x in store.samples(p.id)]
                  for p in order_points(store.points(run.id))]  # fmt: skip
        figures = []
        for window in windows:
            spreads = [_worst_window(iops, window) for iops in series if len(iops) >= window]
            median = f"{statistics.median(spreads):.1f} %" if spreads else "- (points shorter)"
            figures.append(f"{window} s {median}")
        lines.append(f"{path.name}: a window's mean strays from the whole point's mean by up to "
                     + ", ".join(figures) + " (median over levels)")  # fmt: skip
    return lines


def _worst_window(iops: list[float], window: int) -> float:
    whole = statistics.fmean(iops)
    means = (statistics.fmean(iops[i : i + window]) for i in range(len(iops) - window + 1))
    return max(abs(m - whole) for m in means) / whole * 100 if whole > 0 else 0.0


def steps_off(a: int, b: int) -> int:
    return abs(LADDER.index(a) - LADDER.index(b))


def shortfall(ref: Sweep, got: Sweep) -> float:
    return (got.max - ref.max) / ref.max * 100


def describe(s: Sweep, ref: Sweep | None) -> str:
    line = (
        f"round {s.round} {s.mode:10s}: {s.points:2d} points ({s.early} ended steady), "
        f"{s.wall:6.1f} s wall, {s.fio_seconds:6.1f} s measured; max {s.max:,.0f} IOPS at "
        f"qd{s.max_qd}, optimal qd{s.opt_qd}"
    )
    if ref is not None:
        line += (
            f" | {s.wall / ref.wall:.2f} of the time, max {shortfall(ref, s):+.1f}%, "
            f"optimal {steps_off(s.opt_qd, ref.opt_qd)} step(s) off"
        )
    return line


def noise_floor(sweeps: list[Sweep]) -> list[str]:
    lines = []
    for a, b in itertools.pairwise(sweeps):
        lines.append(
            f"exhaustive round {a.round} vs round {b.round}: max {shortfall(a, b):+.1f}%, "
            f"optimal qd{a.opt_qd} vs qd{b.opt_qd} ({steps_off(a.opt_qd, b.opt_qd)} step(s))"
        )
    return lines


def markdown(runs: list[Sweep], refs: dict[int, Sweep], label: str) -> list[str]:
    rows = []
    for s in runs:
        ref = refs[s.round]
        if s is ref:
            continue
        within = [steps_off(s.opt_qd, r.opt_qd) <= 1 for r in refs.values()]
        rows.append(
            f"| {label} | {s.mode} | {s.round} | {s.points} of {len(LADDER)} ({s.early} steady) "
            f"| {s.wall / ref.wall:.2f} | {shortfall(ref, s):+.1f} % "
            f"| qd{s.opt_qd} vs qd{ref.opt_qd}: {steps_off(s.opt_qd, ref.opt_qd)} "
            f"| {sum(within)} of {len(within)} |"
        )
    return rows


def prefill(target: str, folder: Path) -> None:
    """Lay the scratch file out before any timed run, so no sweep pays for it."""
    if target.startswith("/dev/"):
        return
    subprocess.run(["fio", "--name=layout", f"--filename={target}", f"--size={SIZE_MIB}m",
                    "--rw=write", "--bs=1m", "--direct=1", f"--output={folder / 'layout.txt'}"],
                   check=True)  # fmt: skip


def loop_device(folder: Path) -> tuple[str, Path]:
    backing = Path(tempfile.mkstemp(prefix="abadaptive-loop-", dir=folder)[1])
    subprocess.run(["dd", "if=/dev/urandom", f"of={backing}", "bs=1M", f"count={SIZE_MIB}",
                    "status=none"], check=True)  # fmt: skip
    done = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(backing)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return done.stdout.strip(), backing


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", help="file or device (default: a scratch file)")
    parser.add_argument("--loop", action="store_true", help="run on a fresh loop device")
    parser.add_argument(
        "--backing",
        type=Path,
        help="folder of the loop device's file "
        "(default: /var/tmp; /dev/shm gives a RAM-backed block device)",
    )
    parser.add_argument("--ramp", type=float, default=5.0, help="seconds before measuring")
    parser.add_argument("--seconds", type=float, default=60.0, help="measured seconds a point")
    parser.add_argument("--window", type=float, default=10.0, help="steady window, seconds")
    parser.add_argument("--limit", type=float, default=10.0, help="steady limit, %% of mean")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--modes", nargs="+", default=["exact", "economy"])
    parser.add_argument("--markdown", action="store_true", help="also print table rows")
    parser.add_argument("--keep", type=Path, help="keep every sweep's results store here")
    parser.add_argument("--analyse", type=Path, help="print the figures of a --keep folder")
    parser.add_argument("--label", help="the target's name in the table rows")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a few seconds: a 2-level ladder of 1 s points, then --analyse",
    )
    return parser.parse_args()


def summary(runs: list[Sweep], modes: list[str], label: str, markdown_rows: bool) -> None:
    refs = {s.round: s for s in runs if s.mode == "off"}
    for line in noise_floor([refs[r] for r in sorted(refs)]):
        print(line)
    for mode in modes:
        ratios = [s.wall / refs[s.round].wall for s in runs if s.mode == mode]
        if ratios:
            print(f"{mode}: median time ratio {statistics.median(ratios):.2f}")
    if markdown_rows:
        print("\n".join(markdown(runs, refs, label)))


def analyse(args: argparse.Namespace) -> None:
    """Print the figures again from kept stores (`--keep`), with the window spread."""
    runs = stored(args.analyse)
    if not any(s.mode == "off" for s in runs):
        raise StoreError("no finished exhaustive sweep (off-N) kept there by --keep")
    refs = {s.round: s for s in runs if s.mode == "off"}
    for s in runs:
        print(describe(s, None if s.mode == "off" else refs.get(s.round)))
    summary(runs, args.modes, args.label or args.analyse.name, args.markdown)
    for line in window_spread(args.analyse, [round(args.window), 20, 30]):
        print(line)


def measure(args: argparse.Namespace, folder: Path) -> None:
    backing = None
    if args.loop:
        target, backing = loop_device(args.backing or folder)
    else:
        target = args.target or str(folder / "s.dat")
    try:
        prefill(target, folder)
        print(f"target {target}; iodepth ladder {LADDER}; points {args.ramp:g} s ramp + "
              f"{args.seconds:g} s; steady {args.limit:g} % over {args.window:g} s",
              flush=True)  # fmt: skip
        runs: list[Sweep] = []
        kept = args.keep or folder
        for rnd in range(1, args.rounds + 1):
            # even rounds run in reverse order, so a drift of the target over time does
            # not always favour the same side
            order = ["off", *args.modes]
            done = [run(args, target, mode, rnd, kept / f"{mode}-{rnd}")
                    for mode in (order if rnd % 2 else order[::-1])]  # fmt: skip
            ref = next(s for s in done if s.mode == "off")
            for s in sorted(done, key=lambda s: order.index(s.mode)):
                print(describe(s, None if s is ref else ref), flush=True)
            runs += done
        label = args.label or ("loop device" if args.loop else "file")
        summary(runs, args.modes, label, args.markdown)
    finally:
        if backing is not None:
            subprocess.run(["losetup", "-d", target], check=False)
            backing.unlink()


def smoke(args: argparse.Namespace) -> None:
    """Does it run (tests/integration/test_benchmarks_smoke.py): one round of a short ladder
    on a small file, kept, then the kept sweeps read back as `--analyse` reads them."""
    global SIZE_MIB
    SIZE_MIB, LADDER[:] = 32, [1, 16]
    args.ramp, args.seconds, args.window, args.rounds, args.modes = 0, 1, 1, 1, ["economy"]
    with tempfile.TemporaryDirectory(prefix="abadaptive-") as tmp:
        args.keep = Path(tmp) / "kept"
        measure(args, Path(tmp))
        args.analyse = args.keep
        analyse(args)


def main() -> None:
    args = options()
    if args.smoke:
        smoke(args)
        return
    if args.analyse:
        try:
            analyse(args)
        except StoreError as exc:
            print(f"adaptive.py: {args.analyse}: {exc}", file=sys.stderr)
            sys.exit(2)
        return
    with tempfile.TemporaryDirectory(prefix="abadaptive-", dir="/var/tmp") as tmp:
        measure(args, Path(tmp))


if __name__ == "__main__":
    main()
