"""Adaptive against exhaustive: the same series on the same target, wall time and agreement.

Runs the exhaustive ladder (fixed-length points), then the adaptive series (exact and
economy) whose points may also end early once steady (fio's steadystate, `timing.steady`),
and prints the wall-time ratio, the maximum's shortfall and how many ladder steps the optimal
point is off. Targets from the issue: max within 3 %, optimal within one step, time <= 35 %.

    .venv/bin/python benchmarks/adaptive.py [--target PATH] [--seconds 6] [--loop]

--loop makes a 512 MiB loop device over a file (root) and runs on it with direct I/O.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

from arraybench.analysis.curves import maximum, optimal_point
from arraybench.campaign import Campaign
from arraybench.plan.load import parse_plan_text
from arraybench.report.build import curve_points, order_points
from arraybench.store.db import Store

LADDER = [1, 2, 4, 8, 16, 32, 64, 96, 128, 192]  # iodepth, HUS VM's numjobs ladder
PLAN = """\
name: adaptive-bench
targets: [{{path: {target}, size: 512m}}]
allow_destroy: [{target}]
ioengine: libaio
direct: true
monitor: false
timing: {{ramp: 1s, duration: {seconds}s{steady}}}
load: {{workers: [1], iodepth: {ladder}, adaptive: {mode}}}
workloads: [{{name: rr, pattern: random, bs: 4k, read: 100}}]
"""
STEADY = ", steady: {metric: iops, limit: 10, window: 2s}"


class Quiet:
    def __getattr__(self, name: str):  # every observer callback does nothing
        return lambda *args, **kwargs: None


def run(target: str, mode: str, seconds: float, results: Path) -> tuple[float, dict[str, float]]:
    steady = STEADY if mode != "off" else ""
    text = PLAN.format(target=target, seconds=seconds, steady=steady, ladder=LADDER, mode=mode)
    store = Store(results)
    began = time.monotonic()
    result = Campaign(store, results, Quiet()).start(parse_plan_text(text, "bench"), 1.0)
    wall = time.monotonic() - began
    points = order_points(store.points(result.run_id))
    curve = curve_points(points)
    best, knee = maximum(curve), optimal_point(curve)
    assert best is not None and knee is not None
    depth = {p.key: p.iodepth for p in points}
    return wall, {"max": best.throughput, "max_qd": depth[best.key],
                  "opt_qd": depth[knee.key], "points": len(points)}  # fmt: skip


def steps_off(a: int, b: int) -> int:
    return abs(LADDER.index(a) - LADDER.index(b))


def loop_device(folder: Path) -> str:
    backing = folder / "loop.img"
    with open(backing, "wb") as fh:
        fh.truncate(512 << 20)
    subprocess.run(["dd", "if=/dev/urandom", f"of={backing}", "bs=1M", "count=512",
                    "conv=notrunc", "status=none"], check=True)  # fmt: skip
    done = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(backing)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", help="file or device (default: a scratch file)")
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--loop", action="store_true", help="run on a fresh loop device")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="abadaptive-", dir="/var/tmp") as tmp:
        folder = Path(tmp)
        target = args.target or str(folder / "scratch.dat")
        if args.loop:
            target = loop_device(folder)
        try:
            ref_wall, ref = run(target, "off", args.seconds, folder / "exhaustive")
            print(f"target {target}; ladder iodepth {LADDER}; {args.seconds:g} s points")
            print(
                f"exhaustive: {ref['points']:.0f} points, {ref_wall:.1f} s, max "
                f"{ref['max']:,.0f} IOPS at qd{ref['max_qd']:.0f}, optimal qd{ref['opt_qd']:.0f}"
            )
            for mode in ("exact", "economy"):
                wall, got = run(target, mode, args.seconds, folder / mode)
                short = (ref["max"] - got["max"]) / ref["max"] * 100
                off = steps_off(int(got["opt_qd"]), int(ref["opt_qd"]))
                print(
                    f"{mode:8s}: {got['points']:.0f} points, {wall:.1f} s = "
                    f"{wall / ref_wall:.2f} of the exhaustive time; max {got['max']:,.0f} IOPS "
                    f"({short:+.1f}% short), optimal qd{got['opt_qd']:.0f} ({off} step(s) off)"
                )
        finally:
            if args.loop:
                subprocess.run(["losetup", "-d", target], check=False)


if __name__ == "__main__":
    main()
