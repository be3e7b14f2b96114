"""`import`: existing results of fio and other tools into a run, to report and compare."""

from __future__ import annotations

import argparse
import typing
from pathlib import Path

from arraybench import console
from arraybench.cli.common import command, results_option
from arraybench.store.db import Store

# the tools `import` reads, named in its help
TOOLS = ("fio JSON, json+, normal text, terse, logs; DiskSpd text, vdbench flatfile.html, "
         "elbencho CSV")  # fmt: skip


# fmt: off
def add_import(sub: typing.Any) -> None:
    p = command(sub, "import", cmd_import,
                help=f"existing results ({TOOLS}) into a run, to report and compare")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (recursive)")
    p.add_argument("--name", default="imported", help="the run's name (default: imported)")
    p.add_argument("--pattern", metavar="REGEX", help="named groups: workload, bs, rw, workers, "
                   "threads, iodepth, devices, hosts, scenario, label_<name>, read from file "
                   "names (RE2 syntax, matched in linear time), "
                   "e.g. 'BS(?P<bs>\\w+)-DeviceCount(?P<devices>\\d+)'")
    results_option(p)
# fmt: on


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
    console.print_import(result, args.results)
    return 0
