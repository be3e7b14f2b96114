"""Import existing fio results as a run in the store, so that `show` and `report` work on them.

Accepted inputs, given as files or directories (read recursively), are the formats of
registry.py, one module each, tried in its order:

* fio JSON / json+ output (fio_json.py), including client/server ``client_stats``;
* fio's normal text output (fio_text.py), including ``fio --client`` text;
* fio's terse output, versions 2 to 5 (fio_terse.py);
* DiskSpd's text results (diskspd.py), vdbench's flatfile.html (vdbench.py) and elbencho's
  CSV result file (elbencho.py), recorded with their tool ("tool" in the import finding,
  ioengine "diskspd" / "vdbench" / "elbencho");
* fio interval logs ``<prefix>_bw|iops|lat[.N].log`` (fio_logs.py), attached as 1-second
  samples to the point whose jobs wrote them (the ``write_*_log`` option names the prefix,
  or the result file has the same name as the prefix, beside the logs); logs no result file
  names become a point of their own, rebuilt from the logged rates; histogram logs
  ``<prefix>_clat_hist.N.log`` give percentiles where the result gives none that merge.

Bounds (reading.py, lines.py, fio_json.py): a file above MAX_FILE_BYTES is refused with one
line, JSON above MAX_JSON_BYTES too (it is held whole); text is read line by line with lines
cut at MAX_LINE_CHARS, so time is linear and memory follows the results found. Figures no
run can produce (plausible.py) mark the point (an "implausible" finding) and are said.

One point per (fio invocation, group of jobs), described by describe.py. Its key is built as
a campaign's (``workload/wN-qdM``, ``-dD`` for D devices, ``-hK`` for K hosts): N is the
jobs per host, M the iodepth, and the workload is named after the job options
(``randread-8k``, ``randrw70-4k``) unless the file name pattern gives one. Totals over hosts
sum the per-host jobs, never fio's "All clients" entry (which adds up every group of every
host).

When two sources give the same workload at the same load level (the same test on two
devices, in two folders, or several runs in one file), the workload names get the first
qualifier that tells the sources apart: the scenario or labels the name pattern gave, the
ioengine, the folder, the file name, the path, the job name, or the path and the run number
(naming.py). Sources that do not overlap keep one name, so one file per load level
(fio-plot's ``randread-1-1.json``, ``randread-1-2.json`` ...) makes one curve.

Anything that cannot be imported is listed in ImportResult.skipped with one line why; only
when nothing at all can be imported is an ArraybenchError raised. A number no store can hold
(limits.py) refuses the whole import instead, with one located line. An import is read,
checked and built whole first (prepare.py `prepare_import`, writing nothing), then stored
as one transaction (store_import, storing.py): all or nothing.

This module only re-exports the public names (each loaded when first asked for).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arraybench.importer.candidate import Skipped
    from arraybench.importer.format import Format
    from arraybench.importer.pattern import LABEL_PREFIX, PATTERN_GROUPS
    from arraybench.importer.prepare import (
        ImportResult,
        PreparedImport,
        import_paths,
        prepare_import,
        store_import,
    )
    from arraybench.importer.registry import FORMATS, described

# name -> the module that owns it; loaded when first asked for, so that the CLI can read the
# registry (its help) without loading the import's store writer (pydantic, the plan model)
_OWNERS = {
    "Skipped": "candidate",
    "Format": "format",
    "LABEL_PREFIX": "pattern",
    "PATTERN_GROUPS": "pattern",
    "ImportResult": "prepare",
    "PreparedImport": "prepare",
    "import_paths": "prepare",
    "prepare_import": "prepare",
    "store_import": "prepare",
    "FORMATS": "registry",
    "described": "registry",
}
__all__ = [
    "FORMATS",
    "LABEL_PREFIX",
    "PATTERN_GROUPS",
    "Format",
    "ImportResult",
    "PreparedImport",
    "Skipped",
    "described",
    "import_paths",
    "prepare_import",
    "store_import",
]


def __getattr__(name: str) -> Any:
    owner = _OWNERS.get(name)
    if owner is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{owner}"), name)
