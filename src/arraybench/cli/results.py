"""The commands on stored runs: revert, watch, attach, runs, show, report, compare, import,
bundle."""

from __future__ import annotations

import argparse
import contextlib
import typing
from pathlib import Path

from arraybench import cli, console
from arraybench.cli import LATEST, MANY, RUN_ID_HELP, command, output_options, results_option
from arraybench.errors import EXIT_INTERRUPTED
from arraybench.importer.registry import described  # import's formats, listed once
from arraybench.store.db import Store


# fmt: off
def add(sub: typing.Any) -> None:
    arg = command(sub, "revert", cmd_revert,
                  help="undo what a killed run left in place: host_tuning, event injections")
    arg("run_id", nargs="?", metavar="RUN", help="only this run's entries (default: every run's)")
    arg("--mark-undone", type=int, metavar="N", help="record entry N as undone by hand", **MANY)
    results_option(arg)
    arg = command(sub, "watch", cmd_watch, help="follow a run started elsewhere, live, to its end")
    arg("run_id", nargs="?", default="latest", metavar="RUN_ID", help=RUN_ID_HELP)
    results_option(arg)
    arg = command(sub, "attach", cmd_attach, help="store the array's own monitor CSV beside a run")
    arg("run_id", metavar="RUN_ID", help=RUN_ID_HELP)
    arg("file", metavar="FILE", help="CSV exported from the array's monitor")
    arg("--map", required=True, metavar="FIELD=COLUMN,...",
        help="time=COL and any of iops, mbps, latency_us, cpu_pct, reduction_ratio")
    arg("--offset", type=float, default=0.0, metavar="SECONDS",
        help="added to the array's times (its clock behind: positive)")
    arg("--format", choices=("csv",), default="csv",
        help="the file's format (csv, the documented columns)")
    results_option(arg)
    arg = command(sub, "runs", cmd_runs, help="list runs in the results directory")
    results_option(arg)
    arg("--format", choices=("table", "json"), default="table", help="table (default) or json")
    arg = command(sub, "show", cmd_show, help="every point of a run with its metrics")
    arg("run_id", metavar="RUN_ID", help=RUN_ID_HELP)
    results_option(arg)
    arg("--format", choices=("table", "json", "csv"), default="table",
        help="table (default), json or csv")
    arg = command(sub, "report", cmd_report,
                  help="write the report of a run (HTML, Markdown, CSV, Excel, PDF, PNG)")
    arg("run_id", metavar="RUN_ID", help=RUN_ID_HELP)
    results_option(arg)
    output_options(arg, formats=True)
    arg("--audience", choices=("engineer", "customer"), default="engineer",
        help="engineer (default): every detail, with how to change the plan; customer: the "
        "report to hand over, without plan keys, commands, docs paths or interactive hints, "
        "with the plan's customer, system under test and fabric in its set-up")
    arg = command(sub, "compare", cmd_compare, help="runs or scenarios side by side, with deltas")
    arg("scenarios", nargs="+", metavar="RUN[:SCENARIO]", help="RUN, RUN:hN (its points on N "
        f"hosts), RUN:C3 (its plan scenario C3) or RUN:LABEL; RUN may be {LATEST}")
    arg("--baseline", metavar="LABEL", help="default: the first scenario")
    results_option(arg)
    output_options(arg, formats=True)
    arg("--align", choices=("start", "event"), default="start", help="the runs' time series "
        "overlaid from each run's start (default) or from its first event (a failover lined up "
        "across runs)")
    arg = command(sub, "import", cmd_import,
                  help=f"existing results ({described()}) into a run, to report and compare; "
                  "or a run's bundle (a .zip of `arraybench bundle`), recreated as it was")
    arg("paths", nargs="+", metavar="PATH", help="files or folders (recursive); or one bundle")
    arg("--name", default="imported", help="the run's name (default: imported)")
    arg("--pattern", metavar="REGEX", help="named groups: workload, bs, rw, workers, threads, "
        "iodepth, devices, hosts, scenario, label_<name>, read from file names (RE2 syntax, "
        "matched in linear time), e.g. 'BS(?P<bs>\\w+)-DeviceCount(?P<devices>\\d+)'")
    results_option(arg)
    arg = command(sub, "bundle", cmd_bundle, help="a run's evidence in one file (a zip with a "
                  "manifest of SHA-256s, optionally signed), or `bundle verify FILE`")
    arg("run_id", metavar="RUN|verify", help=f"{RUN_ID_HELP}; or `verify` to check a bundle")
    arg("file", nargs="?", metavar="FILE", help="with verify: the bundle to check")
    arg("-o", "--output", metavar="FILE", help="the bundle to write (.zip)")
    arg("--sign", metavar="KEY", help="sign it with this private SSH key (ssh-keygen -Y sign)")
    arg("--public-key", metavar="FILE", help="with verify: the signer's SSH public key")
    arg("--allowed-signers", metavar="FILE",
        help="with verify: ssh-keygen's allowed-signers file naming who may sign")
    results_option(arg)
