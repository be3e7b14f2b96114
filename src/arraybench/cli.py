"""The command line: parse arguments, call the library, print results, map errors to exit codes."""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, fields
from pathlib import Path

import rich.box
from rich.cells import cell_len

from arraybench import __version__, console
from arraybench.campaign import Campaign, scratch_path
from arraybench.errors import ArraybenchError, PlanError
from arraybench.fio.jobfile import render_jobfile
from arraybench.fio.runner import fio_binary, fio_version
from arraybench.hosts import NO_AUTH_WARNING, check_hosts
from arraybench.importer import import_paths
from arraybench.multihost import host_spec, host_targets, target_safety
from arraybench.plan import catalog
from arraybench.plan.expand import (
    Point,
    expand,
    round_points,
    scale_plan,
    select,
    with_targets,
)
from arraybench.plan.model import Plan
from arraybench.report.assemble import report_for_run
from arraybench.report.compare import compare, load_scenario
from arraybench.report.export import FORMATS, format_for, write_report
from arraybench.report.model import ReportModel
from arraybench.store.db import PointRecord, Store
from arraybench.units import format_duration, format_latency, format_throughput

DEFAULT_RESULTS = "arraybench-results"
EXIT_INTERRUPTED = 130
EXIT_NOT_ACCEPTED = 3  # the run completed but an acceptance criterion did not pass


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arraybench", description="Storage benchmarking campaigns driven by fio."
    )
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
    run.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR")
    run.add_argument(
        "--scale",
        type=float,
        default=1.0,
        metavar="FACTOR",
        help="multiply durations and sizes (e.g. 0.2 for a fast try)",
    )
    run.add_argument("--resume", metavar="RUN_ID", help="continue an interrupted run")
    run.add_argument(
        "--allow-destroy",
        action="append",
        default=[],
        metavar="DEVICE",
        help="consent to overwrite this exact block device",
    )
    run.add_argument(
        "-o",
        "--report",
        metavar="FILE",
        help="report path; format from the extension (.html .md .csv .xlsx .pdf .png)",
    )
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
    check.add_argument("plan")
    check.add_argument("--target", action="append", default=[], metavar="PATH")
    check.add_argument("--scale", type=float, default=1.0, metavar="FACTOR")
    check.add_argument("--all-jobs", action="store_true", help="print every point's job file")
    check.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides")
    check.add_argument("--only", action="append", default=[], metavar="GLOB")
    run.add_argument("--only", action="append", default=[], metavar="GLOB",
                     help="run only the workloads whose names match (repeatable)")  # fmt: skip

    hosts = sub.add_parser("hosts", help="many-host tools").add_subparsers(
        dest="hosts_command", required=True
    )
    hcheck = hosts.add_parser(
        "check", help="check every host of a plan: reachable, fio version, clock offset, targets"
    )
    hcheck.add_argument("plan")
    hcheck.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides")
    sub.add_parser("templates", help="list the built-in plans")
    runs = sub.add_parser("runs", help="list runs in the results directory")
    runs.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR")
    runs.add_argument("--format", choices=("table", "json"), default="table")
    show = sub.add_parser("show", help="every point of a run with its metrics")
    show.add_argument("run_id")
    show.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR")
    show.add_argument("--format", choices=("table", "json", "csv"), default="table")
    report = sub.add_parser(
        "report", help="write the report of a run (HTML, Markdown, CSV, Excel, PDF, PNG)"
    )
    report.add_argument("run_id")
    report.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR")
    report.add_argument(
        "-o",
        "--output",
        action="append",
        default=[],
        metavar="FILE",
        help="output file, format from its extension (repeatable)",
    )
    report.add_argument("--format", choices=FORMATS, help="format when -o has no extension")
    compare = sub.add_parser("compare", help="runs or scenarios side by side, with deltas")
    compare.add_argument(
        "scenarios",
        nargs="+",
        metavar="RUN[:SCENARIO]",
        help="RUN, RUN:hN (its points on N hosts) or RUN:LABEL",
    )
    compare.add_argument("--baseline", metavar="LABEL", help="default: the first scenario")
    compare.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR")
    compare.add_argument("-o", "--output", action="append", default=[], metavar="FILE")
    compare.add_argument("--format", choices=FORMATS)
    imp = sub.add_parser(
        "import",
        help="existing results (fio JSON, json+, normal text, terse, logs; DiskSpd text, "
        "vdbench flatfile.html, elbencho CSV) into a run, to report and compare",
    )
    imp.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (recursive)")
    imp.add_argument("--name", default="imported", help="the run's name (default: imported)")
    imp.add_argument(
        "--pattern",
        metavar="REGEX",
        help="named groups: workload, bs, rw, workers, threads, iodepth, devices, hosts, "
        "scenario, label_<name>, read from file names, "
        "e.g. 'BS(?P<bs>\\w+)-DeviceCount(?P<devices>\\d+)'",
    )
    imp.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR")
    return parser  # fmt: skip


