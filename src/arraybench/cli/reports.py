"""`report` and `compare`: a run's report, and runs or scenarios side by side."""

from __future__ import annotations

import argparse
import typing
from dataclasses import replace
from pathlib import Path

from arraybench import console
from arraybench.cli.common import LATEST, RUN_ID_HELP, command, output_option, results_option
from arraybench.cli.common import run_id, write
from arraybench.report.export import FORMATS, format_for
from arraybench.store.db import Store

if typing.TYPE_CHECKING:
    from arraybench.report.model import ReportModel

CHARTS = "also write every chart as DIR/NAME.svg and DIR/NAME.png"


# fmt: off
def add_report(sub: typing.Any) -> None:
    p = command(sub, "report", cmd_report,
                help="write the report of a run (HTML, Markdown, CSV, Excel, PDF, PNG)")
    p.add_argument("run_id", metavar="RUN_ID", help=RUN_ID_HELP)
    results_option(p)
    output_option(p)
    p.add_argument("--format", choices=FORMATS, help="format when -o has no extension")
    p.add_argument("--charts", metavar="DIR", help=CHARTS)


def add_compare(sub: typing.Any) -> None:
    p = command(sub, "compare", cmd_compare, help="runs or scenarios side by side, with deltas")
    p.add_argument("scenarios", nargs="+", metavar="RUN[:SCENARIO]", help="RUN, RUN:hN (its "
                   "points on N hosts), RUN:C3 (its plan scenario C3) or RUN:LABEL; RUN may be "
                   f"{LATEST}")
    p.add_argument("--baseline", metavar="LABEL", help="default: the first scenario")
    results_option(p)
    output_option(p)
    p.add_argument("--format", choices=FORMATS, help="format when -o has no extension")
    p.add_argument("--charts", metavar="DIR", help=CHARTS)
    p.add_argument("--align", choices=("start", "event"), default="start",
                   help="the runs' time series overlaid from each run's start (default) or from "
                   "its first event (a failover lined up across runs)")
# fmt: on


def cmd_report(args: argparse.Namespace) -> int:
    from arraybench.report.assemble import report_for_run

    store = Store(Path(args.results), create=False)
    run = store.get_run(run_id(store, args.run_id, args.results))
    paths = [Path(p) for p in args.output] or [Path(run.folder) / f"report.{args.format or 'html'}"]
    for path in paths:
        format_for(path, args.format)  # a bad extension is said before anything is printed
    model = _with_charts(report_for_run(store, run.id), args.charts)
    console.print_model(model)
    _write(model, paths, args)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from arraybench.report.compare import compare, load_scenario
    from arraybench.report.runseries import RunPoints, run_overlays

    store = Store(Path(args.results), create=False)
    for path in args.output:
        format_for(Path(path), args.format)
    specs = [(run_id(store, r, args.results), c, s) for r, c, s in
             (spec.partition(":") for spec in args.scenarios)]  # fmt: skip
    scenarios = [load_scenario(store, "".join(spec)) for spec in specs]
    model = compare(scenarios, args.baseline)
    runs = [RunPoints(s.label, s.run.id, s.points) for s in scenarios]
    model.figures += run_overlays(store, runs, args.align)  # per-second throughput overlaid
    model = _with_charts(model, args.charts)
    console.print_model(replace(model, notes=[]))
    console.print_hanging_notes(model.notes)  # a note may be longer than a line: indented
    _write(model, [Path(p) for p in args.output], args)
    return 0


def _with_charts(model: ReportModel, charts: str | None) -> ReportModel:
    """The Markdown report links to the charts' files."""
    return replace(model, chart_dir=str(Path(charts).resolve())) if charts else model


def _write(model: ReportModel, paths: list[Path], args: argparse.Namespace) -> None:
    write(model, paths, args.format)
    if args.charts:
        from arraybench.report.chartexport import write_charts
        from arraybench.report.html import render_html

        written = write_charts(render_html(model), Path(args.charts))
        count = sum(1 for p in written if p.suffix == ".svg")
        console.out.print(f"charts: {count} as SVG and PNG in {Path(args.charts).resolve()}")