# fmt: on


def cmd_runs(args: argparse.Namespace) -> None:
    rows = Store(Path(args.results), create=False).list_runs()
    console.print_runs(rows, args.results, as_json=args.format == "json")


def cmd_show(args: argparse.Namespace) -> None:
    from arraybench.report.show import show_facts, show_text

    store, run = cli.stored_run(args)
    if args.format == "table":
        console.print_show(show_facts(store, run))
    else:  # the same CSV as `report -o x.csv`; JSON with everything `show` knows
        console.out.file.write(show_text(store, run, args.format))


def cmd_report(args: argparse.Namespace) -> None:
    from arraybench.report.files import report_files

    store, run = cli.stored_run(args)
    paths = [Path(p) for p in args.output]
    report_files(store, run, paths, args.format, args.charts, console, args.audience)


def cmd_compare(args: argparse.Namespace) -> None:
    from arraybench.report.compare import compare_runs
    from arraybench.report.files import check_formats, write_files

    store, paths = Store(Path(args.results), create=False), [Path(p) for p in args.output]
    check_formats(paths, args.format)
    model = compare_runs(store, args.scenarios, args.results, args.baseline, args.align)
    console.print_compare(model)
    write_files(model, paths, args.format, args.charts, console)


def cmd_import(args: argparse.Namespace) -> None:
    from arraybench.bundle.load import is_bundle

    if len(args.paths) == 1 and is_bundle(Path(args.paths[0])):
        return _import_bundle(args)
    # imported here: its readers cost every other command (`run` above all) a fifth of a second
    from arraybench.importer import prepare_import, store_import

    # read and checked whole before the store is opened: a refused import leaves none behind
    prepared = prepare_import([Path(p) for p in args.paths], run_name=args.name,
                              name_pattern=args.pattern)  # fmt: skip
    with contextlib.closing(Store(Path(args.results))) as store:
        result = store_import(store, prepared)
    console.print_import(result, args.results)


def _import_bundle(args: argparse.Namespace) -> None:
    from arraybench.bundle.load import load_bundle
    from arraybench.bundle.request import refuse_pattern

    refuse_pattern(args.pattern)
    console.print_bundle_imported(load_bundle(Path(args.paths[0]), Path(args.results)),
                                  args.results)  # fmt: skip


def cmd_bundle(args: argparse.Namespace) -> int:
    from arraybench.bundle.make import make_bundle
    from arraybench.bundle.request import bundle_request
    from arraybench.bundle.verify import verify_bundle

    asked = bundle_request(args.run_id, args.file, args.output, args.sign, args.public_key,
                           args.allowed_signers)  # fmt: skip
    if asked.verify:
        return console.print_verified(asked.file, verify_bundle(asked.file, asked.key,
                                                                asked.signers))  # fmt: skip
    store, run = cli.stored_run(args)
    with contextlib.closing(store):
        console.print_bundled(make_bundle(store, run, asked.file, asked.key), run.id)
    return 0


def cmd_revert(args: argparse.Namespace) -> int:
    from arraybench.run.revert import revert_or_mark

    return console.print_reverted(revert_or_mark(args.results, args.run_id, args.mark_undone))


def cmd_attach(args: argparse.Namespace) -> None:
    from arraybench.report.attach import attach_array_csv

    store, run = cli.stored_run(args)
    with contextlib.closing(store):
        attached = attach_array_csv(store, run.id, args.file, args.map, args.offset)
    console.print_attached(attached, args.file, run.id)


def cmd_watch(args: argparse.Namespace) -> int:
    from arraybench.live.watch import KILLED, watch_run

    store, run = cli.stored_run(args)
    console.print_watching(run)
    if (ended := watch_run(store, run.id, Path(run.folder), console.watch_view)) is None:
        return EXIT_INTERRUPTED
    console.print_watch_end(run.id, ended, ended == KILLED, args.results)
    return 0 if ended == "complete" else 1
