"""The command line: parse arguments, call the library, print results, map errors to exit codes."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import math
import os
import signal
import sqlite3
import sys
import textwrap
import typing
from collections.abc import Sequence
from dataclasses import asdict, fields, replace
from pathlib import Path

import rich.box
from rich.cells import cell_len

from arraybench import __version__, console
from arraybench.errors import ArraybenchError, PlanError, StoreError, Terminated
from arraybench.finding_kinds import ARRAY_SERIES, EVENTS, INTEGRITY, PROVENANCE
from arraybench.report.render.export import FORMATS, format_for
from arraybench.run import interrupts
from arraybench.store.db import DB_NAME, Finding, PointRecord, RunRecord, Store, store_error
from arraybench.units import format_latency, format_throughput

# The rest is imported by the command that needs it: the plan model (pydantic), the report
# and the run cost `--version`, `runs` and `show` most of their start-up (docs/performance.md).
if typing.TYPE_CHECKING:
    from arraybench.analysis.validity import Flag
    from arraybench.plan.expand import Point
    from arraybench.plan.model import Plan
    from arraybench.report.model import ReportModel

DEFAULT_RESULTS = "arraybench-results"
RESULTS_ENV = "ARRAYBENCH_RESULTS"  # the results directory when --results is not given
LATEST = "latest"  # a run id meaning the newest run of the results directory
RUN_ID_HELP = f"a run id from `arraybench runs`, or {LATEST}"
EXIT_INTERRUPTED = 130
EXIT_NOT_ACCEPTED = 3  # the run completed but an acceptance criterion did not pass
MAX_SCALE = 1000.0


class _Parser(argparse.ArgumentParser):
    """argparse with its mistakes said in one line (exit 2), like every other mistake."""

    def error(self, message: str) -> typing.NoReturn:
        console.print_error(f"{self.prog}: {message}; see `{self.prog} --help`")
        self.exit(2)


MAX_REPEAT = 100  # as plan.model.Repeats


def _repeat_count(text: str) -> int:
    """--repeat: how many times each point is measured, as the plan's `repeat` allows."""
    if not (text.isdigit() and 1 <= int(text) <= MAX_REPEAT):
        raise argparse.ArgumentTypeError(f"{text!r} is not a count from 1 to {MAX_REPEAT} "
                                         "(e.g. --repeat 3)")  # fmt: skip
    return int(text)