def _check_scale(scale: float) -> None:
    if not scale > 0:
        raise PlanError(f"--scale {scale:g}: the factor must be positive", "e.g. --scale 0.2")


def _load(args: argparse.Namespace, results: Path) -> Plan:
    """The plan as the user asked: template or file, --set, --only, --target, --scale."""
    _check_scale(args.scale)
    plan = catalog.resolve(args.plan or catalog.DEFAULT_TEMPLATE, args.overrides)
    plan = select(plan, args.only)
    plan = with_targets(plan, args.target, scratch_path(results), os.path.exists)
    return scale_plan(plan, args.scale)


def cmd_run(args: argparse.Namespace) -> int:
    if args.report:  # an unknown report format is said before the campaign, not after it
        format_for(Path(args.report), None)
    results = Path(args.results)
    store = Store(results)
    observer = console.ProgressObserver()
    campaign = Campaign(store, results, observer)
    campaign.interactive = sys.stdin.isatty() and sys.stdout.isatty()  # else prompts assumed
    try:
        if args.resume:
            if args.plan or args.target or args.scale != 1.0 or args.overrides or args.only:
                raise PlanError(
                    f"--resume {args.resume} continues that run with its own plan and targets",
                    "drop the plan, --target, --scale, --set and --only arguments",
                )
            result = campaign.resume(args.resume)
        else:
            plan = _load(args, results)
            if args.allow_destroy:
                merged = [*plan.allow_destroy, *args.allow_destroy]
                plan = plan.model_copy(update={"allow_destroy": merged})
            result = campaign.start(plan, args.scale)
    except KeyboardInterrupt:
        observer.stop()
        console.print_error(
            "interrupted; completed points are saved. Continue with "
            f"`arraybench run --resume <RUN_ID> --results {results}` (see `arraybench runs`)"
        )
        return EXIT_INTERRUPTED
    finally:
        observer.stop()
    run = store.get_run(result.run_id)
    model = report_for_run(store, run.id)
    console.print_model(model)
    path = Path(args.report) if args.report else Path(run.folder) / "report.html"
    _write(model, [path], None)
    return verdict_exit(model)


def verdict_exit(model: ReportModel) -> int:
    """EXIT_NOT_ACCEPTED when any acceptance criterion did not pass (FAIL or NO DATA)."""
    verdicts = [row[1] for table in model.verdicts for row in table.rows]
    return EXIT_NOT_ACCEPTED if any(v != "PASS" for v in verdicts) else 0


def _write(model: ReportModel, paths: list[Path], fmt: str | None) -> None:
    for path in paths:
        kind = format_for(path, fmt)
        write_report(model, path, kind)
        label = {"md": "Markdown", "xlsx": "Excel"}.get(kind, kind.upper())
        console.out.print(f"{label} report: {path.resolve()}")


def cmd_plan_check(args: argparse.Namespace) -> int:
    plan = _load(args, Path(DEFAULT_RESULTS))
    points = expand(plan)
    sizes = {t.path: t.size or 0 for t in plan.targets}
    total = sum(p.expected_seconds + console.OVERHEAD_S for p in points)
    console.out.print(f"plan {plan.name} is valid: {len(points)} points, about "
                      f"{format_duration(total)}; targets: "
                      f"{', '.join(t.path for t in plan.targets)}")  # fmt: skip
    for point in points:
        console.out.print(f"  {point.seq:3d}  {point.key:32s} {point.expected_seconds:6.0f}s")
    if plan.rounds:
        per_round = round_points(plan, 1)
        seconds = sum(p.expected_seconds + console.OVERHEAD_S for p in per_round)
        console.out.print(
            f"and SNIA rounds of {len(per_round)} points (about {format_duration(seconds)} each) "
            f"until {plan.rounds.track} is steady over {plan.rounds.window} rounds: "
            f"{plan.rounds.window} to {plan.rounds.max} rounds"
        )
        for point in per_round:
            console.out.print(f"  {point.seq:3d}  {point.key:32s} {point.expected_seconds:6.0f}s")
        points = points + per_round
    shown = points if args.all_jobs else _first_of_each_workload(points)
    for point in shown:
        console.out.rule(f"job file of {point.key}")
        console.out.print(render_jobfile(point, sizes), markup=False)
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


def cmd_hosts_check(args: argparse.Namespace) -> int:
    plan = catalog.resolve(args.plan, args.overrides)
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
    console.out.print(table)
    for c in checks:
        for problem in c.problems:
            console.out.print(problem)
    console.err.print(f"[yellow]note:[/] {' '.join(NO_AUTH_WARNING.split())}")
    return 0 if all(c.ok for c in checks) else 1


