"""Read mdtest's standard output (IOR's metadata benchmark) into fio's records.

Each `SUMMARY rate` table (one per task count: mdtest's -f/-l/-s ladder prints several) gives
one document per operation with a rate (a row of 0.000 all along is a phase that did not
run): one job whose IOPS is the table's Mean, ops/s of all tasks together, as mdtest printed
it; its items as I/Os; Min, Max and Std Dev over the iterations among the job's options.
numjobs = tasks per node, hosts = nodes (`... launched with N total task(s) on M node(s)`).
The reading is the engine's own (`engines/mdtest/summary.py`): a run's stored figures and an
import of the same output are the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable

from arraybench.engines.mdtest.results import summary_document
from arraybench.engines.mdtest.summary import looks_like_mdtest, parse_mdtest
from arraybench.engines.measurement import EngineDocument
from arraybench.importer.format import Format, Sniffed
from arraybench.importer.lines import read_lines

TOOL = "mdtest"


def parse_mdtest_output(lines: Iterable[str], source: str = "") -> list[EngineDocument]:
    """One document per operation with a rate, per SUMMARY rate table, in the file's order."""
    docs = []
    for summary in parse_mdtest(lines, source or "mdtest output"):
        for rate in summary.rates:
            if rate.mean > 0 or rate.max > 0:
                docs.append(summary_document(summary, ops=(rate.op,)))
    return docs


def _read_file(sniffed: Sniffed) -> list[EngineDocument]:
    return read_lines(sniffed.path, parse_mdtest_output)


FORMAT = Format(
    name=TOOL,
    tool=TOOL,
    label="mdtest",
    what="text output",
    how="its standard output",
    detect=lambda s: looks_like_mdtest(s.head),
    read=_read_file,
    hosts_in_options=True,
)
