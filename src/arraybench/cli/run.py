"""`run` and `plan check`/`plan schema`: the campaign, and what it would do."""

from __future__ import annotations

import argparse
import json
import sys
import typing
from pathlib import Path

from arraybench import console
from arraybench.cli.common import (MANY, RUN_ID_HELP, command, interrupted_exit, interruption,
                                   output_option, repeat_count, results_option, run_id,
                                   scale_factor, write)  # fmt: skip
from arraybench.errors import PlanError
from arraybench.report.export import format_for
from arraybench.run.request import PlanRequest
from arraybench.store.db import Store

if typing.TYPE_CHECKING:
    from arraybench.report.model import ReportModel

EXIT_NOT_ACCEPTED = 3  # the run completed but an acceptance criterion did not pass


# fmt: off
def add_run(sub: typing.Any) -> None:
    p = command(sub, "run", cmd_run, help="run a plan or template (default: quick)")
    p.add_argument("plan", nargs="?", help="PLAN.yaml or TEMPLATE name")
    p.add_argument("--target", **MANY, metavar="PATH",
                   help="file or block device to test (repeatable); default: a scratch file")
    results_option(p)
    p.add_argument("--scale", type=scale_factor, default=1.0, metavar="FACTOR",
                   help="multiply durations and sizes (e.g. 0.2 for a fast try)")
    p.add_argument("--repeat", type=repeat_count, metavar="N", help="measure each point N "
                   "times, the ladder once before again (the plan's `repeat`)")
    p.add_argument("--resume", metavar="RUN_ID", help=f"continue an interrupted run ({RUN_ID_HELP})")
    p.add_argument("--allow-destroy", **MANY, metavar="DEVICE",
                   help="consent to overwrite this exact block device")
    output_option(p)
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


def add_plan(sub: typing.Any) -> None:
    plan = command(sub, "plan", None, help="plan tools").add_subparsers(
        dest="plan_command", required=True)
    p = command(plan, "check", cmd_plan_check,
                help="validate and dry-run a plan: points, job files, time")
    p.add_argument("plan", help="PLAN.yaml or TEMPLATE name")
    p.add_argument("--target", **MANY, metavar="PATH",
                   help="file or block device the run would test (repeatable)")
    p.add_argument("--scale", type=scale_factor, default=1.0, metavar="FACTOR",
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
# fmt: on


def _request(args: argparse.Namespace) -> PlanRequest:
    return PlanRequest(args.plan, args.overrides, args.only, args.target, args.scale,
                       getattr(args, "repeat", None), args.allow_destroy)  # fmt: skip


def cmd_run(args: argparse.Namespace) -> int:
    if args.report:
        console.print_note("--report is the old spelling of -o/--output")
    outputs = [Path(p) for p in [*args.output, *args.report]]
    for path in outputs:  # an unknown report format is said before the campaign, not after it
        format_for(path, None)
    if args.serve:  # a refused --serve address too, before the store is made
        from arraybench.live.server import parse_serve

        parse_serve(args.serve)
    store = Store(Path(args.results))
    try:  # closed on return: the run's lock is not kept by a library caller's process
        return _run_campaign(args, store, Path(args.results), outputs)
    finally:
        store.close()


def _run_campaign(
    args: argparse.Namespace, store: Store, results: Path, outputs: list[Path]
) -> int:
    from arraybench.live.session import LiveSession
    from arraybench.report.assemble import report_for_run
    from arraybench.run.campaign import Campaign
    from arraybench.run.request import requested_plan

    live = LiveSession(console.ProgressObserver(), args.serve, store, seconds=not args.no_live)
    if (served := live.served()) is not None:
        console.out.print(served, markup=False, soft_wrap=True)
    campaign = Campaign(store, results, live.observer)
    campaign.interactive = sys.stdin.isatty() and sys.stdout.isatty()  # else prompts assumed
    ended = "failed"
    try:
        if args.resume:
            if _request(args) != PlanRequest(allow_destroy=args.allow_destroy):
                raise PlanError(
                    f"--resume {args.resume} continues that run with its own plan and targets",
                    "drop the plan, --target, --scale, --set, --repeat and --only arguments",
                )
            result = campaign.resume(run_id(store, args.resume, args.results))
        else:
            result = campaign.start(requested_plan(_request(args), results), args.scale)
        ended = "complete"
    except KeyboardInterrupt as exc:
        ended, said = "interrupted", interruption(exc)
        live.observer.stop()
        if campaign.run_id is None:
            console.print_error(
                f"{said} before the run was created; nothing to resume, start it again"
            )
        else:
            console.print_error(
                f"{said}; run {campaign.run_id} is marked interrupted, its "
                "completed points are saved. Continue with `arraybench run "
                f"--resume {campaign.run_id} --results {results}`"
            )
        return interrupted_exit(exc)
    finally:
        live.observer.stop()
        live.close(ended)
    run = store.get_run(result.run_id)
    try:
        model = report_for_run(store, run.id)
        console.print_model(model)
        write(model, outputs or [Path(run.folder) / "report.html"], None)
    except KeyboardInterrupt as exc:  # the run is stored whole: only its report is missing
        console.print_error(
            f"{interruption(exc)} while the report was written; run {run.id} "
            f"is complete: `arraybench report {run.id} --results {results}` "
            "writes it"
        )
        return interrupted_exit(exc)
    return verdict_exit(model)


def verdict_exit(model: ReportModel) -> int:
    """EXIT_NOT_ACCEPTED when any acceptance criterion did not pass (FAIL or NO DATA)."""
    verdicts = [row[1] for table in model.verdicts for row in table.rows]
    return EXIT_NOT_ACCEPTED if any(v != "PASS" for v in verdicts) else 0


def cmd_plan_check(args: argparse.Namespace) -> int:
    from arraybench.run.checks import check_plan
    from arraybench.run.request import requested_plan

    plan = requested_plan(_request(args), Path(args.results))
    console.print_plan_check(check_plan(plan, Path(args.results), args.all_jobs))
    return 0


def cmd_plan_schema(args: argparse.Namespace) -> int:
    from arraybench.plan.reference import plan_reference
    from arraybench.plan.schema import plan_schema

    text = (
        plan_reference()
        if args.markdown
        else json.dumps(plan_schema(), indent=2, ensure_ascii=False) + "\n"
    )
    console.out.file.write(text)
    return 0
