"""`runs`, `show`, `report`, `compare`, `import`: what was run or imported, what it measured,
its report."""

from __future__ import annotations

import argparse
import sys
import typing
from dataclasses import asdict, replace
from pathlib import Path

from arraybench import cli, console
from arraybench.cli import LATEST, RUN_ID_HELP, command, output_options, results_option
from arraybench.report.export import format_for
from arraybench.store.db import Store

# the tools `import` reads, named in its help
TOOLS = ("fio JSON, json+, normal text, terse, logs; DiskSpd text, vdbench flatfile.html, "
         "elbencho CSV")  # fmt: skip


# fmt: off
def add(sub: typing.Any) -> None:
    p = command(sub, "runs", cmd_runs, help="list runs in the results directory")
    results_option(p)
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="table (default) or json")
    p = command(sub, "show", cmd_show, help="every point of a run with its metrics")
    p.add_argument("run_id", metavar="RUN_ID", help=RUN_ID_HELP)
    results_option(p)
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="table (default), json or csv")
    p = command(sub, "report", cmd_report,
                help="write the report of a run (HTML, Markdown, CSV, Excel, PDF, PNG)")
    p.add_argument("run_id", metavar="RUN_ID", help=RUN_ID_HELP)
    results_option(p)
    output_options(p, formats=True)
    p = command(sub, "compare", cmd_compare, help="runs or scenarios side by side, with deltas")
    p.add_argument("scenarios", nargs="+", metavar="RUN[:SCENARIO]", help="RUN, RUN:hN (its "
                   "points on N hosts), RUN:C3 (its plan scenario C3) or RUN:LABEL; RUN may be "
                   f"{LATEST}")
    p.add_argument("--baseline", metavar="LABEL", help="default: the first scenario")
    results_option(p)
    output_options(p, formats=True)
    p.add_argument("--align", choices=("start", "event"), default="start",
                   help="the runs' time series overlaid from each run's start (default) or from "
                   "its first event (a failover lined up across runs)")
    p = command(sub, "import", cmd_import,
                help=f"existing results ({TOOLS}) into a run, to report and compare")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (recursive)")
    p.add_argument("--name", default="imported", help="the run's name (default: imported)")
    p.add_argument("--pattern", metavar="REGEX", help="named groups: workload, bs, rw, workers, "
                   "threads, iodepth, devices, hosts, scenario, label_<name>, read from file "
                   "names (RE2 syntax, matched in linear time), "
                   "e.g. 'BS(?P<bs>\\w+)-DeviceCount(?P<devices>\\d+)'")
    results_option(p)
# fmt: on


def cmd_runs(args: argparse.Namespace) -> int:
    rows = Store(Path(args.results), create=False).list_runs()
    if args.format == "json":
        console.print_json([asdict(run) | {"points_done": done} for run, done in rows])
    else:
        console.print_runs(rows, args.results)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from arraybench.report.show import show_csv, show_facts, show_json

    store, run = cli.stored_run(args)
    if args.format == "json":
        console.print_json(show_json(store, run))
    elif args.format == "csv":
        sys.stdout.write(show_csv(store, run))
    else:
        console.print_show(show_facts(store, run))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    store, run = cli.stored_run(args)
    cli.report(store, run, [Path(p) for p in args.output], args.format, args.charts)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from arraybench.report.compare import compare_runs

    store = Store(Path(args.results), create=False)
    for path in args.output:
        format_for(Path(path), args.format)
    model = compare_runs(store, args.scenarios, args.results, args.baseline, args.align)
    console.print_model(replace(model, notes=[]))
    console.print_hanging_notes(model.notes)  # a note may be longer than a line: indented
    cli.write(model, [Path(p) for p in args.output], args.format, args.charts)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    # imported here: its readers cost every other command (`run` above all) a fifth of a second
    from arraybench.importer import prepare_import, store_import

    # read and checked whole before the store is opened: a refused import leaves none behind
    prepared = prepare_import([Path(p) for p in args.paths], run_name=args.name,
                              name_pattern=args.pattern)  # fmt: skip
    store = Store(Path(args.results))
    try:
        result = store_import(store, prepared)
    finally:
        store.close()
    console.print_import(result, args.results)
    return 0
