"""`run`, `plan check`, `plan schema`, `hosts check`, `templates`: a campaign, and what it would
do before it runs."""

from __future__ import annotations

import argparse
import contextlib
import sys
import typing
from pathlib import Path

from arraybench import cli, console
from arraybench.cli import MANY, RUN_ID_HELP, command, output_options, results_option
from arraybench.errors import interruption
from arraybench.run.request import PlanRequest
from arraybench.store.db import Store


# fmt: off
def add(sub: typing.Any) -> None:
    p = command(sub, "run", cmd_run, help="run a plan or template (default: quick)")
    p.add_argument("plan", nargs="?", help="PLAN.yaml or TEMPLATE name")
    p.add_argument("--target", **MANY, metavar="PATH",
                   help="file or block device to test (repeatable); default: a scratch file")
    results_option(p)
    p.add_argument("--scale", type=cli.scale_factor, default=1.0, metavar="FACTOR",
                   help="multiply durations and sizes (e.g. 0.2 for a fast try)")
    p.add_argument("--repeat", type=cli.repeat_count, metavar="N", help="measure each point N "
                   "times, the ladder once before again (the plan's `repeat`)")
    p.add_argument("--resume", metavar="RUN_ID",
                   help=f"continue an interrupted run ({RUN_ID_HELP})")
    p.add_argument("--allow-destroy", **MANY, metavar="DEVICE",
                   help="consent to overwrite this exact block device")
    output_options(p)
    p.add_argument("--serve", metavar="[ADDR:]PORT", help="serve a live page and Prometheus "
                   "/metrics there while the run runs (127.0.0.1 unless ADDR is given; port 0: "
                   "any free port)")
    p.add_argument("--no-live", action="store_true", help="no per-second figures while points "
                   "run (fio without status reports): the live views show progress and events only")
    p.add_argument("--report", **MANY, metavar="FILE", help="old spelling of -o/--output")
    p.add_argument("--set", **MANY, metavar="KEY=VALUE", dest="overrides",
                   help="change the plan, e.g. --set load.workers=[1,8] (repeatable)")
    p.add_argument("--only", **MANY, metavar="GLOB",
                   help="run only the workloads whose names match (repeatable)")
    plan = command(sub, "plan", None, help="plan tools").add_subparsers(
        dest="plan_command", required=True)
    p = command(plan, "check", cmd_plan_check,
                help="validate and dry-run a plan: points, job files, time")
    p.add_argument("plan", help="PLAN.yaml or TEMPLATE name")
    p.add_argument("--target", **MANY, metavar="PATH",
                   help="file or block device the run would test (repeatable)")
    p.add_argument("--scale", type=cli.scale_factor, default=1.0, metavar="FACTOR",
                   help="multiply durations and sizes, as `run --scale`")
    p.add_argument("--all-jobs", action="store_true", help="print every point's job file")
    p.add_argument("--set", **MANY, metavar="KEY=VALUE", dest="overrides",
                   help="change the plan, as `run --set` (repeatable)")
    p.add_argument("--only", **MANY, metavar="GLOB",
                   help="only the workloads whose names match, as `run --only`")
    p.add_argument("--allow-destroy", **MANY, metavar="DEVICE",
                   help="consent to overwrite this exact block device, as `run`")
    results_option(p)
    p = command(plan, "schema", cmd_plan_schema,
                help="print the plan's JSON Schema (editors validate YAML plans with it)")
    p.add_argument("--markdown", action="store_true",
                   help="print the plan reference (docs/plan.md) instead")
    hosts = command(sub, "hosts", None, help="many-host tools").add_subparsers(
        dest="hosts_command", required=True)
    p = command(hosts, "check", cmd_hosts_check, help="check every host of a plan: reachable, "
                "fio version, clock offset, targets")
    p.add_argument("plan", help="PLAN.yaml or TEMPLATE name with a hosts list")
    p.add_argument("--set", **MANY, metavar="KEY=VALUE", dest="overrides",
                   help="change the plan, as `run --set`")
    command(sub, "templates", cmd_templates, help="list the built-in plans")
# fmt: on


def _request(args: argparse.Namespace) -> PlanRequest:
    return PlanRequest(args.plan, args.overrides, args.only, args.target, args.scale,
                       getattr(args, "repeat", None), args.allow_destroy)  # fmt: skip


def cmd_run(args: argparse.Namespace) -> int:
    from arraybench.live.launch import refuse_early, run_campaign
    from arraybench.live.session import LiveSession

    if args.report:
        console.print_note("--report is the old spelling of -o/--output")
    outputs = [Path(p) for p in [*args.output, *args.report]]
    refuse_early(outputs, args.serve)
    # closed on return: the run's lock is not kept by a library caller's process
    with contextlib.closing(Store(Path(args.results))) as store:
        live = LiveSession(console.ProgressObserver(), args.serve, store, seconds=not args.no_live)
        console.print_served(live.served())
        interactive = sys.stdin.isatty() and sys.stdout.isatty()  # else prompts assumed done
        ended = run_campaign(store, args.results, live, _request(args), args.resume, interactive)
        if ended.interrupted is not None:
            said, code = interruption(ended.interrupted)
            console.print_interrupted(said, ended.run_id, args.results)
            return code
        run = store.get_run(ended.run_id or "")
        try:
            return cli.verdict_exit(cli.report(store, run, outputs, None, None))
        except KeyboardInterrupt as exc:  # the run is stored whole: only its report is missing
            said, code = interruption(exc)
            console.print_interrupted(said, run.id, args.results, reporting=True)
            return code


def cmd_plan_check(args: argparse.Namespace) -> int:
    from arraybench.run.checks import check_plan
    from arraybench.run.request import requested_plan

    plan = requested_plan(_request(args), Path(args.results))
    console.print_plan_check(check_plan(plan, Path(args.results), args.all_jobs))
    return 0


def cmd_plan_schema(args: argparse.Namespace) -> int:
    from arraybench.plan.reference import plan_reference
    from arraybench.plan.schema import plan_schema_json

    console.out.file.write(plan_reference() if args.markdown else plan_schema_json())
    return 0


def cmd_hosts_check(args: argparse.Namespace) -> int:
    from arraybench.run.checks import check_plan_hosts

    check = check_plan_hosts(args.plan, args.overrides)
    console.print_hosts_check(check)
    return 0 if check.ok else 1


def cmd_templates(_: argparse.Namespace) -> int:
    from arraybench.plan import catalog

    lines = catalog.descriptions()
    console.print_wrapped(lines, max(len(name) for name, _ in lines) + 1)
    return 0
