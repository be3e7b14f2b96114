"""Start spread against host count: one rate-limited point on N fio servers at once.

For each N of --hosts, N fio servers in network namespaces (tests/netns.py: root and iproute2),
or with --loopback N fio servers on 127.0.0.1 ... 127.0.0.N, one port and working folder each
(tests/loopback_hosts.py: no root, no `ip`, e.g. under gVisor), and a one-point plan on all N
(psync, 1 worker at iodepth 1, `rate_iops` 2,000 per host, each host its own 16 MiB target),
run by arraybench in this process --rounds times. Prints per N the start spread between the
hosts (min / median / max over the rounds, ms), the total IOPS against N x 2,000 (the per-host
figures must sum exactly) and the seconds N took. Target: 32 hosts under 2 ms.

    .venv/bin/python benchmarks/start_spread.py [--hosts 4,8,16,32] [--rounds 3] [--smoke]
        [--loopback]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.*: the test hosts

from arraybench.errors import interruption
from arraybench.hosts.server import HostSpec
from arraybench.plan.load import parse_plan_text
from arraybench.run import interrupts
from arraybench.run.campaign import Campaign
from arraybench.run.context import Observer
from arraybench.store.db import Store
from tests.loopback_hosts import LoopbackHosts

RATE = 2000
PORT = 8795  # apart from the tests' ports: a test run may share the machine


class Hosts(Protocol):
    """What this script needs of either kind of test hosts."""

    hosts: list[HostSpec]


def make_hosts(n: int, workdir: Path, loopback: bool) -> AbstractContextManager[Hosts]:
    """N fio servers: on 127.0.0.1 ... 127.0.0.N at ports PORT ... PORT + N - 1, or in N
    network namespaces."""
    if loopback:
        return LoopbackHosts(n, workdir, port=PORT)
    from tests.netns import TestHosts  # imports pytest: only where namespaces run

    return TestHosts(n, workdir, port=PORT)


class Quiet(Observer):
    """Every observer callback does nothing (the protocol's defaults)."""


def plan_text(hosts: Hosts, seconds: int) -> str:
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


def one_count(n: int, rounds: int, seconds: int, base: Path, loopback: bool) -> None:
    spreads, totals, failed = [], [], 0
    began = time.monotonic()
    with make_hosts(n, base / f"hosts-{n}", loopback) as hosts:
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
          f"host failed; {time.monotonic() - began:.1f} s)", flush=True)  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", default="4,8,16,32", help="host counts, e.g. 4,8,16,32")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="a few seconds: 2 hosts, once")
    loopback = "servers on 127.0.0.1 ... 127.0.0.N, not in network namespaces"
    parser.add_argument("--loopback", action="store_true", help=loopback)
    args = parser.parse_args()
    # SIGTERM (`timeout`) and Ctrl-C raise where the program is, as in the CLI: the campaign
    # stops fio and the `with` blocks close the servers, which run in sessions of their own
    # and would otherwise outlive this process and hold their ports
    interrupts.install()
    if args.smoke:
        args.hosts, args.rounds, args.seconds = "2", 1, 1
    if not args.loopback:
        if os.geteuid() != 0 or shutil.which("ip") is None:
            print("start_spread.py: skipped: network namespaces need root and iproute2 (ip)")
            return 0
        from tests.netns import cleanup_stale  # imports pytest: only where namespaces run

        cleanup_stale()
    mode = "loopback servers" if args.loopback else "network-namespace servers"
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}, {mode}", flush=True)
    try:
        with tempfile.TemporaryDirectory(prefix="abspread-") as tmp:
            for n in (int(k) for k in args.hosts.split(",")):
                one_count(n, args.rounds, args.seconds, Path(tmp), args.loopback)
    except KeyboardInterrupt as exc:
        words, code = interruption(exc)
        print(f"start_spread.py: {words}", file=sys.stderr)
        return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