def _scale_factor(text: str) -> float:
    """--scale: a finite factor above 0 and at most MAX_SCALE (inf or nan would overflow)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= MAX_SCALE):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a factor above 0 and at most {MAX_SCALE:g} (e.g. --scale 0.2)"
        )
    return value


def _results_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--results",
        default=os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS,
        metavar="DIR",
        help=f"results directory (default: ${RESULTS_ENV}, else ./{DEFAULT_RESULTS})",
    )


def _output_option(parser: argparse.ArgumentParser) -> None:
    """-o/--output: a report file, the same meaning in every command."""
    parser.add_argument(
        "-o",
        "--output",
        action="append",
        default=[],
        metavar="FILE",
        help="write the report to FILE; format from the extension "
        "(.html .md .csv .xlsx .pdf .png); repeatable",
    )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="arraybench", description="Storage benchmarking campaigns driven by fio.")
    parser.add_argument("--version", action="version", version=f"arraybench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run a plan or template (default: quick)")
    run.add_argument("plan", nargs="?", help="PLAN.yaml or TEMPLATE name")
    run.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="PATH",
        help="file or block device to test (repeatable); default: a scratch file",
    )
    _results_option(run)
    run.add_argument(
        "--scale",
        type=_scale_factor,
        default=1.0,
        metavar="FACTOR",
        help="multiply durations and sizes (e.g. 0.2 for a fast try)",
    )
    run.add_argument("--repeat", type=_repeat_count, metavar="N",
                     help="measure each point N times, the ladder once before again "
                     "(the plan's `repeat`)")  # fmt: skip
    run.add_argument(
        "--resume", metavar="RUN_ID", help=f"continue an interrupted run ({RUN_ID_HELP})"
    )
    run.add_argument(
        "--allow-destroy",
        action="append",
        default=[],
        metavar="DEVICE",
        help="consent to overwrite this exact block device",
    )
    _output_option(run)
    run.add_argument("--serve", metavar="[ADDR:]PORT",
                     help="serve a live page and Prometheus /metrics there while the run runs "
                     "(127.0.0.1 unless ADDR is given; port 0: any free port)")  # fmt: skip
    run.add_argument("--no-live", action="store_true",
                     help="no per-second figures while points run (fio without status "
                     "reports): the live views show progress and events only")  # fmt: skip
    run.add_argument("--report", action="append", default=[], metavar="FILE",
                     help="old spelling of -o/--output")  # fmt: skip
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="overrides",
        help="change the plan, e.g. --set load.workers=[1,8] (repeatable)",
    )

    plan = sub.add_parser("plan", help="plan tools").add_subparsers(
        dest="plan_command", required=True
    )
    check = plan.add_parser("check", help="validate and dry-run a plan: points, job files, time")
    check.add_argument("plan", help="PLAN.yaml or TEMPLATE name")
    check.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="PATH",
        help="file or block device the run would test (repeatable)",
    )
    check.add_argument(
        "--scale",
        type=_scale_factor,
        default=1.0,
        metavar="FACTOR",
        help="multiply durations and sizes, as `run --scale`",
    )
    check.add_argument("--all-jobs", action="store_true", help="print every point's job file")
    check.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="overrides",
        help="change the plan, as `run --set` (repeatable)",
    )
    check.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="GLOB",
        help="only the workloads whose names match, as `run --only`",
    )
    check.add_argument(
        "--allow-destroy",
        action="append",
        default=[],
        metavar="DEVICE",
        help="consent to overwrite this exact block device, as `run`",
    )
    _results_option(check)
    run.add_argument("--only", action="append", default=[], metavar="GLOB",
                     help="run only the workloads whose names match (repeatable)")  # fmt: skip

    schema = plan.add_parser(
        "schema", help="print the plan's JSON Schema (editors validate YAML plans with it)"
    )
    schema.add_argument(
        "--markdown", action="store_true", help="print the plan reference (docs/plan.md) instead"
    )

    hosts = sub.add_parser("hosts", help="many-host tools").add_subparsers(
        dest="hosts_command", required=True
    )
    hcheck = hosts.add_parser(
        "check", help="check every host of a plan: reachable, fio version, clock offset, targets"
    )
    hcheck.add_argument("plan", help="PLAN.yaml or TEMPLATE name with a hosts list")
    hcheck.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        dest="overrides", help="change the plan, as `run --set`")  # fmt: skip
    sub.add_parser("templates", help="list the built-in plans")
    revert = sub.add_parser(
        "revert", help="undo what a killed run left in place: host_tuning, event injections"
    )
    revert.add_argument("run_id", nargs="?", default=None, metavar="RUN",
                        help="only this run's injections (default: every run's)")  # fmt: skip
    _results_option(revert)
    watch = sub.add_parser("watch", help="follow a run started elsewhere, live, until it ends")
    watch.add_argument("run_id", nargs="?", default="latest", metavar="RUN_ID", help=RUN_ID_HELP)
    _results_option(watch)

    attach = sub.add_parser("attach", help="store the array's own monitor CSV beside a run")
    attach.add_argument("run_id", metavar="RUN_ID", help=RUN_ID_HELP)
    attach.add_argument("file", metavar="FILE", help="CSV exported from the array's monitor")
    attach.add_argument("--map", required=True, metavar="FIELD=COLUMN,...",
                        help="time=COL and any of iops, mbps, latency_us, cpu_pct")  # fmt: skip
    attach.add_argument("--offset", type=float, default=0.0, metavar="SECONDS",
                        help="added to the array's times (its clock behind: positive)")  # fmt: skip
    attach.add_argument("--format", choices=("csv",), default="csv",
                        help="the file's format (csv, the documented columns)")  # fmt: skip
    _results_option(attach)
    runs = sub.add_parser("runs", help="list runs in the results directory")
    _results_option(runs)
    runs.add_argument("--format", choices=("table", "json"), default="table",
                      help="table (default) or json")  # fmt: skip
    show = sub.add_parser("show", help="every point of a run with its metrics")
    show.add_argument("run_id", metavar="RUN_ID", help=RUN_ID_HELP)
    _results_option(show)
    show.add_argument("--format", choices=("table", "json", "csv"), default="table",
                      help="table (default), json or csv")  # fmt: skip
    report = sub.add_parser(
        "report", help="write the report of a run (HTML, Markdown, CSV, Excel, PDF, PNG)"
    )
    report.add_argument("run_id", metavar="RUN_ID", help=RUN_ID_HELP)
    _results_option(report)
    _output_option(report)
    report.add_argument("--format", choices=FORMATS, help="format when -o has no extension")
    report.add_argument("--charts", metavar="DIR",
                        help="also write every chart as DIR/NAME.svg and DIR/NAME.png")  # fmt: skip
    compare = sub.add_parser("compare", help="runs or scenarios side by side, with deltas")
    compare.add_argument(
        "scenarios",
        nargs="+",
        metavar="RUN[:SCENARIO]",
        help=f"RUN, RUN:hN (its points on N hosts), RUN:C3 (its plan scenario C3) or "
        f"RUN:LABEL; RUN may be {LATEST}",
    )
    compare.add_argument("--baseline", metavar="LABEL", help="default: the first scenario")
    _results_option(compare)
    _output_option(compare)
    compare.add_argument("--format", choices=FORMATS, help="format when -o has no extension")
    compare.add_argument(
        "--charts", metavar="DIR", help="also write every chart as DIR/NAME.svg and DIR/NAME.png"
    )
    compare.add_argument("--align", choices=("start", "event"), default="start",
                         help="the runs' time series overlaid from each run's start (default) "
                         "or from its first event (a failover lined up across runs)")  # fmt: skip
    from arraybench.importer.registry import described  # the formats, listed once

    imp = sub.add_parser(
        "import", help=f"existing results ({described()}) into a run, to report and compare"
    )
    imp.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (recursive)")
    imp.add_argument("--name", default="imported", help="the run's name (default: imported)")
    imp.add_argument(
        "--pattern",
        metavar="REGEX",
        help="named groups: workload, bs, rw, workers, threads, iodepth, devices, hosts, "
        "scenario, label_<name>, read from file names (RE2 syntax, matched in linear time), "
        "e.g. 'BS(?P<bs>\\w+)-DeviceCount(?P<devices>\\d+)'",
    )
    _results_option(imp)
    return parser  # fmt: skip


def _check_scale(scale: float) -> None:
    if not scale > 0:
        raise PlanError(f"--scale {scale:g}: the factor must be positive", "e.g. --scale 0.2")


def _load(args: argparse.Namespace, results: Path) -> Plan:
    """The plan as the user asked: template or file, --set, --only, --target, --scale."""
    from arraybench.plan import catalog
    from arraybench.plan.expand import scale_plan, select, with_targets
    from arraybench.run.plan_values import check_plan_values
    from arraybench.run.setup import scratch_path

    _check_scale(args.scale)
    repeat = [f"repeat={args.repeat}"] if getattr(args, "repeat", None) is not None else []
    plan = catalog.resolve(args.plan or catalog.DEFAULT_TEMPLATE, [*args.overrides, *repeat])
    plan = select(plan, args.only)
    plan = with_targets(plan, args.target, scratch_path(results), os.path.exists)
    check_plan_values(plan)  # before anything runs: values fio, ssh or a host would misread
    return scale_plan(plan, args.scale)


def _latest(store: Store, results: str) -> str:
    runs = store.list_runs()
    if not runs:
        raise StoreError(f"{LATEST}: no runs in {results} yet", "start one: arraybench run quick")
    return max(runs, key=lambda row: (row[0].started, row[0].id))[0].id


def _run_id(store: Store, given: str, results: str) -> str:
    """A run id as typed: `latest` is the newest run of the results directory."""
    return _latest(store, results) if given == LATEST else given


def _scenario_spec(store: Store, spec: str, results: str) -> str:
    """compare's RUN[:SCENARIO] with `latest` as RUN."""
    run_id, colon, rest = spec.partition(":")
    return _run_id(store, run_id, results) + colon + rest


