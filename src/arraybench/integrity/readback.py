"""The integrity read-back as a command, for a host reached over SSH.

``python -m arraybench.integrity.readback probe PATH`` prints one JSON line: the arraybench
version and what PATH is (kind and size in bytes), so the controller learns before a point that
the host can run the writer and where the verify region lies.

``python -m arraybench.integrity.readback check --path P --journal J [--direct]`` reads back
every acknowledged block (``check_region``) and prints one JSON line: the report, its problem
list cut at ``--max-problems`` (the counts stay complete), so what crosses SSH is bounded.
A check that cannot run at all prints ``{"error": "..."}`` and exits 2.

Not imported by the package (``python -m`` would find it imported already).
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from typing import Any

from arraybench import __version__
from arraybench.integrity.check import MAX_STORED_PROBLEMS, check_region
from arraybench.integrity.errors import IntegrityError
from arraybench.integrity.writer import supports_direct


def probe(path: str) -> dict[str, Any]:
    """The version of arraybench here, PATH's kind ("file", "block", "missing", "other"),
    its size in bytes (None when it has none yet) and whether O_DIRECT works there."""
    found: dict[str, Any] = {"arraybench": __version__, "path": path, "kind": "missing",
                             "size": None, "direct": supports_direct(path)}  # fmt: skip
    try:
        st = os.stat(path)
    except OSError:
        return found
    if stat.S_ISREG(st.st_mode):
        found.update(kind="file", size=st.st_size)
    elif stat.S_ISBLK(st.st_mode):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                found.update(kind="block", size=os.lseek(fd, 0, os.SEEK_END))
            finally:
                os.close(fd)
        except OSError:
            found.update(kind="block")
    else:
        found.update(kind="other")
    return found


def check(path: str, journal: str, direct: bool, max_problems: int) -> dict[str, Any]:
    direct = direct and supports_direct(path)  # a filesystem without O_DIRECT: page cache
    report = check_region(path, journal, direct=direct)
    return {"report": report.as_dict(max_problems), "summary": report.summary_line()}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m arraybench.integrity.readback",
        description="Integrity probe and read-back, as JSON lines.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    pr = sub.add_parser("probe", help="version of arraybench and the target's kind and size")
    pr.add_argument("path")
    ch = sub.add_parser("check", help="read back every acknowledged block of a journal")
    ch.add_argument("--path", required=True, help="the target the writer wrote")
    ch.add_argument("--journal", required=True)
    ch.add_argument("--direct", action="store_true", help="O_DIRECT where the target allows")
    ch.add_argument("--max-problems", type=int, default=MAX_STORED_PROBLEMS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "probe":
        print(json.dumps(probe(args.path)))
        return 0
    try:
        found = check(args.path, args.journal, args.direct, max(0, args.max_problems))
    except (IntegrityError, OSError) as exc:
        said = exc.one_line() if isinstance(exc, IntegrityError) else str(exc)
        print(json.dumps({"error": said}))
        return 2
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