def cmd_templates(_: argparse.Namespace) -> int:
    for name in catalog.template_names():
        plan = catalog.load_template(name)
        console.out.print(f"[bold]{name:12s}[/] {' '.join(plan.description.split())}")
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    store = Store(Path(args.results), create=False)
    rows = store.list_runs()
    if args.format == "json":
        data = [asdict(run) | {"points_done": done} for run, done in rows]
        print(json.dumps(data, indent=2))
        return 0
    table = console.Table(title=f"runs in {args.results}")
    for column in ("run id", "plan", "scenario", "status", "points", "started"):
        table.add_column(column)
    for run, done in rows:
        table.add_row(run.id, run.plan_name, run.scenario, run.status,
                      f"{done}/{run.total_points}", run.started)  # fmt: skip
    console.out.print(table)
    return 0


def _point_dicts(points: Sequence[PointRecord]) -> list[dict[str, object]]:
    names = [f.name for f in fields(PointRecord) if f.name != "metrics"]
    return [{name: getattr(p, name) for name in names} | p.metrics for p in points]


def cmd_show(args: argparse.Namespace) -> int:
    store = Store(Path(args.results), create=False)
    run = store.get_run(args.run_id)
    points = store.points(run.id)
    if args.format == "json":
        print(json.dumps({"run": asdict(run), "points": _point_dicts(points)}, indent=2))
    elif args.format == "csv":
        rows = _point_dicts(points)
        if rows:
            writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    else:
        _print_points_table(run.id, points)
    return 0


SHOW_COLUMNS = ("#", "point", "workers", "qd", "throughput", "read", "write",
                "lat mean", "p50", "p99", "p99.9", "max")  # fmt: skip
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
    if len(rows) > RICH_TABLE_MAX_ROWS:
        console.out.file.write(_plain_table(title, SHOW_COLUMNS, rows))
        return
    table = console.Table(title=title)
    for column in SHOW_COLUMNS:
        table.add_column(column, justify="right" if column != "point" else "left")
    for row in rows:
        table.add_row(*row)
    console.out.print(table)


def _plain_table(title: str, columns: Sequence[str], rows: list[list[str]]) -> str:
    """The points table in rich's heavy-head box, laid out in one pass (never cropped)."""
    widths = [max(cell_len(c), *(cell_len(r[k]) for r in rows)) for k, c in enumerate(columns)]

    def line(cells: Sequence[str], edge: str) -> str:
        text = []
        for k, (cell, width) in enumerate(zip(cells, widths, strict=True)):
            pad = " " * (width - cell_len(cell))
            text.append(cell + pad if k == 1 else pad + cell)  # the point key is left-aligned
        return f"{edge} " + f" {edge} ".join(text) + f" {edge}\n"

    spans = [w + 2 for w in widths]
    head = rich.box.HEAVY_HEAD
    parts = [title + "\n", head.get_top(spans) + "\n", line(columns, head.head_vertical),
             head.get_row(spans, "head") + "\n"]  # fmt: skip
    parts += [line(r, head.mid_vertical) for r in rows]
    parts.append(head.get_bottom(spans) + "\n")
    return "".join(parts)


def cmd_report(args: argparse.Namespace) -> int:
    store = Store(Path(args.results), create=False)
    run = store.get_run(args.run_id)
    default = Path(run.folder) / f"report.{args.format or 'html'}"
    paths = [Path(p) for p in args.output] or [default]
    for path in paths:
        format_for(path, args.format)  # a bad extension is said before anything is printed
    model = report_for_run(store, run.id)
    console.print_model(model)
    _write(model, paths, args.format)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    store = Store(Path(args.results))
    result = import_paths(store, [Path(p) for p in args.paths], run_name=args.name,
                          name_pattern=args.pattern)  # fmt: skip
    for line in result.notes:
        console.out.print(f"[dim]note:[/] {line}", highlight=False)
    for skipped in result.skipped:
        console.out.print(f"[yellow]skipped[/] {skipped.path}: {skipped.reason}", highlight=False)
    console.out.print(
        f"imported {len(result.points)} point(s) from {result.files_examined} file(s) into run "
        f"[bold]{result.run_id}[/]; see `arraybench show {result.run_id} --results "
        f"{args.results}` and `arraybench report {result.run_id}`"
    )
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    store = Store(Path(args.results), create=False)
    for path in args.output:
        format_for(Path(path), args.format)
    scenarios = [load_scenario(store, spec) for spec in args.scenarios]
    model = compare(scenarios, args.baseline)
    console.print_model(model)
    if args.output:
        _write(model, [Path(p) for p in args.output], args.format)
    return 0


COMMANDS = {
    "run": cmd_run,
    "templates": cmd_templates,
    "runs": cmd_runs,
    "show": cmd_show,
    "report": cmd_report,
    "compare": cmd_compare,
    "import": cmd_import,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handler = {"plan": cmd_plan_check, "hosts": cmd_hosts_check, **COMMANDS}[args.command]
    try:
        return handler(args)
    except ArraybenchError as exc:
        console.print_error(exc.one_line())
        return exc.exit_code
    except KeyboardInterrupt:
        console.print_error("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
