"""The command line: the parser of every command group, `main`, and the one place where an
error becomes its line and exit code (a user's mistake: 2, a machine's failure: 1)."""

from __future__ import annotations

import argparse
import contextlib
import sqlite3
import sys
from collections.abc import Sequence

from arraybench import __version__, console
from arraybench.cli import imports, reports, stored, tools
from arraybench.cli import run as runs
from arraybench.cli.common import DEFAULT_RESULTS, Handler, Parser, interrupted_exit, interruption
from arraybench.cli.run import EXIT_NOT_ACCEPTED, verdict_exit
from arraybench.errors import ArraybenchError, os_error_line
from arraybench.run import interrupts
from arraybench.store.db import DB_NAME, store_error

__all__ = ["EXIT_NOT_ACCEPTED", "main", "verdict_exit"]

# `arraybench --help` lists the commands in this order
COMMANDS = (runs.add_run, runs.add_plan, tools.add_hosts, stored.add_templates,
            tools.add_revert, tools.add_watch, tools.add_attach, stored.add_runs,
            stored.add_show, reports.add_report, reports.add_compare, imports.add_import)  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="arraybench", description="Storage benchmarking campaigns driven by fio.")
    parser.add_argument("--version", action="version", version=f"arraybench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def _written_paths(args: argparse.Namespace) -> str:
    """Where the command writes: named when a failed write() did not say which file."""
    paths = [getattr(args, "results", None), getattr(args, "report", None),
             *(getattr(args, "output", None) or [])]  # fmt: skip
    return "writing " + " or ".join(str(p) for p in paths if p) if any(paths) else "arraybench"


def _last_resort(
    exc: sqlite3.Error | OSError | RecursionError | OverflowError, args: argparse.Namespace
) -> tuple[str, int]:
    """Failures no layer below could name better, each still one line and an exit code."""
    if isinstance(exc, sqlite3.Error):
        from pathlib import Path

        mapped = store_error(exc, Path(getattr(args, "results", DEFAULT_RESULTS)) / DB_NAME)
        return mapped.one_line(), mapped.exit_code
    if isinstance(exc, OSError):
        return os_error_line(exc, _written_paths(args))
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to read; flatten the plan or file", 2
    return f"a number is too large ({exc}); use a smaller value", 2


def _dispatch(handler: Handler, args: argparse.Namespace) -> int:
    try:
        return handler(args)
    except ArraybenchError as exc:
        console.print_error(exc.one_line())
        return exc.exit_code
    except KeyboardInterrupt as exc:
        console.print_error(interruption(exc))
        return interrupted_exit(exc)
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
    restore = interrupts.install()
    code: int | None = None
    try:
        code = _dispatch(args.handler, args)
    except MemoryError:
        pass  # said below: once out of this block, the frames holding the input are freed
    except KeyboardInterrupt as exc:  # a second signal while the first one's line was said
        code = interrupted_exit(exc)
    finally:
        restore()
    if code is None:
        console.print_error(OUT_OF_MEMORY)
        return 1
    return code
