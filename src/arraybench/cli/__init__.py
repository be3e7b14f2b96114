"""The command line: `main`, what its command groups (run.py, results.py) share, the one place
where an error becomes one line and an exit code (a user's mistake 2, a machine's failure 1)."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sqlite3
import typing
from collections.abc import Sequence
from pathlib import Path

from arraybench import __version__, console
from arraybench.engines.fio.choice import chosen_fio  # `--fio`: the fio of one command
from arraybench.errors import ArraybenchError, interruption, last_resort
from arraybench.report.render.export import FORMATS
from arraybench.run import interrupts
from arraybench.run.request import LATEST, stored_run_id
from arraybench.store.db import DB_NAME, RunRecord, Store, store_error
from arraybench.system import sshmux

if typing.TYPE_CHECKING:
    from arraybench.report.model import ReportModel

DEFAULT_RESULTS = "arraybench-results"
RESULTS_ENV = "ARRAYBENCH_RESULTS"  # the results directory when --results is not given
RUN_ID_HELP = f"a run id from `arraybench runs`, or {LATEST}"
MAX_SCALE, MAX_REPEAT = 1000.0, 100  # MAX_REPEAT as plan.model.Repeats
EXIT_NOT_ACCEPTED = 3  # the run completed but an acceptance criterion did not pass
MANY: dict[str, typing.Any] = {"action": "append", "default": []}  # a repeatable option
FIO = {"metavar": "PATH", "help": "the fio to run (default: $ARRAYBENCH_FIO, else PATH's)"}
OUT_OF_MEMORY = "out of memory: the input is too large for this machine; use a smaller input"
Handler = typing.Callable[[argparse.Namespace], int | None]  # the exit code; None: 0
Arg = typing.Callable[..., argparse.Action]  # a command's add_argument


class Parser(argparse.ArgumentParser):
    """argparse with its mistakes said in one line (exit 2), like every other mistake."""

    def error(self, message: str) -> typing.NoReturn:
        console.print_error(f"{self.prog}: {message}; see `{self.prog} --help`")
        self.exit(2)


def command(sub: typing.Any, name: str, handler: Handler, help: str) -> Arg:
    """A command run by `handler`: its add_argument."""
    parser: Parser = sub.add_parser(name, help=help)
    parser.set_defaults(handler=handler)
    return parser.add_argument


def repeat_count(text: str) -> int:
    """--repeat: how many times each point is measured, as the plan's `repeat` allows."""
    if text.isdigit() and 1 <= int(text) <= MAX_REPEAT:
        return int(text)
    raise argparse.ArgumentTypeError(f"{text!r} is not a count from 1 to {MAX_REPEAT} "
                                     "(e.g. --repeat 3)")  # fmt: skip


def scale_factor(text: str) -> float:
    """--scale: a finite factor above 0 and at most MAX_SCALE (inf or nan would overflow)."""
    with contextlib.suppress(ValueError):
        if math.isfinite(value := float(text)) and 0 < value <= MAX_SCALE:
            return value
    raise argparse.ArgumentTypeError(f"{text!r} is not a factor above 0 and at most "
                                     f"{MAX_SCALE:g} (e.g. --scale 0.2)")  # fmt: skip


# fmt: off
def results_option(arg: Arg) -> None:
    arg("--results", default=os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS, metavar="DIR",
        help=f"results directory (default: ${RESULTS_ENV}, else ./{DEFAULT_RESULTS})")


def output_options(arg: Arg, formats: bool = False) -> None:
    """-o/--output: a report file, the same in every command; --format and --charts."""
    arg("-o", "--output", **MANY, metavar="FILE", help="write the report to FILE; format from "
        "the extension (.html .md .csv .xlsx .pdf .png); repeatable")
    if formats:
        arg("--format", choices=FORMATS, help="format when -o has no extension")
        arg("--charts", metavar="DIR",
            help="also write every chart as DIR/NAME.svg and DIR/NAME.png")
# fmt: on


def stored_run(args: argparse.Namespace) -> tuple[Store, RunRecord]:
    """The store of --results (none made) and the run given (`latest`: its newest)."""
    store = Store(Path(args.results), create=False)
    return store, store.get_run(stored_run_id(store, args.run_id, args.results))


def verdict_exit(model: ReportModel) -> int:
    """EXIT_NOT_ACCEPTED when any acceptance criterion did not pass (FAIL or NO DATA)."""
    return EXIT_NOT_ACCEPTED if any(r[1] != "PASS" for t in model.verdicts for r in t.rows) else 0


_PARSERS: dict[str | None, argparse.ArgumentParser] = {}


def _parser() -> argparse.ArgumentParser:
    """Built once per process for each --results default (10 ms: argparse's translations)."""
    key = os.environ.get(RESULTS_ENV)
    return _PARSERS.get(key) or _PARSERS.setdefault(key, _built_parser())


def _built_parser() -> argparse.ArgumentParser:
    from arraybench.cli import results, run

    parser = Parser(prog="arraybench", description="Storage benchmarking campaigns driven by fio.")
    parser.add_argument("--version", action="version", version=f"arraybench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (run, results):  # in the order `--help` lists them
        group.add(sub)
    return parser


def _dispatch(args: argparse.Namespace) -> int:
    try:
        with chosen_fio(getattr(args, "fio", None)), sshmux.shared_connections():
            return int(args.handler(args) or 0)
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
        given = vars(args)  # where the command writes
        written = [given.get("results"), given.get("report"), *(given.get("output") or [])]
        line, code = last_resort(exc, written)
    console.print_error(line)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    console.escaping_streams()
    args = _parser().parse_args(argv)
    restore = interrupts.install()
    try:
        return _dispatch(args)
    except MemoryError:
        pass  # said below: once out of this block, the frames holding the input are freed
    except KeyboardInterrupt as exc:  # a second signal while the first one's line was said
        return interruption(exc)[1]
    finally:
        restore()
    console.print_error(OUT_OF_MEMORY)
    return 1
