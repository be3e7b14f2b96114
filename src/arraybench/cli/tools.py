"""`hosts check`, `revert`, `watch` and `attach`: the tools around a run."""

from __future__ import annotations

import argparse
import typing
from pathlib import Path

from arraybench import console
from arraybench.cli.common import EXIT_INTERRUPTED, MANY, RUN_ID_HELP, command, results_option
from arraybench.cli.common import run_id
from arraybench.store.db import DB_NAME, Store


# fmt: off
def add_hosts(sub: typing.Any) -> None:
    hosts = command(sub, "hosts", None, help="many-host tools").add_subparsers(
        dest="hosts_command", required=True)
    p = command(hosts, "check", cmd_hosts_check, help="check every host of a plan: reachable, "
                "fio version, clock offset, targets")
    p.add_argument("plan", help="PLAN.yaml or TEMPLATE name with a hosts list")
    p.add_argument("--set", **MANY, metavar="KEY=VALUE", dest="overrides",
                   help="change the plan, as `run --set`")


def add_revert(sub: typing.Any) -> None:
    p = command(sub, "revert", cmd_revert,
                help="undo what a killed run left in place: host_tuning, event injections")
    p.add_argument("run_id", nargs="?", default=None, metavar="RUN",
                   help="only this run's injections (default: every run's)")
    results_option(p)


def add_watch(sub: typing.Any) -> None:
    p = command(sub, "watch", cmd_watch, help="follow a run started elsewhere, live, until it ends")
    p.add_argument("run_id", nargs="?", default="latest", metavar="RUN_ID", help=RUN_ID_HELP)
    results_option(p)


def add_attach(sub: typing.Any) -> None:
    p = command(sub, "attach", cmd_attach, help="store the array's own monitor CSV beside a run")
    p.add_argument("run_id", metavar="RUN_ID", help=RUN_ID_HELP)
    p.add_argument("file", metavar="FILE", help="CSV exported from the array's monitor")
    p.add_argument("--map", required=True, metavar="FIELD=COLUMN,...",
                   help="time=COL and any of iops, mbps, latency_us, cpu_pct")
    p.add_argument("--offset", type=float, default=0.0, metavar="SECONDS",
                   help="added to the array's times (its clock behind: positive)")
    p.add_argument("--format", choices=("csv",), default="csv",
                   help="the file's format (csv, the documented columns)")
    results_option(p)
# fmt: on


def cmd_hosts_check(args: argparse.Namespace) -> int:
    from arraybench.run.checks import check_plan_hosts

    check = check_plan_hosts(args.plan, args.overrides)
    console.print_hosts_check(check)
    return 0 if check.ok else 1


def cmd_revert(args: argparse.Namespace) -> int:
    """Exit 1 when anything is left in place, else 0."""
    from arraybench.run.revert import revert_left_in_place

    results = Path(args.results)
    store = Store(results, create=False) if (results / DB_NAME).is_file() else None
    chosen = run_id(store, args.run_id, args.results) if store and args.run_id else None
    reverted = revert_left_in_place(results, store, chosen)
    console.print_reverted(reverted, args.results, results / DB_NAME)
    return 1 if reverted.problems else 0


def cmd_attach(args: argparse.Namespace) -> int:
    from arraybench.report.attach import attach_array_csv

    store = Store(Path(args.results), create=False)
    try:
        run = store.get_run(run_id(store, args.run_id, args.results))
        attached = attach_array_csv(store, run.id, args.file, args.map, args.offset)
    finally:
        store.close()
    console.print_attached(attached, args.file, run.id)
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    from arraybench.live.watch import follow

    store = Store(Path(args.results), create=False)
    run = store.get_run(run_id(store, args.run_id, args.results))
    console.out.print(f"watching run {run.id} in {run.folder} (Ctrl-C stops watching, not the "
                      "run)", markup=False)  # fmt: skip
    running = lambda: store.get_run(run.id).status == "running"  # noqa: E731
    try:
        last = console.watch_view(follow(Path(run.folder), running))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    ended = last["state"] if last else store.get_run(run.id).status
    console.out.print(f"run {run.id}: {ended}", markup=False)
    return 0 if ended == "complete" else 1
