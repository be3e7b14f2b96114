"""fio's interval logs (``<prefix>_bw|iops|lat[.N].log``) and histogram logs
(``<prefix>_clat_hist.N.log``), recognised by their file name alone (`log_file`); what
becomes of them (samples, percentiles, points of their own) is log_points.py's."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from arraybench.importer.format import Format, Skip

NAME = "logs"
_LOG_RE = re.compile(r"^(?P<prefix>.+)_(?P<kind>bw|iops|lat|clat|slat)(?:\.(?P<job>\d+))?\.log$")
_HIST_RE = re.compile(r"_(?:c|s)?lat_hist(?:\.(?P<job>\d+))?\.log$")


@dataclass(frozen=True)
class Log:
    path: Path
    rel: str
    prefix: str
    kind: str
    job: int | None


def log_file(path: Path, rel: str) -> Log | None:
    """The log `path` is, by its name; None when it is no log; Skip for a log kind that is
    not imported (clat, slat)."""
    hist = _HIST_RE.search(path.name)
    if hist:
        job = hist.group("job")
        return Log(path, rel, path.name[: hist.start()], "hist", int(job) if job else None)
    match = _LOG_RE.match(path.name)
    if not match:
        return None
    if match.group("kind") not in ("bw", "iops", "lat"):
        raise Skip(f"{match.group('kind')} log: only bw, iops and lat logs are imported")
    job = match.group("job")
    return Log(path, rel, match.group("prefix"), match.group("kind"), int(job) if job else None)


def _is_log(name: str) -> bool:
    return bool(_HIST_RE.search(name) or _LOG_RE.match(name))


# read by the scan, not as documents: the registry lists it first because the file name
# decides before any content is read
FORMAT = Format(
    name=NAME,
    tool="fio",
    label="fio",
    what="logs",
    how="write_bw_log, write_iops_log, write_lat_log",
    detect=lambda s: _is_log(s.path.name),
)