def cmd_run(args: argparse.Namespace) -> int:
    if args.report:
        console.print_note("--report is the old spelling of -o/--output")
    outputs = [Path(p) for p in [*args.output, *args.report]]
    for path in outputs:  # an unknown report format is said before the campaign, not after it
        format_for(path, None)
    if args.serve:  # a refused --serve address too, before the store is made
        from arraybench.live.server import parse_serve

        parse_serve(args.serve)
    results = Path(args.results)
    store = Store(results)
    try:  # closed on return: the run's lock is not kept by a library caller's process
        return _run_campaign(args, store, results, outputs)
    finally:
        store.close()


def _run_campaign(
    args: argparse.Namespace, store: Store, results: Path, outputs: list[Path]
) -> int:
    from arraybench.live.session import LiveSession
    from arraybench.report.assemble import report_for_run
    from arraybench.run.campaign import Campaign

    live = LiveSession(console.ProgressObserver(), args.serve, store, seconds=not args.no_live)
    if (served := live.served()) is not None:
        console.out.print(served, markup=False, soft_wrap=True)
    observer = live.observer
    campaign = Campaign(store, results, observer)
    campaign.interactive = sys.stdin.isatty() and sys.stdout.isatty()  # else prompts assumed
    ended = "failed"
    try:
        if args.resume:
            given = args.plan or args.target or args.scale != 1.0 or args.overrides
            if given or args.only or args.repeat is not None:
                raise PlanError(
                    f"--resume {args.resume} continues that run with its own plan and targets",
                    "drop the plan, --target, --scale, --set, --repeat and --only arguments",
                )
            result = campaign.resume(_run_id(store, args.resume, args.results))
        else:
            plan = _load(args, results)
            if args.allow_destroy:
                merged = [*plan.allow_destroy, *args.allow_destroy]
                plan = plan.model_copy(update={"allow_destroy": merged})
            result = campaign.start(plan, args.scale)
        ended = "complete"
    except KeyboardInterrupt as exc:
        ended = "interrupted"
        observer.stop()
        if campaign.run_id is None:
            console.print_error(f"{_interruption(exc)} before the run was created; nothing to "
                                "resume, start it again")  # fmt: skip
        else:
            console.print_error(
                f"{_interruption(exc)}; run {campaign.run_id} is marked interrupted, its completed "
                f"points are saved. Continue with `arraybench run --resume {campaign.run_id} "
                f"--results {results}`"
            )
        return _interrupted_exit(exc)
    finally:
        observer.stop()
        live.close(ended)
    run = store.get_run(result.run_id)
    try:
        model = report_for_run(store, run.id)
        console.print_model(model)
        _write(model, outputs or [Path(run.folder) / "report.html"], None)
    except KeyboardInterrupt as exc:  # the run is stored whole: only its report is missing
        console.print_error(f"{_interruption(exc)} while the report was written; run {run.id} "
                            f"is complete: `arraybench report {run.id} --results {results}` "
                            "writes it")  # fmt: skip
        return _interrupted_exit(exc)
    return verdict_exit(model)


def verdict_exit(model: ReportModel) -> int:
    """EXIT_NOT_ACCEPTED when any acceptance criterion did not pass (FAIL or NO DATA)."""
    verdicts = [row[1] for table in model.verdicts for row in table.rows]
    return EXIT_NOT_ACCEPTED if any(v != "PASS" for v in verdicts) else 0


def _write(model: ReportModel, paths: list[Path], fmt: str | None) -> None:
    from arraybench.report.render.export import write_report

    for path in paths:
        kind = format_for(path, fmt)
        write_report(model, path, kind)
        label = {"md": "Markdown", "xlsx": "Excel"}.get(kind, kind.upper())
        console.out.print(console.shown(f"{label} report: {path.resolve()}"))


