"""`run`, `plan check`, `plan schema`, `hosts check`, `templates`: a campaign, and before it."""

from __future__ import annotations

import argparse
import contextlib
import typing
from pathlib import Path

from arraybench import cli, console
from arraybench.cli import MANY, RUN_ID_HELP, command, output_options, results_option
from arraybench.progressbar import ProgressObserver
from arraybench.run.request import PlanRequest
from arraybench.store.db import Store


# fmt: off
def add(sub: typing.Any) -> None:
    arg = command(sub, "run", cmd_run, help="run a plan or template (default: quick)")
    arg("plan", nargs="?", help="PLAN.yaml or TEMPLATE name")
    plan_options(arg)
    arg("--repeat", type=cli.repeat_count, metavar="N", help="measure each point N times, the "
        "ladder once before again (the plan's `repeat`)")
    arg("--resume", metavar="RUN_ID", help=f"continue an interrupted run ({RUN_ID_HELP})")
    output_options(arg)
    arg("--serve", metavar="[ADDR:]PORT", help="serve a live page and Prometheus /metrics there "
        "while the run runs (127.0.0.1 unless ADDR is given; port 0: any free port)")
    arg("--no-live", action="store_true", help="no per-second figures while points run (fio "
        "without status reports): the live views show progress and events only")
    arg("--report", **MANY, metavar="FILE", help="old spelling of -o/--output")
    plan = sub.add_parser("plan", help="plan tools").add_subparsers(dest="plan_command",
                                                                    required=True)
    arg = command(plan, "check", cmd_plan_check,
                  help="validate and dry-run a plan: points, job files, time")
    arg("plan", help="PLAN.yaml or TEMPLATE name")
    plan_options(arg)
    arg("--all-jobs", action="store_true", help="print every point's job file")
    arg = command(plan, "schema", cmd_plan_schema,
                  help="print the plan's JSON Schema (editors validate YAML plans with it)")
    arg("--markdown", action="store_true", help="print the plan reference (docs/plan.md) instead")
    hosts = sub.add_parser("hosts", help="many-host tools").add_subparsers(dest="hosts_command",
                                                                           required=True)
    arg = command(hosts, "check", cmd_hosts_check, help="check every host of a plan: reachable, "
                  "fio version, clock offset, targets")
    arg("plan", help="PLAN.yaml or TEMPLATE name with a hosts list")
    arg("--set", **MANY, metavar="KEY=VALUE", dest="overrides",
        help="change the plan, as `run --set`")
    arg("--fio", **cli.FIO)
    command(sub, "templates", cmd_templates, help="list the built-in plans")


def plan_options(arg: cli.Arg) -> None:
    """What makes a run of a plan, the same in `run` and in `plan check`."""
    arg("--target", **MANY, metavar="PATH",
        help="file or block device to test (repeatable); default: a scratch file")
    results_option(arg)
    arg("--fio", **cli.FIO)
    arg("--scale", type=cli.scale_factor, default=1.0, metavar="FACTOR",
        help="multiply durations and sizes (e.g. 0.2 for a fast try)")
    arg("--allow-destroy", **MANY, metavar="DEVICE",
        help="consent to overwrite this exact block device")
    arg("--set", **MANY, metavar="KEY=VALUE", dest="overrides",
        help="change the plan, e.g. --set load.workers=[1,8] (repeatable)")
    arg("--only", **MANY, metavar="GLOB",
        help="run only the workloads whose names match (repeatable)")
# fmt: on


def _request(args: argparse.Namespace) -> PlanRequest:
    return PlanRequest(args.plan, args.overrides, args.only, args.target, args.scale,
                       getattr(args, "repeat", None), args.allow_destroy)  # fmt: skip


def cmd_run(args: argparse.Namespace) -> int:
    from arraybench.live.launch import refuse_early, run_campaign
    from arraybench.live.session import LiveSession
    from arraybench.report.files import report_files

    if args.report:
        console.print_note("--report is the old spelling of -o/--output")
    outputs = [Path(p) for p in [*args.output, *args.report]]
    refuse_early(outputs, args.serve)
    # closed on return: the run's lock is not kept by a library caller's process
    with contextlib.closing(Store(Path(args.results))) as store:
        live = LiveSession(ProgressObserver(), args.serve, store, seconds=not args.no_live)
        console.print_served(live.served())
        ended = run_campaign(store, args.results, live, _request(args), args.resume,
                             console.interactive())  # fmt: skip
        if ended.interrupted is not None:
            return console.print_interrupted(ended.interrupted, ended.run_id, args.results)
        run = store.get_run(ended.run_id or "")
        try:
            return cli.verdict_exit(report_files(store, run, outputs, None, None, console))
        except KeyboardInterrupt as exc:  # the run is stored whole: only its report is missing
            return console.print_interrupted(exc, run.id, args.results, reporting=True)


def cmd_plan_check(args: argparse.Namespace) -> None:
    from arraybench.run.checks import check_plan

    console.print_plan_check(check_plan(_request(args), Path(args.results), args.all_jobs))


def cmd_plan_schema(args: argparse.Namespace) -> None:
    from arraybench.plan.reference import plan_schema_text

    console.out.file.write(plan_schema_text(args.markdown))


def cmd_hosts_check(args: argparse.Namespace) -> int:
    from arraybench.run.checks import check_plan_hosts

    return console.print_hosts_check(check_plan_hosts(args.plan, args.overrides))


def cmd_templates(_: argparse.Namespace) -> None:
    console.print_templates()
