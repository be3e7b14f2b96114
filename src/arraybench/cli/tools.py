"""`revert`, `watch`, `attach`: the tools around a run."""

from __future__ import annotations

import argparse
import typing
from pathlib import Path

from arraybench import cli, console
from arraybench.cli import RUN_ID_HELP, command, results_option
from arraybench.errors import EXIT_INTERRUPTED
from arraybench.run.request import stored_run_id
from arraybench.store.db import DB_NAME, Store


# fmt: off
def add(sub: typing.Any) -> None:
    p = command(sub, "revert", cmd_revert,
                help="undo what a killed run left in place: host_tuning, event injections")
    p.add_argument("run_id", nargs="?", default=None, metavar="RUN",
                   help="only this run's injections (default: every run's)")
    results_option(p)
    p = command(sub, "watch", cmd_watch, help="follow a run started elsewhere, live, until it ends")
    p.add_argument("run_id", nargs="?", default="latest", metavar="RUN_ID", help=RUN_ID_HELP)
    results_option(p)
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


def cmd_revert(args: argparse.Namespace) -> int:
    """Exit 1 when anything is left in place, else 0."""
    from arraybench.run.revert import revert_left_in_place

    results = Path(args.results)
    store = Store(results, create=False) if (results / DB_NAME).is_file() else None
    run_id = stored_run_id(store, args.run_id, args.results) if store and args.run_id else None
    reverted = revert_left_in_place(results, store, run_id)
    console.print_reverted(reverted, args.results, results / DB_NAME)
    return 1 if reverted.problems else 0


def cmd_attach(args: argparse.Namespace) -> int:
    from arraybench.report.attach import attach_array_csv

    store, run = cli.stored_run(args)
    try:
        attached = attach_array_csv(store, run.id, args.file, args.map, args.offset)
    finally:
        store.close()
    console.print_attached(attached, args.file, run.id)
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    from arraybench.live.watch import watch_run

    store, run = cli.stored_run(args)
    console.print_watching(run)
    try:
        ended = watch_run(store, run.id, Path(run.folder), console.watch_view)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    console.out.print(f"run {run.id}: {ended}", markup=False)
    return 0 if ended == "complete" else 1