def cmd_plan_check(args: argparse.Namespace) -> int:
    from arraybench.engines.fio.jobfile import render_jobfile
    from arraybench.engines.registry import engine_for
    from arraybench.events.tuning import change_lines, plan_changes
    from arraybench.plan.expand import check_resolved, expand, host_point, round_points
    from arraybench.run.fleet import host_spec
    from arraybench.run.outline import plan_outline, target_facts
    from arraybench.run.setup import scratch_path

    results = Path(args.results)
    plan = _load(args, results)
    if args.allow_destroy:
        plan = plan.model_copy(update={"allow_destroy": [*plan.allow_destroy,
                                                         *args.allow_destroy]})  # fmt: skip
    check_resolved(plan)
    tuning = change_lines(plan_changes(plan, host_spec))  # a value the device refuses stops here
    # the verdict `run` gives: a target it would refuse is refused here too
    facts = target_facts(plan, scratch_path(results))
    report = plan_outline(plan, facts)
    console.print_outline(plan, report, facts)
    points = expand(plan)
    for line in tuning:  # restored after the run
        console.out.print(line, markup=False)
    console.out.print("points:" if points else "no points outside the rounds")
    for point in points:
        console.out.print(f"  {point.seq:3d}  {point.key:32s} {point.expected_seconds:6.0f}s")
    if plan.rounds:
        per_round = round_points(plan, 1)
        console.out.print(f"each SNIA round ({plan.rounds.window} to {plan.rounds.max}):")
        for point in per_round:
            console.out.print(f"  {point.seq:3d}  {point.key:32s} {point.expected_seconds:6.0f}s")
        points = points + per_round
    every = [*plan.targets, *(t for h in plan.hosts for t in h.targets)]
    sizes = {t.path: t.size or facts.blocks.get(t.path, 0) for t in every}
    hosts = {h.name: h for h in plan.hosts}
    shown = points if args.all_jobs else _first_of_each_workload(points)
    for point in shown:
        first = point.level.hosts[0] if point.level.hosts else None
        if first is None:
            console.out.rule(f"job file of {point.key}")
            job = engine_for(plan.engine).point_job(point, sizes)  # the plan's engine's
            console.out.print(job, markup=False)
        else:  # each host runs its own job file on its own targets: the first one's shown
            console.out.rule(f"job file of {point.key} on {first}")
            console.out.print(render_jobfile(host_point(point, hosts[first]), sizes), markup=False)
    return 0


def _first_of_each_workload(points: Sequence[Point]) -> list[Point]:
    seen: set[str] = set()
    chosen = []
    for point in points:
        name = point.workload.name
        if name not in seen:
            seen.add(name)
            chosen.append(point)
    return chosen


def cmd_plan_schema(args: argparse.Namespace) -> int:
    from arraybench.plan.reference import plan_reference
    from arraybench.plan.schema import plan_schema

    if args.markdown:
        console.out.file.write(plan_reference())
    else:
        console.out.file.write(json.dumps(plan_schema(), indent=2, ensure_ascii=False) + "\n")
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    return cmd_plan_schema(args) if args.plan_command == "schema" else cmd_plan_check(args)


def cmd_hosts_check(args: argparse.Namespace) -> int:
    from arraybench.engines.fio.runner import fio_binary, fio_version
    from arraybench.hosts import NO_AUTH_WARNING, check_hosts
    from arraybench.plan import catalog
    from arraybench.run.fleet import host_spec, host_targets, target_safety
    from arraybench.run.plan_values import check_plan_values

    plan = catalog.resolve(args.plan, args.overrides)
    check_plan_values(plan)
    if not plan.hosts:
        raise PlanError(f"{args.plan}: the plan declares no hosts", "add a `hosts:` list")
    fio = fio_binary()
    specs = [host_spec(h) for h in plan.hosts]
    checks = check_hosts(specs, fio_version(fio), host_targets(plan), binary=fio,
                         safety=target_safety(plan))  # fmt: skip
    table = console.Table(title=f"hosts of {plan.name}")
    for column in ("host", "address", "reachable", "fio", "clock offset", "problems"):
        table.add_column(column)
    for spec, c in zip(specs, checks, strict=True):
        offset = "–" if c.clock_offset_ms is None else (
            f"{c.clock_offset_ms:+.1f} ms ± {c.clock_uncertainty_ms or 0:.1f}")  # fmt: skip
        table.add_row(c.name, spec.endpoint, "yes" if c.reachable else "NO",
                      c.fio_version or "–", offset, str(len(c.problems)))  # fmt: skip
    console.print_table(table)
    for c in checks:
        for problem in c.problems:
            console.out.print(problem)
    console.err.print(console.styled(("note:", "yellow"), f" {' '.join(NO_AUTH_WARNING.split())}"))
    return 0 if all(c.ok for c in checks) else 1


def cmd_revert(args: argparse.Namespace) -> int:
    """Undo what killed runs left in place. Each journal entry refused (a hand-edited or
    damaged journal) or not undone gets its own line and stays journaled; the others are
    undone regardless. Exit 1 when anything is left in place, else 0."""
    from arraybench.events.tuning import revert_all
    from arraybench.run.injections import plan_hosts, revert_leftovers

    results = Path(args.results)
    store = Store(results, create=False) if (results / DB_NAME).is_file() else None
    tuning = revert_all(results, plan_hosts(store))
    done, problems = tuning.done, tuning.problems
    if store is not None:  # event injections journaled in the store
        run_id = _run_id(store, args.run_id, args.results) if args.run_id else None
        events = revert_leftovers(store, run_id)
        done, problems = done + events.done, problems + events.problems
        for other, pid in events.found.running.items():
            console.print_note(f"run {other} is running (pid {pid}): its events are reverted "
                               "when it ends; stop it first to revert them here")  # fmt: skip
    for line in done or ([] if problems else [f"nothing to revert in {args.results}"]):
        console.out.print(console.one_line(line), markup=False)
    for line in problems:
        console.print_error(line)
    if problems:  # a run refuses to start while any is left: say how to let it go
        console.print_note(
            "what was not undone stays journaled (and a new run waits for it): undo it by hand, "
            "then `arraybench revert` again; or, once it is undone, drop the entry: a "
            "host-tuning journal's line from its file, a journal entry N with "
            f"`sqlite3 {results / DB_NAME} \"UPDATE injections SET state = 'reverted' "
            'WHERE id = N"`'
        )
    return 1 if problems else 0


