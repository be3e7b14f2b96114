"""`templates`, `runs` and `show`: what is there to run, and what was run."""

from __future__ import annotations

import argparse
import sys
import typing
from dataclasses import asdict
from pathlib import Path

from arraybench import console
from arraybench.cli.common import RUN_ID_HELP, command, results_option, run_id
from arraybench.store.db import Store


# fmt: off
def add_templates(sub: typing.Any) -> None:
    command(sub, "templates", cmd_templates, help="list the built-in plans")


def add_runs(sub: typing.Any) -> None:
    p = command(sub, "runs", cmd_runs, help="list runs in the results directory")
    results_option(p)
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="table (default) or json")


def add_show(sub: typing.Any) -> None:
    p = command(sub, "show", cmd_show, help="every point of a run with its metrics")
    p.add_argument("run_id", metavar="RUN_ID", help=RUN_ID_HELP)
    results_option(p)
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="table (default), json or csv")
# fmt: on


def cmd_templates(_: argparse.Namespace) -> int:
    from arraybench.plan import catalog

    names = catalog.template_names()
    lines = [(n, " ".join(catalog.load_template(n).description.split())) for n in names]
    console.print_wrapped(lines, max(len(n) for n in names) + 1)
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    rows = Store(Path(args.results), create=False).list_runs()
    if args.format == "json":
        console.print_json([asdict(run) | {"points_done": done} for run, done in rows])
    else:
        console.print_runs(rows, args.results)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from arraybench.report.show import show_csv, show_facts, show_json

    store = Store(Path(args.results), create=False)
    run = store.get_run(run_id(store, args.run_id, args.results))
    if args.format == "json":
        console.print_json(show_json(store, run))
    elif args.format == "csv":
        sys.stdout.write(show_csv(store, run))
    else:
        console.print_show(show_facts(store, run))
    return 0
