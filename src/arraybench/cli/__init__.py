"""The command line: `main`, what the command groups share, and the one place where an error
becomes one line and an exit code (a user's mistake 2, a machine's failure 1). The groups,
each its parser and handlers: run.py, tools.py, results.py."""

from __future__ import annotations

import argparse
import math
import os
import sqlite3
import typing
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from arraybench import __version__, console
from arraybench.errors import ArraybenchError, interruption, last_resort
from arraybench.report.export import FORMATS, format_for
from arraybench.run import interrupts
from arraybench.run.request import LATEST, stored_run_id
from arraybench.store.db import DB_NAME, RunRecord, Store, store_error

if typing.TYPE_CHECKING:
    from arraybench.report.model import ReportModel

DEFAULT_RESULTS = "arraybench-results"
RESULTS_ENV = "ARRAYBENCH_RESULTS"  # the results directory when --results is not given
RUN_ID_HELP = f"a run id from `arraybench runs`, or {LATEST}"
MAX_SCALE, MAX_REPEAT = 1000.0, 100  # MAX_REPEAT as plan.model.Repeats
EXIT_NOT_ACCEPTED = 3  # the run completed but an acceptance criterion did not pass
MANY: dict[str, typing.Any] = {"action": "append", "default": []}  # a repeatable option
OUT_OF_MEMORY = "out of memory: the input is too large for this machine; use a smaller input"
Handler = typing.Callable[[argparse.Namespace], int]


class Parser(argparse.ArgumentParser):
    """argparse with its mistakes said in one line (exit 2), like every other mistake."""

    def error(self, message: str) -> typing.NoReturn:
        console.print_error(f"{self.prog}: {message}; see `{self.prog} --help`")
        self.exit(2)


def command(sub: typing.Any, name: str, handler: Handler | None, help: str) -> Parser:
    parser: Parser = sub.add_parser(name, help=help)
    parser.set_defaults(handler=handler)
    return parser


def repeat_count(text: str) -> int:
    """--repeat: how many times each point is measured, as the plan's `repeat` allows."""
    if not (text.isdigit() and 1 <= int(text) <= MAX_REPEAT):
        raise argparse.ArgumentTypeError(f"{text!r} is not a count from 1 to {MAX_REPEAT} "
                                         "(e.g. --repeat 3)")  # fmt: skip
    return int(text)


def scale_factor(text: str) -> float:
    """--scale: a finite factor above 0 and at most MAX_SCALE (inf or nan would overflow)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= MAX_SCALE):
        raise argparse.ArgumentTypeError(f"{text!r} is not a factor above 0 and at most "
                                         f"{MAX_SCALE:g} (e.g. --scale 0.2)")  # fmt: skip
    return value


# fmt: off
def results_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", default=os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS,
                        metavar="DIR", help=f"results directory (default: ${RESULTS_ENV}, "
                        f"else ./{DEFAULT_RESULTS})")


def output_options(parser: argparse.ArgumentParser, formats: bool = False) -> None:
    """-o/--output: a report file, the same in every command; --format and --charts."""
    parser.add_argument("-o", "--output", **MANY, metavar="FILE", help="write the report to "
                        "FILE; format from the extension (.html .md .csv .xlsx .pdf .png); "
                        "repeatable")
    if formats:
        parser.add_argument("--format", choices=FORMATS, help="format when -o has no extension")
        parser.add_argument("--charts", metavar="DIR",
                            help="also write every chart as DIR/NAME.svg and DIR/NAME.png")
# fmt: on


def stored_run(args: argparse.Namespace) -> tuple[Store, RunRecord]:
    """The store of --results (none made) and the run given (`latest`: its newest)."""
    store = Store(Path(args.results), create=False)
    return store, store.get_run(stored_run_id(store, args.run_id, args.results))


def report(store: Store, run: RunRecord, paths: list[Path], fmt: str | None,
           charts: str | None) -> ReportModel:  # fmt: skip
    """A stored run's report: its tables printed, written to `paths` (default: report.FMT in
    the run's folder)."""
    from arraybench.report.assemble import report_for_run

    paths = paths or [Path(run.folder) / f"report.{fmt or 'html'}"]
    for path in paths:
        format_for(path, fmt)  # a bad extension is said before anything is printed
    model = report_for_run(store, run.id)
    console.print_model(model)
    write(model, paths, fmt, charts)
    return model


def write(model: ReportModel, paths: list[Path], fmt: str | None, charts: str | None) -> None:
    """The report in each file, and each chart as SVG and PNG in the folder `charts`."""
    from arraybench.report.export import write_report

    if charts:  # the Markdown report links to them
        model = replace(model, chart_dir=str(Path(charts).resolve()))
    for path in paths:
        write_report(model, path, kind := format_for(path, fmt))
        console.print_written(kind, path)
    if charts:
        from arraybench.report.chartexport import write_charts
        from arraybench.report.html import render_html

        console.print_charts(write_charts(render_html(model), Path(charts)), Path(charts))


def verdict_exit(model: ReportModel) -> int:
    """EXIT_NOT_ACCEPTED when any acceptance criterion did not pass (FAIL or NO DATA)."""
    verdicts = [row[1] for table in model.verdicts for row in table.rows]
    return EXIT_NOT_ACCEPTED if any(v != "PASS" for v in verdicts) else 0


def _parser() -> argparse.ArgumentParser:
    from arraybench.cli import results, run, tools

    parser = Parser(prog="arraybench", description="Storage benchmarking campaigns driven by fio.")
    parser.add_argument("--version", action="version", version=f"arraybench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (run, tools, results):  # in the order `--help` lists them
        group.add(sub)
    return parser


def _dispatch(args: argparse.Namespace) -> int:
    try:
        return int(args.handler(args))
    except ArraybenchError as exc:
        line, code = exc.one_line(), exc.exit_code
    except KeyboardInterrupt as exc:
        line, code = interruption(exc)
    except BrokenPipeError:
        return 0
    except sqlite3.Error as exc:
        mapped = store_error(exc, Path(getattr(args, "results", DEFAULT_RESULTS)) / DB_NAME)
        line, code = mapped.one_line(), mapped.exit_code
    except (OSError, RecursionError, OverflowError) as exc:
        # an OSError that names no file (a failed write()): where the command writes
        paths = [getattr(args, "results", None), getattr(args, "report", None),
                 *(getattr(args, "output", None) or [])]  # fmt: skip
        where = " or ".join(str(p) for p in paths if p)
        line, code = last_resort(exc, f"writing {where}" if where else "arraybench")
    console.print_error(line)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    console.escaping_streams()
    args = _parser().parse_args(argv)
    restore = interrupts.install()
    code: int | None = None
    try:
        code = _dispatch(args)
    except MemoryError:
        pass  # said below: once out of this block, the frames holding the input are freed
    except KeyboardInterrupt as exc:  # a second signal while the first one's line was said
        code = interruption(exc)[1]
    finally:
        restore()
    if code is None:
        console.print_error(OUT_OF_MEMORY)
        return 1
    return code