def cmd_attach(args: argparse.Namespace) -> int:
    store = Store(Path(args.results), create=False)
    try:
        return _attach(store, args)
    finally:
        store.close()


def _attach(store: Store, args: argparse.Namespace) -> int:
    """Everything read and checked before the one write: a refused attach stores nothing."""
    from arraybench.monitor.arrayside import parse_map, read_csv
    from arraybench.report.sections.arrayside import point_agreements

    run = store.get_run(_run_id(store, args.run_id, args.results))
    columns = parse_map(args.map)
    samples = read_csv(Path(args.file), columns, args.offset)
    store.add_finding(run.id, ARRAY_SERIES.new({
        "file": str(args.file), "map": columns, "offset_s": args.offset,
        "samples": [[s.t, s.values] for s in samples]}))  # fmt: skip
    pairs = point_agreements(store, run.id, store.points(run.id))
    matched = [(p, a) for p, a in pairs if a is not None]
    console.out.print(
        f"attached {len(samples)} samples from {args.file} to run {run.id}; "
        f"{len(matched)} of {len(pairs)} points have array samples",
        markup=False,
    )
    for p, a in matched:
        verdict = "DISAGREE" if a.flagged else "agree"
        console.out.print(f"  {p.key}: fio {a.fio_iops:,.0f} IOPS, array {a.array_iops:,.0f} "
                          f"({a.diff_pct:+.1f} %) {verdict}", markup=False)  # fmt: skip
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    from arraybench.live.watch import follow

    store = Store(Path(args.results), create=False)
    run = store.get_run(_run_id(store, args.run_id, args.results))
    console.out.print(f"watching run {run.id} in {run.folder} (Ctrl-C stops watching, not the run)",
                      markup=False)  # fmt: skip
    running = lambda: store.get_run(run.id).status == "running"  # noqa: E731
    try:
        last = console.watch_view(follow(Path(run.folder), running))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    ended = last["state"] if last else store.get_run(run.id).status
    console.out.print(f"run {run.id}: {ended}", markup=False)
    return 0 if ended == "complete" else 1


def cmd_templates(_: argparse.Namespace) -> int:
    from arraybench.plan import catalog

    names = catalog.template_names()
    lines = [(n, " ".join(catalog.load_template(n).description.split())) for n in names]
    console.print_wrapped(lines, max(len(n) for n in names) + 1)
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    store = Store(Path(args.results), create=False)
    rows = store.list_runs()
    if args.format == "json":
        data = [asdict(run) | {"points_done": done} for run, done in rows]
        print(json.dumps(data, indent=2))
        return 0
    table = console.Table(title=f"runs in {args.results}", **console.narrow_box())
    for column in ("run id", "plan", "scenario", "status", "points", "started"):
        table.add_column(column)
    for run, done in rows:
        status = f"{run.status} (damaged)" if run.damaged else run.status
        table.add_row(run.id, run.plan_name, run.scenario, status,
                      _points_text(run, done),
                      run.started[:16].replace("T", " "))  # fmt: skip
    console.print_table(table)
    for run, _ in rows:  # listed all the same: the user finds which one to repair or delete
        if run.damaged:
            console.print_note(f"run {run.id}: stored {', '.join(run.damaged)} cannot be read "
                               "(the store was edited or damaged)")  # fmt: skip
    return 0


def _points_text(run: RunRecord, done: int) -> str:
    """done/total, the total as known: a complete run needed what it ran (SNIA rounds steady
    early, adaptive levels skipped); runs of older versions did not count special tests."""
    total = done if run.status == "complete" else max(done, run.total_points)
    return f"{done}/{total}"


def _point_dicts(
    points: Sequence[PointRecord], flags: dict[int, list[Flag]]
) -> list[dict[str, object]]:

    names = [f.name for f in fields(PointRecord) if f.name not in ("metrics", "identity")]
    graded = {i: [{**f.as_dict(), "grade": f.grade} for f in found] for i, found in flags.items()}
    return [{name: getattr(p, name) for name in names} | p.metrics
            | {"flags": graded.get(p.id, [])} for p in points]  # fmt: skip


