"""mdtest's text output read into records: its `SUMMARY rate` tables, one per task count.

mdtest 4.0.0 prints, per run (`-f/-l/-s` ladders print one block per task count):

    mdtest-4.0.0 was launched with 2 total task(s) on 1 node(s)
    2 tasks, 100 files/directories
    SUMMARY rate: (of 2 iterations)
       Operation                     Max            Min           Mean        Std Dev
       Directory creation           2468.341       1253.558       1860.949        858.982

Rates are operations per second of all tasks together, one per iteration; Max/Min/Mean/Std
Dev are over the iterations. A phase that was not asked (`-C -T -r` leaves out read) is
printed as 0.000 all along: the caller keeps the operations it asked for. `SUMMARY time`
(-P) is in whole milliseconds at best and is not read. These figures are stored as printed:
the test compares them with mdtest's own lines.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from arraybench.errors import OutputParseError

# mdtest's row labels -> the plan's operation names (tree rows: mdtest's own bookkeeping)
OPS = {
    "Directory creation": "dir-create",
    "Directory stat": "dir-stat",
    "Directory rename": "dir-rename",
    "Directory removal": "dir-delete",
    "File creation": "create",
    "File stat": "stat",
    "File read": "read",
    "File removal": "delete",
    "Tree creation": "tree-create",
    "Tree removal": "tree-delete",
}
_LAUNCHED = re.compile(r"^(mdtest-\S+) was launched with (\d+) total task\(s\) on (\d+) node")
_TASKS = re.compile(r"^(\d+) tasks?, (\d+) (?:files/directories|files|directories)\s*$")
_SUMMARY = re.compile(r"^SUMMARY rate: \(of (\d+) iterations?\)")
_ROW = re.compile(r"^\s+([A-Z][a-z]+(?: [a-z]+)*)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$")
_HINT = "is this mdtest's standard output (mdtest 3 or 4)?"


@dataclass(frozen=True)
class OpRate:
    """One row of a SUMMARY rate table: ops/s of all tasks, over the iterations."""

    op: str  # the plan's name (`create`, `dir-stat`, `tree-create`)
    label: str  # mdtest's ("File creation")
    max: float
    min: float
    mean: float
    std: float


@dataclass(frozen=True)
class MdtestSummary:
    """One task count's SUMMARY: what ran and its rates, in mdtest's row order."""

    version: str  # "mdtest-4.0.0"
    tasks: int  # all tasks, every node
    nodes: int
    items: int  # files and/or directories per phase, all tasks (mdtest's "N files")
    iterations: int
    rates: tuple[OpRate, ...]

    def rate(self, op: str) -> OpRate | None:
        return next((r for r in self.rates if r.op == op), None)


def looks_like_mdtest(text: str) -> bool:
    return any(_LAUNCHED.match(line) for line in text.splitlines()[:40])


def _number(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise OutputParseError(f"{where}: {text!r} is not a number", _HINT) from None
    if not math.isfinite(value) or value < 0:
        raise OutputParseError(f"{where}: {text!r} is not a rate", _HINT)
    return value


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.version, self.nodes = "", 1
        self.tasks = self.items = self.iterations = 0
        self.rows: list[OpRate] | None = None  # inside a SUMMARY rate table
        self.found: list[MdtestSummary] = []

    def line(self, number: int, line: str) -> None:
        if self.rows is not None and self.row(number, line):
            return
        if m := _LAUNCHED.match(line):
            self.version, self.nodes = m.group(1), int(m.group(3))
        elif m := _TASKS.match(line):
            self.tasks, self.items = int(m.group(1)), int(m.group(2))
        elif m := _SUMMARY.match(line):
            self.iterations, self.rows = int(m.group(1)), []

    def row(self, number: int, line: str) -> bool:
        """A line inside a table: True when it was the table's; else the table is closed
        (the next task count's line may follow without a blank line)."""
        stripped = line.strip()
        if stripped.startswith(("Operation", "---")) or (not stripped and not self.rows):
            return True  # the table's heading, or the blank line before it
        m = _ROW.match(line)
        if m is None:
            self.close()
            return False
        label = m.group(1)
        values = [_number(m.group(i), f"{self.source}:{number}") for i in range(2, 6)]
        assert self.rows is not None
        self.rows.append(OpRate(OPS.get(label, label.lower().replace(" ", "-")), label, *values))
        return True

    def close(self) -> None:
        if self.rows:
            if not self.tasks:
                raise OutputParseError(f"{self.source}: a SUMMARY without its 'N tasks, M files' "
                                    "line", _HINT)  # fmt: skip
            self.found.append(MdtestSummary(self.version, self.tasks, self.nodes, self.items,
                                            self.iterations, tuple(self.rows)))  # fmt: skip
        self.rows = None


def parse_mdtest(lines: Iterable[str], source: str = "mdtest output") -> list[MdtestSummary]:
    """Every SUMMARY rate table of an mdtest output, in order; OutputParseError when none."""
    reader = _Reader(source)
    for number, line in enumerate(lines, 1):
        reader.line(number, line.rstrip("\n"))
    reader.close()
    if not reader.found:
        raise OutputParseError(f"{source}: no 'SUMMARY rate' table (mdtest ended before its "
                            "results?)", _HINT)  # fmt: skip
    return reader.found


def failure_line(text: str) -> str:
    """The line that says why an mdtest run failed (mdtest's FAILED/ERROR, mpirun's own)."""
    for line in text.splitlines():
        if "FAILED" in line or "ERROR" in line or line.startswith("mpirun"):
            return line.strip()[:300]
    lines = [line.strip() for line in text.splitlines() if line.strip() and "---" not in line]
    return lines[0][:300] if lines else "no output"
