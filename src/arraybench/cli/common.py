"""What every command group shares: the parser that says a mistake in one line, the options
spelt the same everywhere, `latest` as a run id, the words for an interruption."""

from __future__ import annotations

import argparse
import math
import os
import signal
import typing
from pathlib import Path

from arraybench import console
from arraybench.errors import StoreError, Terminated
from arraybench.report.export import format_for

if typing.TYPE_CHECKING:
    from arraybench.report.model import ReportModel
    from arraybench.store.db import Store

DEFAULT_RESULTS = "arraybench-results"
RESULTS_ENV = "ARRAYBENCH_RESULTS"  # the results directory when --results is not given
LATEST = "latest"  # a run id meaning the newest run of the results directory
RUN_ID_HELP = f"a run id from `arraybench runs`, or {LATEST}"
EXIT_INTERRUPTED = 130
MAX_SCALE = 1000.0
MAX_REPEAT = 100  # as plan.model.Repeats
MANY: dict[str, typing.Any] = {"action": "append", "default": []}  # a repeatable option
Handler = typing.Callable[[argparse.Namespace], int]


class Parser(argparse.ArgumentParser):
    """argparse with its mistakes said in one line (exit 2), like every other mistake."""

    def error(self, message: str) -> typing.NoReturn:
        console.print_error(f"{self.prog}: {message}; see `{self.prog} --help`")
        self.exit(2)


def command(sub: typing.Any, name: str, handler: Handler | None, **kwargs: str) -> Parser:
    parser: Parser = sub.add_parser(name, **kwargs)
    if handler is not None:
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


def results_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", default=os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS,
                        metavar="DIR", help=f"results directory (default: ${RESULTS_ENV}, "
                        f"else ./{DEFAULT_RESULTS})")  # fmt: skip


def output_option(parser: argparse.ArgumentParser) -> None:
    """-o/--output: a report file, the same meaning in every command."""
    parser.add_argument("-o", "--output", **MANY, metavar="FILE", help="write the report to "
                        "FILE; format from the extension (.html .md .csv .xlsx .pdf .png); "
                        "repeatable")  # fmt: skip


def run_id(store: Store, given: str, results: str) -> str:
    """A run id as typed: `latest` is the newest run of the results directory."""
    if given != LATEST:
        return given
    if not (runs := store.list_runs()):
        raise StoreError(f"{LATEST}: no runs in {results} yet", "start one: arraybench run quick")
    return max(runs, key=lambda row: (row[0].started, row[0].id))[0].id


def interruption(exc: KeyboardInterrupt) -> str:
    if isinstance(exc, Terminated):
        return f"interrupted by {signal.Signals(exc.signum).name}"
    return "interrupted"


def interrupted_exit(exc: KeyboardInterrupt) -> int:
    """130 for Ctrl-C, 128 + N for signal N (143 SIGTERM, 129 SIGHUP), as shells report."""
    return 128 + exc.signum if isinstance(exc, Terminated) else EXIT_INTERRUPTED


def write(model: ReportModel, paths: list[Path], fmt: str | None) -> None:
    from arraybench.report.export import write_report

    for path in paths:
        kind = format_for(path, fmt)
        write_report(model, path, kind)
        console.print_written(kind, path)
