"""Cost of the live view: the same one-point campaign without it and with all of it.

A: an observer without the live view: fio runs without `--status-interval`, nothing is read
   during the point (how a library caller runs, and how every run ran before the live view).
B: what `arraybench run --serve 127.0.0.1:0` on a terminal does: fio's status report every
   second read and turned into the live state, live.json written, the terminal view's lines
   drawn each second, and the server answering a client that polls /metrics and /live.json
   every second and /charts every two (what Prometheus and an open live page ask).

Runs A B, B A, A B ... on the same target and prints the IOPS ratio B/A per engine (null: the
harness cost shows most; libaio with direct I/O on a file). Target: >= 0.98.

    .venv/bin/python benchmarks/live_view.py [--rounds 6] [--seconds 5] [--engines null,libaio]
    .venv/bin/python benchmarks/live_view.py --smoke      # one short round each: it runs
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from arraybench.live.session import LiveSession
from arraybench.live.terminal import view_lines
from arraybench.plan.load import parse_plan_text
from arraybench.run.campaign import Campaign
from arraybench.run.context import Observer
from arraybench.store.db import Store

PLAN = """\
name: live-bench
targets: [{{path: {target}, size: {size}}}]
ioengine: "{engine}"
direct: {direct}
monitor: false
timing: {{ramp: {ramp}s, duration: {seconds}s}}
load: {{workers: [{workers}], iodepth: [8]}}
workloads: [{{name: rr, pattern: random, bs: 4k, read: 100}}]
"""


class Quiet(Observer):
    """The Observer protocol's defaults: nothing shown (live_seconds False: the live view is
    off)."""


class Terminal(Quiet):
    """The terminal view's work each second, without a terminal to print on."""

    def __init__(self) -> None:
        self.drawn = 0

    def live_view(self, snap: Any) -> None:
        self.drawn += len("\n".join(view_lines(snap)))


def poll(url: str, stop: threading.Event) -> None:
    """A Prometheus and an open live page, as far as the server sees them."""
    tick = 0
    while not stop.wait(1.0):
        paths = ["metrics", "live.json"] + (["charts"] if tick % 2 else [])
        for path in paths:
            try:
                with urllib.request.urlopen(url + path, timeout=2) as answer:
                    answer.read()
            except OSError:
                pass
        tick += 1


def one_run(plan_text: str, results: Path, live: bool) -> tuple[float, float]:
    """(fio's IOPS, arraybench's own CPU seconds: this process, all its threads)."""
    store = Store(results)
    cpu = time.process_time()
    session = LiveSession(Terminal(), "127.0.0.1:0") if live else None
    stop = threading.Event()
    poller = None
    if session is not None and session.server is not None:
        poller = threading.Thread(target=poll, args=(session.server.url, stop), daemon=True)
        poller.start()
    observer: Any = session.observer if session else Quiet()
    try:
        result = Campaign(store, results, observer).start(parse_plan_text(plan_text, "b"), 1.0)
    finally:
        stop.set()
        if session is not None:
            session.close("complete")
    spent = time.process_time() - cpu
    (point,) = store.points(result.run_id)
    store.close()
    return float(point.metrics["read_iops"] or 0.0), spent


def measure(
    engine: str, rounds: int, seconds: float, folder: Path, smoke: bool = False
) -> tuple[float, float, float, float]:
    """Median IOPS without and with, their ratio, and the live view's CPU seconds per
    second of point (B's CPU minus A's)."""
    direct = "false" if engine == "null" else "true"
    text = PLAN.format(target=folder / f"{engine}.dat", engine=engine, direct=direct,
                       seconds=seconds, ramp=0 if smoke else 1,  # smoke: does it run
                       size="16m" if smoke else "256m", workers=1 if smoke else 2)  # fmt: skip
    off, on = [], []
    for r in range(rounds):  # A B, then B A: whichever runs second gains nothing
        for live in (False, True) if r % 2 == 0 else (True, False):
            got = one_run(text, folder / f"{engine}-{live}-{r}", live=live)
            (on if live else off).append(got)
    a, b = statistics.median(x for x, _ in off), statistics.median(x for x, _ in on)
    extra = statistics.median(y for _, y in on) - statistics.median(y for _, y in off)
    return a, b, b / a, extra / (seconds + (0 if smoke else 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--engines", default="null,libaio")
    parser.add_argument("--smoke", action="store_true",
                        help="one 1-second round per engine, one worker, no ramp")  # fmt: skip
    args = parser.parse_args()
    rounds, seconds = (1, 1.0) if args.smoke else (args.rounds, args.seconds)
    print(f"live view off (A) and on (B), {rounds} round(s) of {seconds:g} s, A B / B A")
    print(
        "| engine | A: without | B: live view, server polled | IOPS ratio B/A | live view's CPU |"
    )
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="arraybench-live-bench-") as tmp:
        for engine in args.engines.split(","):
            start = time.monotonic()
            a, b, ratio, cpu = measure(engine, rounds, seconds, Path(tmp), args.smoke)
            print(f"| {engine} | {a / 1e3:,.1f} k IOPS | {b / 1e3:,.1f} k IOPS | {ratio:.3f} | "
                  f"{cpu * 100:.1f} % of a core |  ({time.monotonic() - start:.0f} s)")  # fmt: skip


if __name__ == "__main__":
    main()