def cmd_show(args: argparse.Namespace) -> int:
    from arraybench.analysis.repeats import collapse, point_spreads
    from arraybench.analysis.validity import KIND, flags_by_point
    from arraybench.report.sections.scenarios import impact_tables, scenario_labels, scenario_order
    from arraybench.report.sections.timelines import event_lines

    store = Store(Path(args.results), create=False)
    run = store.get_run(_run_id(store, args.run_id, args.results))
    points = store.points(run.id)
    if args.format == "json":
        dicts = _point_dicts(points, flags_by_point(store.findings(run.id, KIND)))
        spreads = point_spreads(points)
        events = {f.point_id: EVENTS.of(f) for f in store.findings(run.id, EVENTS.name)}
        for p, d in zip(points, dicts, strict=True):
            d |= asdict(spreads[p.id])
            if p.id in events:  # each event's impact, on the total and on each host
                d["events"] = {k: events[p.id].get(k) for k in ("impact", "host_impact")}
        provenance = PROVENANCE.among(store.findings(run.id, PROVENANCE.name))
        integrity = _integrity_dicts(points, store.findings(run.id, INTEGRITY.name))
        from arraybench.report.sections.headlines import headline_dict, stored_headlines

        heads = stored_headlines(run, points, store.findings(run.id, KIND))
        print(json.dumps({"run": asdict(run), "points": dicts, "provenance": provenance,
                          "integrity": integrity, "headlines": {name: headline_dict(h)
                          for name, h in heads.items()}}, indent=2))  # fmt: skip
    elif args.format == "csv":  # the same CSV as `report -o x.csv`
        from arraybench.report.render.export import points_csv
        from arraybench.report.sections.points import point_row

        sys.stdout.write(points_csv([point_row(p) for p in points]) if points else "")
    else:
        _print_points_table(run.id, points)
        flagged = flags_by_point(store.findings(run.id, KIND))
        for p in points:  # why a figure may not be trusted, under the table (JSON: `flags`)
            for f in flagged.get(p.id, []):  # a remark keeps the point in the headline
                head = ("flagged:", "yellow") if f.grade == "invalidating" else ("remark:", "cyan")
                _print_hanging(f" #{p.seq} {p.key}: {f.kind}: {f.why}; {f.change}", head)
        by_id = {p.id: p for p in points}
        for found in store.findings(run.id, EVENTS.name):  # the impact tables' gist, per point
            point = by_id.get(found.point_id or 0)
            if point is not None:
                for line in event_lines(EVENTS.of(found)):
                    _print_hanging(f" #{point.seq} {point.key}: {line}")
        _print_integrity(_integrity_dicts(points, store.findings(run.id, INTEGRITY.name)))
        # plan `scenarios:`: each workload's maximum per scenario against the first (their
        # labels and headlines need the plan model, pydantic: read only when the run has
        # scenarios); the same headlines as the report's (report/headlines.py)
        if scenario_order(collapse(points)):
            from arraybench.report.sections.headlines import curve_levels, stored_headlines

            heads = stored_headlines(run, points, store.findings(run.id, KIND))
            console.print_report_tables(impact_tables(curve_levels(points), scenario_labels(run),
                                                      heads))  # fmt: skip
    return 0


SHOWN_PROBLEMS = 20  # blocks listed per host under `show` (JSON and the report list more)
SHOW_WIDTH = 100  # the lines under `show`'s table fit a 100-column terminal (or a narrower one)
HANGING_INDENT = "     "  # a long line's continuation, under its `#seq`


def _print_hanging(text: str, head: tuple[str, str] | None = None, style: str = "") -> None:
    """One long line (after a styled `head`) as a hanging paragraph: its first line at the
    margin, the rest indented, none wider than the terminal or SHOW_WIDTH columns."""
    prefix = head[0] if head else ""
    width = max(40, min(console.out.width, SHOW_WIDTH))
    lines = textwrap.wrap(prefix + text, width, subsequent_indent=HANGING_INDENT,
                          break_on_hyphens=False)  # fmt: skip
    for n, line in enumerate(lines or [prefix]):
        parts: list[tuple[str, str]] = [(line, style)]
        if head and n == 0:  # the head's own style, the rest of the line the text's
            parts = [head, (line[len(prefix) :], style)]
        console.out.print(console.styled(*parts), soft_wrap=False)


def _integrity_dicts(
    points: Sequence[PointRecord], found: Sequence[Finding]
) -> list[dict[str, typing.Any]]:
    """Each integrity check of the run (one per host on many hosts), with its bad blocks."""
    by_id = {p.id: p for p in points}
    rows: list[dict[str, typing.Any]] = []
    for f in found:
        point = by_id.get(f.point_id or 0)
        if point is None:
            continue
        counts = {k: f.data.get(k, 0) for k in ("checked", "lost", "corrupt", "unreadable")}
        rows.append({"seq": point.seq, "point": point.key, "host": f.data.get("host"),
                     "summary": f.data.get("summary", ""), **counts, "error": f.data.get("error"),
                     "problems": f.data.get("problems", [])})  # fmt: skip
    return rows


def _print_integrity(rows: list[dict[str, typing.Any]]) -> None:
    for row in rows:
        bad = row["error"] or row["lost"] or row["corrupt"] or row["unreadable"]
        line = f" #{row['seq']} {row['point']}: {row['summary']}"  # the summary names the check
        _print_hanging(line, style="red" if bad else "")
        for p in row["problems"][:SHOWN_PROBLEMS]:
            console.out.print(f"   offset {p['offset']:,}: {p['kind']} (acknowledged generation "
                              f"{p['expected_generation']})", soft_wrap=False)  # fmt: skip
        if len(row["problems"]) > SHOWN_PROBLEMS:
            console.out.print(f"   ... {len(row['problems']) - SHOWN_PROBLEMS} more: "
                              "--format json or the report lists them")  # fmt: skip


SHOW_COLUMNS = ("#", "point", "workers", "qd", "throughput", "read", "write",
                "lat mean", "p50", "p99", "p99.9", "max")  # fmt: skip
NARROW_HEADERS = {"workers": "wk", "throughput": "total"}
NARROW_DROPPED = ("read", "write", "p50", "p99.9")
RICH_TABLE_MAX_ROWS = 1000  # rich lays out about 1,000 rows a second: more are drawn directly


def _point_cells(p: PointRecord) -> list[str]:
    def lat(name: str) -> str:
        return format_latency(p.metric("total", name))

    return [
        str(p.seq), p.key, str(p.workers), str(p.iodepth),
        format_throughput(p.throughput("total"), p.unit),
        format_throughput(p.throughput("read"), p.unit),
        format_throughput(p.throughput("write"), p.unit),
        lat("lat_mean_us"), lat("lat_p50_us"), lat("lat_p99_us"), lat("lat_p999_us"),
        lat("lat_max_us"),
    ]  # fmt: skip


