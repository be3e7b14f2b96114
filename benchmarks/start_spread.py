"""Start spread against host count: one rate-limited point on N fio servers at once.

For each N of --hosts, N fio servers in network namespaces (tests/netns.py: root and iproute2),
and a one-point plan on all N (psync, 1 worker at iodepth 1, `rate_iops` 2,000 per host, each
host its own 16 MiB target), run by arraybench in this process --rounds times. Prints per N
the start spread between the hosts (min / median / max over the rounds, ms) and the total
IOPS against N x 2,000 (the per-host figures must sum exactly). Target: 32 hosts under 2 ms.

    .venv/bin/python benchmarks/start_spread.py [--hosts 4,8,16,32] [--rounds 3] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.netns: the test hosts

from arraybench.plan.load import parse_plan_text
from arraybench.run.campaign import Campaign
from arraybench.run.context import Observer
from arraybench.store.db import Store
from tests.netns import TestHosts, cleanup_stale

RATE = 2000
PORT = 8795  # apart from the tests' ports: a test run may share the machine


class Quiet(Observer):
    """Every observer callback does nothing (the protocol's defaults)."""


def plan_text(hosts: TestHosts, seconds: int) -> str:
    declared = "".join(
        f"  - {{name: {h.name}, address: {h.address}, port: {h.port}, "
        f"targets: [{{path: t-{h.name}.dat, size: 16m}}]}}\n"
        for h in hosts.hosts
    )
    names = ", ".join(h.name for h in hosts.hosts)
    return (
        f"name: spread\nhosts:\n{declared}host_sets: [[{names}]]\n"
        f"timing: {{ramp: 1s, duration: {seconds}s}}\n"
        "load: {workers: [1], iodepth: [1]}\n"
        "workloads:\n"
        f"  - {{name: rr, pattern: random, bs: 4k, read: 100, ioengine: psync, "
        f"rate_iops: {RATE}}}\n"
    )


def one_count(n: int, rounds: int, seconds: int, base: Path) -> None:
    spreads, totals, failed = [], [], 0
    with TestHosts(n, base / f"hosts-{n}", port=PORT) as hosts:
        text = plan_text(hosts, seconds)
        for r in range(rounds):
            results = base / f"results-{n}-{r}"
            store = Store(results)
            run = Campaign(store, results, Quiet()).start(parse_plan_text(text, "spread"), 1.0)
            (point,) = store.points(run.run_id)
            store.close()
            spreads.append(point.start_spread_ms)
            failed += 1 if point.partial else 0
            totals.append(point.metric("total", "iops") or 0.0)
    known = [s for s in spreads if s is not None]
    spread = (f"{min(known):.2f} / {statistics.median(known):.2f} / {max(known):.2f} ms"
              if known else "none measured")  # fmt: skip
    total = statistics.median(totals)
    print(f"{n:3d} hosts: start spread min/median/max {spread}; total {total:,.0f} IOPS "
          f"= {total / (RATE * n):.3f} x {n} x {RATE:,} ({rounds} rounds, {failed} partial: a "
          "host failed)", flush=True)  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", default="4,8,16,32", help="host counts, e.g. 4,8,16,32")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="a few seconds: 2 hosts, once")
    args = parser.parse_args()
    if args.smoke:
        args.hosts, args.rounds, args.seconds = "2", 1, 1
    if os.geteuid() != 0 or shutil.which("ip") is None:
        print("start_spread.py: skipped: network namespaces need root and iproute2 (ip)")
        return 0
    cleanup_stale()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="abspread-") as tmp:
        for n in (int(k) for k in args.hosts.split(",")):
            one_count(n, args.rounds, args.seconds, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