def _print_points_table(run_id: str, points: Sequence[PointRecord]) -> None:
    title = f"points of {run_id}"
    rows = [_point_cells(p) for p in points]
    narrow = console.narrow_box()
    # under 100 columns: the columns that answer "how fast, how slow" (--format csv has all)
    keep = [k for k, c in enumerate(SHOW_COLUMNS)
            if console.out.width >= 100 or c not in NARROW_DROPPED]  # fmt: skip
    if len(rows) > RICH_TABLE_MAX_ROWS:
        _print_plain(title, rows)
        return
    table = console.Table(title=title, **narrow)
    for k in keep:
        column = SHOW_COLUMNS[k]
        if column == "point":  # whole names; the numbers wrap at their space instead
            table.add_column(column, no_wrap=True)
        else:
            table.add_column(NARROW_HEADERS.get(column, column) if narrow else column,
                             justify="right")  # fmt: skip
    for row in rows:
        table.add_row(*(row[k] for k in keep))
    console.print_table(table)
    if len(keep) < len(SHOW_COLUMNS):
        console.out.print("read, write, p50, p99.9: in a wider terminal or with --format csv")


def _print_plain(title: str, rows: list[list[str]]) -> None:
    """Too many rows for rich: in one pass, boxed, or (narrow terminal) with the main columns
    and plain spacing, so that no line is wider than the terminal."""
    text = _plain_table(title, SHOW_COLUMNS, rows)
    if max(cell_len(line) for line in text.splitlines()) > console.out.width:
        keep = [k for k, c in enumerate(SHOW_COLUMNS) if c not in NARROW_DROPPED]
        columns = [SHOW_COLUMNS[k] for k in keep]
        text = _plain_table(title, columns, [[r[k] for k in keep] for r in rows], boxed=False)
    console.out.file.write(console.shown_block(text))


def _plain_table(
    title: str, columns: Sequence[str], rows: list[list[str]], boxed: bool = True
) -> str:
    """The points table in rich's heavy-head box, laid out in one pass (never cropped)."""
    widths = [max(cell_len(c), *(cell_len(r[k]) for r in rows)) for k, c in enumerate(columns)]

    def line(cells: Sequence[str], edge: str) -> str:
        text = []
        for k, (cell, width) in enumerate(zip(cells, widths, strict=True)):
            pad = " " * (width - cell_len(cell))
            text.append(cell + pad if k == 1 else pad + cell)  # the point key is left-aligned
        if not edge:
            return "  ".join(text) + "\n"
        return f"{edge} " + f" {edge} ".join(text) + f" {edge}\n"

    if not boxed:  # two spaces between columns, one rule under the header
        plain = [line(columns, "").strip("\n"), "  ".join("─" * w for w in widths)]
        plain += [line(r, "").strip("\n") for r in rows]
        return "\n".join([title, *(text.rstrip() for text in plain)]) + "\n"
    spans = [w + 2 for w in widths]
    head = rich.box.HEAVY_HEAD
    parts = [title + "\n", head.get_top(spans) + "\n", line(columns, head.head_vertical),
             head.get_row(spans, "head") + "\n"]  # fmt: skip
    parts += [line(r, head.mid_vertical) for r in rows]
    parts.append(head.get_bottom(spans) + "\n")
    return "".join(parts)


def cmd_report(args: argparse.Namespace) -> int:
    from arraybench.report.assemble import report_for_run

    store = Store(Path(args.results), create=False)
    run = store.get_run(_run_id(store, args.run_id, args.results))
    default = Path(run.folder) / f"report.{args.format or 'html'}"
    paths = [Path(p) for p in args.output] or [default]
    for path in paths:
        format_for(path, args.format)  # a bad extension is said before anything is printed
    model = report_for_run(store, run.id)
    if args.charts:  # the Markdown report links to them
        model = replace(model, chart_dir=str(Path(args.charts).resolve()))
    console.print_model(model)
    _write(model, paths, args.format)
    if args.charts:
        _write_charts(model, Path(args.charts))
    return 0


def _write_charts(model: ReportModel, folder: Path) -> None:
    from arraybench.report.render.chartexport import write_charts
    from arraybench.report.render.html import render_html

    written = write_charts(render_html(model, every_chart=True), folder)  # a big run's too
    count = sum(1 for p in written if p.suffix == ".svg")
    console.out.print(f"charts: {count} as SVG and PNG in {folder.resolve()}")


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
    for line in result.notes:
        console.out.print(console.styled(("note:", "dim"), f" {line}"))
    for skipped in result.skipped:
        console.out.print(
            console.styled(("skipped", "yellow"), f" {skipped.path}: {skipped.reason}")
        )
    console.out.print(console.styled(
        f"imported {len(result.points)} point(s) from {result.files_examined} file(s) into run ",
        (result.run_id, "bold"), f"; see `arraybench show {result.run_id} --results "
        f"{args.results}` and `arraybench report {result.run_id}`"))  # fmt: skip
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from arraybench.report.compare import compare, load_scenario
    from arraybench.report.sections.runseries import RunPoints, run_overlays

    store = Store(Path(args.results), create=False)
    for path in args.output:
        format_for(Path(path), args.format)
    specs = [_scenario_spec(store, spec, args.results) for spec in args.scenarios]
    scenarios = [load_scenario(store, spec) for spec in specs]
    model = compare(scenarios, args.baseline)
    runs = [RunPoints(s.label, s.run.id, s.points) for s in scenarios]
    model.figures += run_overlays(store, runs, args.align)  # per-second throughput overlaid
    if args.charts:  # the Markdown report links to them
        model = replace(model, chart_dir=str(Path(args.charts).resolve()))
    console.print_model(replace(model, notes=[]))
    for note in model.notes:  # a note may be longer than a terminal line: wrapped, indented
        _print_hanging(f" {note}", ("note:", "yellow"))
    if args.output:
        _write(model, [Path(p) for p in args.output], args.format)
    if args.charts:
        _write_charts(model, Path(args.charts))
    return 0


COMMANDS = {
    "run": cmd_run,
    "templates": cmd_templates,
    "runs": cmd_runs,
    "show": cmd_show,
    "report": cmd_report,
    "compare": cmd_compare,
    "import": cmd_import,
    "revert": cmd_revert,
    "attach": cmd_attach,
    "watch": cmd_watch,
}


def _interruption(exc: KeyboardInterrupt) -> str:
    if isinstance(exc, Terminated):
        return f"interrupted by {signal.Signals(exc.signum).name}"
    return "interrupted"


def _interrupted_exit(exc: KeyboardInterrupt) -> int:
    """130 for Ctrl-C, 128 + N for signal N (143 SIGTERM, 129 SIGHUP), as shells report."""
    return 128 + exc.signum if isinstance(exc, Terminated) else EXIT_INTERRUPTED


OS_ERRORS: dict[int, tuple[str, str, int]] = {  # errno -> what it means, what to do, exit code
    errno.EROFS: ("the filesystem is read-only", "choose a path on a writable filesystem", 2),
    errno.ENOSPC: ("the filesystem is full", "free space there or choose another path", 1),
    errno.EDQUOT: ("the disk quota is exceeded", "free space there or choose another path", 1),
    errno.EIO: ("the disk failed (I/O error)", "check the disk (dmesg) or choose another path", 1),
    errno.ENAMETOOLONG: ("a name in the path is too long",
                         "use a shorter path (or plan, workload or run name)", 2),
    errno.ENOTDIR: ("a part of the path is a file, not a directory",
                    "choose a path under a directory", 2),
    errno.EISDIR: ("it is a directory", "give a file name, e.g. DIR/report.html", 2),
    errno.EEXIST: ("it exists and is not a directory",  # mkdir(exist_ok=True) on a file
                   "choose a path under a directory", 2),
    errno.EACCES: ("permission denied", "choose a path you may write, or get the rights", 2),
    errno.EPERM: ("operation not permitted", "choose a path you may write, or get the rights", 2),
    errno.ENOENT: ("no such file or directory", "check the path", 2),
}  # fmt: skip


def _written_paths(args: argparse.Namespace) -> str:
    """Where the command writes: named when a failed write() did not say which file."""
    paths = [getattr(args, "results", None), getattr(args, "report", None),
             *(getattr(args, "output", None) or [])]  # fmt: skip
    return "writing " + " or ".join(str(p) for p in paths if p) if any(paths) else "arraybench"


def os_error_line(exc: OSError, args: argparse.Namespace) -> tuple[str, int]:
    """An OSError at the edge -> one line naming the path and what to do, and an exit code."""
    what, hint, code = OS_ERRORS.get(exc.errno or 0, (exc.strerror or str(exc), "", 1))
    where = exc.filename if exc.filename is not None else _written_paths(args)
    detail = f" ({exc.strerror})" if exc.strerror and exc.strerror.lower() not in what else ""
    return f"{where}: {what}{detail}" + (f"; {hint}" if hint else ""), code


def _last_resort(
    exc: sqlite3.Error | OSError | RecursionError | OverflowError, args: argparse.Namespace
) -> tuple[str, int]:
    """Failures no layer below could name better, each still one line and an exit code."""
    if isinstance(exc, sqlite3.Error):
        mapped = store_error(exc, Path(getattr(args, "results", DEFAULT_RESULTS)) / DB_NAME)
        return mapped.one_line(), mapped.exit_code
    if isinstance(exc, OSError):
        return os_error_line(exc, args)
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to read; flatten the plan or file", 2
    return f"a number is too large ({exc}); use a smaller value", 2


def _dispatch(handler: typing.Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    try:
        return handler(args)
    except ArraybenchError as exc:
        console.print_error(exc.one_line())
        return exc.exit_code
    except KeyboardInterrupt as exc:
        console.print_error(_interruption(exc))
        return _interrupted_exit(exc)
    except BrokenPipeError:
        return 0
    except (sqlite3.Error, OSError, RecursionError, OverflowError) as exc:
        line, code = _last_resort(exc, args)
        console.print_error(line)
        return code


OUT_OF_MEMORY = "out of memory: the input is too large for this machine; use a smaller input"


def _escaping_streams() -> None:
    """A path with a byte that is not UTF-8 reaches a table or a message as a surrogate
    escape: printed as `\\udcNN`, never a UnicodeEncodeError (console.shown escapes the ones
    it sees as `\\xNN`; this is for the rest)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    _escaping_streams()
    args = _parser().parse_args(argv)
    handler = {"plan": cmd_plan, "hosts": cmd_hosts_check, **COMMANDS}[args.command]
    restore = interrupts.install()
    code: int | None = None
    try:
        code = _dispatch(handler, args)
    except MemoryError:
        pass  # said below: once out of this block, the frames holding the input are freed
    except KeyboardInterrupt as exc:  # a second signal while the first one's line was said
        code = _interrupted_exit(exc)
    finally:
        restore()
    if code is None:
        console.print_error(OUT_OF_MEMORY)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
