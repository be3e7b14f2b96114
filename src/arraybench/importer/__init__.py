"""Import existing fio results as a run in the store, so that `show` and `report` work on them.

Accepted inputs, given as files or directories (read recursively):

* fio JSON / json+ output (parse.py), including client/server ``client_stats``;
* fio's normal text output (textparse.py), including ``fio --client`` text;
* fio's terse output, versions 2 to 5 (terse.py);
* DiskSpd's text results (diskspd.py), vdbench's flatfile.html (vdbench.py) and elbencho's
  CSV result file (elbencho.py), recorded with their tool ("tool" in the import finding,
  ioengine "diskspd" / "vdbench" / "elbencho");
* fio interval logs ``<prefix>_bw|iops|lat[.N].log``, attached as 1-second samples to the
  point whose jobs wrote them (the ``write_*_log`` option names the prefix, or the result
  file has the same name as the prefix, beside the logs); logs no result file names become
  a point of their own, rebuilt from the logged rates; histogram logs
  ``<prefix>_clat_hist.N.log`` give percentiles where the result gives none that merge.

Bounds (reading.py): a file above MAX_FILE_BYTES is refused with one
line, JSON above MAX_JSON_BYTES too (it is held whole); text is read line by line with lines
cut at MAX_LINE_CHARS, so time is linear and memory follows the results found. Figures no
run can produce (plausible.py) mark the point (an "implausible" finding) and are said.

One point per (fio invocation, group of jobs). Its key is built as a campaign's
(``workload/wN-qdM``, ``-dD`` for D devices, ``-hK`` for K hosts): N is the jobs per host,
M the iodepth, and the workload is named after the job options (``randread-8k``,
``randrw70-4k``) unless the file name pattern gives one. Totals over hosts sum the
per-host jobs, never fio's "All clients" entry (which adds up every group of every host).

When two sources give the same workload at the same load level (the same test on two
devices, in two folders, or several runs in one file), the workload names get the first
qualifier that tells the sources apart: the scenario or labels the name pattern gave, the
ioengine, the folder, the file name, the path,
the job name, or the path and the run number. Sources that do not overlap keep one name, so
one file per load level (fio-plot's ``randread-1-1.json``, ``randread-1-2.json`` ...) makes
one curve.

Anything that cannot be imported is listed in ImportResult.skipped with one line why; only
when nothing at all can be imported is an ArraybenchError raised. A number no store can hold
(limits.py) refuses the whole import instead, with one located line. An import is read,
checked and built whole first (prepare_import, writing nothing), then stored as one
transaction (store_import, storing.py): all or nothing.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arraybench.engines.fio.logs import (
    hist_log_bins,
    job_from_logs,
    parse_hist_log,
    parse_interval_log,
    per_second,
)
from arraybench.engines.fio.plausible import implausible
from arraybench.engines.fio.results import (
    DirStats,
    FioDocument,
    IntervalSample,
    Measurement,
)
from arraybench.engines.fio.samples import full_seconds
from arraybench.errors import ArraybenchError, FioParseError
from arraybench.importer.candidate import Candidate, SeriesId, Source
from arraybench.importer.elbencho import TOOL as ELBENCHO
from arraybench.importer.grid import per_device
from arraybench.importer.limits import (
    check_level,
    number_text,
    refuse,
)
from arraybench.importer.reading import Skip, pick_docs, read_docs
from arraybench.importer.storing import Ready, ready, store_run
from arraybench.plan.types import MAX_BLOCK
from arraybench.store.db import Sample, Store
from arraybench.units import fio_size, parse_size
from arraybench.userfiles import InputFileError, not_regular, shown, shown_all
from arraybench.userregex import UserRegex, UserRegexError, compile_user_regex

PATTERN_GROUPS = ("workload", "bs", "rw", "workers", "threads", "iodepth", "devices", "hosts",
                  "scenario")  # fmt: skip
LABEL_PREFIX = "label_"  # (?P<label_array>...) sets the point's label "array"
_LOG_RE = re.compile(r"^(?P<prefix>.+)_(?P<kind>bw|iops|lat|clat|slat)(?:\.(?P<job>\d+))?\.log$")
_HIST_RE = re.compile(r"_(?:c|s)?lat_hist(?:\.(?P<job>\d+))?\.log$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_VERSION_RE = re.compile(r"fio-(\d+)\.(\d+)")
_EPOCH_MS = 10**11  # a log time above this is a Unix-epoch stamp (log_unix_epoch=1)
_LOG_OPTIONS = ("write_bw_log", "write_iops_log", "write_lat_log")
# fio rw mode -> (pattern, read percentage; None = a mix, from rwmixread)
RW_MODES: dict[str, tuple[str, int | None]] = {
    "read": ("sequential", 100), "randread": ("random", 100),
    "write": ("sequential", 0), "randwrite": ("random", 0),
    "rw": ("sequential", None), "readwrite": ("sequential", None), "randrw": ("random", None),
    "trim": ("sequential", 0), "randtrim": ("random", 0), "trimwrite": ("sequential", 0),
}  # fmt: skip


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


@dataclass(frozen=True)
class ImportResult:
    run_id: str
    points: list[str]  # point keys, in the order stored
    skipped: list[Skipped]
    notes: list[str] = field(default_factory=list)  # what was inferred or chosen, per file
    files_examined: int = 0


# --------------------------------------------------------------------------- public API


@dataclass(frozen=True)
class PreparedImport:
    """An import read, checked and built, nothing written yet (prepare_import)."""

    run_name: str
    paths: list[Path]
    points: list[Ready]
    scan: _Scan
    files_examined: int

    @property
    def description(self) -> dict[str, Any]:
        """What the run keeps of its sources (its `import.yaml` and plan text)."""
        return {"sources": [str(p) for p in self.paths], "root": str(self.scan.root),
                "points": len(self.points), "notes": self.scan.notes,
                "skipped": [f"{s.path}: {s.reason}" for s in self.scan.skipped]}  # fmt: skip


def prepare_import(
    paths: list[Path], *, run_name: str, name_pattern: str | None = None
) -> PreparedImport:
    """Read fio results under ``paths`` and build every point to store; ImportRefused (one
    located line) when a number is out of range. Writes nothing: a refusal leaves the store
    and the results folder as they were."""
    if not _NAME_RE.match(run_name):
        raise ArraybenchError(
            f"run name {run_name!r} is not usable", "use letters, digits, '.', '_' and '-'"
        )
    regex = _compile_pattern(name_pattern)
    files, skipped = _gather(paths)
    root = _root(paths)
    scan = _Scan(root, regex, skipped)
    for path in files:
        scan.add(path)
    candidates = scan.finish()
    scan.attach_logs(candidates)
    candidates += scan.log_candidates({c.key for c in candidates})
    if not candidates:
        raise _nothing_error(len(files), scan.skipped)
    points = [ready(seq, c) for seq, c in enumerate(candidates, start=1)]
    return PreparedImport(run_name, list(paths), points, scan, len(files))


def store_import(store: Store, prepared: PreparedImport) -> ImportResult:
    """Store a prepared import as one new run: one transaction, all or nothing."""
    run_id = store_run(store, prepared.run_name, prepared.points, prepared.description)
    scan = prepared.scan
    keys = [r.candidate.key for r in prepared.points]
    skipped = [Skipped(shown(s.path), shown(s.reason)) for s in scan.skipped]  # printable
    return ImportResult(run_id, keys, skipped, shown_all(scan.notes), prepared.files_examined)


def import_paths(
    store: Store, paths: list[Path], *, run_name: str, name_pattern: str | None = None
) -> ImportResult:
    """Read fio results under ``paths`` and store them as one new run named ``run_name``."""
    prepared = prepare_import(paths, run_name=run_name, name_pattern=name_pattern)
    return store_import(store, prepared)


# --------------------------------------------------------------------------- inputs


def _compile_pattern(name_pattern: str | None) -> UserRegex | None:
    if not name_pattern:
        return None
    try:
        regex = compile_user_regex(name_pattern, "name pattern")
    except UserRegexError as exc:
        raise ArraybenchError(str(exc), "e.g. 'Type(?P<rw>\\w+)-BS(?P<bs>\\w+)'") from None
    unknown = sorted(g for g in set(regex.groupindex) - set(PATTERN_GROUPS) if not _is_label(g))
    if unknown or not regex.groupindex:
        raise ArraybenchError(
            f"name pattern {regex.pattern!r}: named groups must be among "
            f"{', '.join(PATTERN_GROUPS)} or {LABEL_PREFIX}<name>"
            + (f" (found {', '.join(unknown)})" if unknown else ""),
            "write (?P<workers>\\d+) for the number of jobs, (?P<bs>\\w+) for the block size",
        )
    return regex


def _is_label(group: str) -> bool:
    return group.startswith(LABEL_PREFIX) and len(group) > len(LABEL_PREFIX)


def _gather(paths: Sequence[Path]) -> tuple[list[Path], list[Skipped]]:
    files: list[Path] = []
    skipped: list[Skipped] = []
    for path in paths:
        if path.is_dir():
            files += _walk(path, skipped)
        elif path.is_file():
            files.append(path)
        elif path.exists() or path.is_symlink():  # a FIFO, socket, device, link loop
            raise InputFileError(f"{path}: {not_regular(path)}",
                                 "give result files (regular files) or folders")  # fmt: skip
        else:
            skipped.append(Skipped(str(path), "no such file or directory"))
    unique = list(dict.fromkeys(files))
    return unique, skipped


def _walk(folder: Path, skipped: list[Skipped]) -> list[Path]:
    """The regular files under `folder` (links to files followed, links to folders not:
    rglob never follows them, so a loop of links cannot make the walk endless); a FIFO,
    socket, device or broken link found there is skipped with its reason, never opened."""
    files = []
    for path in sorted(folder.rglob("*")):
        why = not_regular(path)
        if why is None:
            files.append(path)
        elif not path.is_dir():
            skipped.append(Skipped(str(path), why))
    return files


def _root(paths: Sequence[Path]) -> Path:
    folders = [str((p if p.is_dir() else p.parent).resolve()) for p in paths if p.exists()]
    return Path(os.path.commonpath(folders)) if folders else Path.cwd()


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _nothing_error(examined: int, skipped: list[Skipped]) -> ArraybenchError:
    shown = "; ".join(f"{s.path}: {s.reason}" for s in skipped[:3])
    more = f" (and {len(skipped) - 3} more)" if len(skipped) > 3 else ""
    return ArraybenchError(
        f"nothing to import: {examined} file(s) examined, none holds results to import"
        + (f" ({shown}{more})" if shown else ""),
        "give fio's output (--output-format=json, json+, normal or terse) or its logs, DiskSpd "
        "text, vdbench flatfile.html or elbencho CSV results, as files or folders",
    )


# --------------------------------------------------------------------------- describing a group


def _int(text: str | None) -> int | None:
    try:
        value = int(str(text).strip())
    except ValueError:
        return None
    return value if value > 0 else None


def _percent(text: str | None) -> int | None:
    try:
        value = int(str(text).strip())
    except ValueError:
        return None
    return value if 0 <= value <= 100 else None


def _size(text: str | None) -> int | None:
    try:
        value = parse_size(str(text).strip())
    except ValueError:
        return None
    return value if value > 0 else None


def _enabled(options: dict[str, str], name: str) -> bool:
    return name in options and options[name].strip() not in ("0", "false")


def _host_workers(entries: Sequence[Measurement], global_options: dict[str, str]) -> int:
    """Jobs one host ran in one group: an entry of group_reporting stands for numjobs jobs."""
    names = [j.name for j in entries]
    total = 0
    for job in entries:
        options = global_options | job.options
        aggregated = _enabled(options, "group_reporting") or names.count(job.name) == 1
        stated = _int(options.get("numjobs"))
        if aggregated and stated is None and not job.options:
            stated = _jobs_from_runtime(job)
        total += (stated or 1) if aggregated else 1
    return total


def _jobs_from_runtime(job: Measurement) -> int | None:
    """Jobs behind an entry that lists no job options (fio 3.33's client JSON omits them for
    some groups): fio's job_runtime sums its jobs' runtimes, so over the entry's own runtime
    it counts the jobs (time-based runs; close otherwise)."""
    runtime = max(job.read.runtime_ms, job.write.runtime_ms, job.trim.runtime_ms)
    if not job.job_runtime_ms or not runtime:
        return None
    return max(1, round(job.job_runtime_ms / runtime))


def _workers(jobs: Sequence[Measurement], doc: FioDocument) -> tuple[int, str | None]:
    by_host: dict[str | None, list[Measurement]] = defaultdict(list)
    for job in jobs:
        by_host[job.hostname].append(job)
    counts = {host: _host_workers(entries, doc.global_options) for host, entries in by_host.items()}
    if len(set(counts.values())) > 1:
        detail = ", ".join(f"{h}: {n}" for h, n in counts.items())
        return max(counts.values()), f"hosts ran different numbers of jobs ({detail}): the most"
    return next(iter(counts.values())), None


def _measured_read_pct(jobs: Sequence[Measurement]) -> int | None:
    reads = sum(j.read.ios for j in jobs)
    total = reads + sum(j.write.ios for j in jobs)
    return round(100 * reads / total) if total else None


def _mode(
    rw: str, options: dict[str, str], jobs: Sequence[Measurement], listed: bool
) -> tuple[str, int, str | None]:
    """(pattern, read %, note) of an rw mode. A mix takes rwmixread; when the options are
    ``listed`` (fio's JSON lists every option set) its absence means fio's default 50, else
    (normal text, fio 2.1 JSON) the measured split tells, to the nearest 5 %."""
    pattern, read_pct = RW_MODES[rw]
    if read_pct is not None:
        return pattern, read_pct, None
    mix = _percent(options.get("rwmixread"))
    write_mix = _percent(options.get("rwmixwrite"))
    if mix is None and write_mix is not None:
        mix = 100 - write_mix
    if mix is not None:
        return pattern, mix, None
    measured = _measured_read_pct(jobs)
    if listed or measured is None:
        return pattern, 50, None  # fio's default rwmixread
    rounded = 5 * round(measured / 5)
    note = None if rounded == 50 else f"rwmixread not stated: {rounded} % from the measured I/O"
    return pattern, rounded, note


def _infer_rw(jobs: Sequence[Measurement]) -> str:
    """fio 2.1.x JSON lists no job options: the job name and the measured I/O tell the mode."""
    share = _measured_read_pct(jobs)
    kind = "read" if share == 100 else "write" if share == 0 else "rw"
    random = any("rand" in j.name.lower() for j in jobs)
    if not random:
        return kind
    return {"read": "randread", "write": "randwrite", "rw": "randrw"}[kind]


def _block(
    options: dict[str, str], jobs: Sequence[Measurement], read_pct: int
) -> tuple[int | None, str | None]:
    """The workload's block size: bs/blocksize (per direction "r,w"), else bytes per I/O."""
    value = options.get("bs") or options.get("blocksize")
    if value:
        parts = value.split(",")
        index = 0 if read_pct > 0 else min(1, len(parts) - 1)
        size = _size(parts[index])
        if size:
            return size, None
    ios = sum(j.read.ios + j.write.ios for j in jobs)
    moved = sum(j.read.io_bytes + j.write.io_bytes for j in jobs)
    if not ios or not moved:
        return None, None
    size = _likely_block_size(moved / ios)
    return size, f"block size not stated: {fio_size(size)} from {moved / ios:.0f} bytes per I/O"


def _likely_block_size(per_io: float) -> int:
    """Bytes per I/O (inexact when fio < 2.17 gave no I/O count) -> the block size it shows:
    the nearest power of two within 5 %, else the nearest multiple of 512 bytes."""
    power = 1 << max(0, round(math.log2(max(per_io, 1))))
    if abs(per_io - power) <= 0.05 * power:
        return power
    return max(512, 512 * round(per_io / 512))


def _candidate(
    source: Source, doc: FioDocument, index: int, groupid: int, jobs: list[Measurement]
) -> Candidate:
    options = doc.global_options | jobs[0].options
    notes: list[str] = []
    rw = (options.get("rw") or options.get("readwrite") or "").split(":")[0].strip().lower()
    if rw not in RW_MODES:
        guessed = _infer_rw(jobs)
        stated = f"rw={rw} is not a known mode" if rw else "rw not stated"
        notes.append(f"{stated}: {guessed} inferred from the job name and the measured I/O")
        rw = guessed
    listed = source.fmt == "json" and bool(options)
    pattern, read_pct, note = _mode(rw, options, jobs, listed)
    bs, bs_note = _block(options, jobs, read_pct)
    workers, workers_note = _workers(jobs, doc)
    notes += [n for n in (note, bs_note, workers_note) if n]
    if bs is None:
        raise Skip(f"run {index}, group {groupid}: no block size and no I/O to measure it")
    hostnames = {j.hostname for j in jobs if j.hostname}
    return Candidate(
        source=source, doc=doc, doc_index=index, groupid=groupid, jobs=jobs, options=options,
        rw=rw, pattern=pattern, read_pct=read_pct, bs=bs,
        ioengine=options.get("ioengine", ""), workers=workers,
        iodepth=_int(options.get("iodepth")) or 1, notes=notes,
        # elbencho's CSV states its host count but has no per-host figures
        hosts=len(hostnames) or (_int(options.get("hosts")) if source.fmt == ELBENCHO else None),
    )  # fmt: skip


def _fixed_block_sizes(c: Candidate) -> list[int | None]:
    """The block size per direction as fio was told it (bs=4k, bs=8k,64k), else None."""
    value = c.options.get("bs") or c.options.get("blocksize")
    if not value or "-" in value or ":" in value:
        return [None, None, None]
    parts = [_size(p) for p in value.split(",")]
    return [parts[min(i, len(parts) - 1)] for i in range(3)]


def _groups(doc: FioDocument) -> dict[int, list[Measurement]]:
    groups: dict[int, list[Measurement]] = {}
    for job in doc.jobs:
        groups.setdefault(job.groupid, []).append(job)
    return groups


def _moved_nothing(jobs: Iterable[Measurement]) -> bool:
    return all(j.read.empty and j.write.empty for j in jobs)


def _base_name(c: Candidate) -> str:
    """The workload name from the job options: randread-8k, randrw70-4k, rw50-128k."""
    rw = "rw" if c.rw == "readwrite" else c.rw
    mix = str(c.read_pct) if RW_MODES[c.rw][1] is None else ""
    return f"{rw}{mix}-{fio_size(c.bs)}"


def _clean_name(text: str) -> str:
    """A workload name the plan model accepts: letters, digits, '.', '_', '-'."""
    cleaned = re.sub(r"[^A-Za-z0-9_.\-]+", "-", text).strip("-._")
    return cleaned or "imported"


# --------------------------------------------------------------------------- the name pattern


def _pattern_values(regex: UserRegex, source: Source) -> dict[str, str] | None:
    found = regex.groups(source.path.name)
    if found is None:
        found = regex.groups(source.rel)
    if found is None:
        return None
    return {k: v for k, v in found.items() if v}


def _pattern_field(name: str, text: str) -> Any:
    """The typed value of one pattern group; ValueError says why it is unusable."""
    if name in ("workload", "scenario"):
        return _clean_name(text)
    if _is_label(name):
        return shown(text.strip()[:100])  # a name's bytes that are no UTF-8: U+FFFD
    if name == "rw":
        rw = text.lower()
        if rw not in RW_MODES:
            raise ValueError(f"rw {text!r} is not a fio rw mode ({', '.join(RW_MODES)})")
        return rw
    value = _size(text) if name == "bs" else _int(text)
    if value is None:
        raise ValueError(
            f"{name} {text!r} is not a positive {'size' if name == 'bs' else 'number'}"
        )
    return value


def _apply_pattern(cands: list[Candidate], values: dict[str, str], rel: str) -> list[str]:
    """Give the file name's values to the file's points; returns notes.

    The name describes the whole file: a value replaces fio's own when the file's points
    agree on that field; when they differ (a file with several load levels), fio's are kept.
    """
    notes: list[str] = []
    for name, text in values.items():
        try:
            value = _pattern_field(name, text)
        except ValueError as exc:
            notes.append(f"{rel}: name pattern ignored for {name}: {exc}")
            continue
        _check_pattern_value(rel, name, value)
        found = sorted({_field_of(c, name) for c in cands}, key=str)
        if name not in ("workload", "scenario") and not _is_label(name) and len(found) > 1:
            notes.append(
                f"{rel}: the name says {name}={text}, but the file holds {len(found)} "
                f"values of {name} ({', '.join(map(str, found))}): fio's own kept"
            )
            continue
        for c in cands:
            _set_field(c, name, value)
        if name in _FIO_SAYS and found and found[0] is not None and found[0] != value:
            notes.append(f"{rel}: {name}={value} from the file name (fio's output says {found[0]})")
    return notes


def _check_pattern_value(rel: str, name: str, value: Any) -> None:
    """A number from the file name, refused (the whole import) beyond what a point can be."""
    if name == "bs" and value > MAX_BLOCK:
        raise refuse(rel, f"the name pattern's bs {number_text(value)}",
                     f"is out of range (1 to {fio_size(MAX_BLOCK)} per I/O)")  # fmt: skip
    if name in ("workers", "threads", "iodepth", "devices", "hosts"):
        check_level(rel, f"the name pattern's {name}", value)


_FIO_SAYS = ("bs", "rw", "workers", "threads", "iodepth", "hosts")  # fields fio's output gives


def _field_of(c: Candidate, name: str) -> Any:
    if _is_label(name):
        return c.labels.get(name[len(LABEL_PREFIX) :])
    return getattr(c, "workers" if name == "threads" else name)


def _set_field(c: Candidate, name: str, value: Any) -> None:
    if _is_label(name):
        c.labels[name[len(LABEL_PREFIX) :]] = value
    elif name == "threads":
        c.workers = value
    elif name == "workload":
        c.workload, c.named = value, True
    elif name == "rw":
        c.rw = value
        listed = c.source.fmt == "json" and bool(c.options)
        c.pattern, c.read_pct, _ = _mode(value, c.options, c.jobs, listed)
    else:
        setattr(c, name, value)


# --------------------------------------------------------------------------- names and keys


def _qualifiers() -> list[tuple[str, Callable[[list[Candidate]], str | None]]]:
    def uniform(values: Iterable[str]) -> str | None:
        found = set(values)
        return found.pop() if len(found) == 1 and "" not in found else None

    return [
        ("scenario", lambda m: uniform(c.scenario or "" for c in m)),
        ("labels", lambda m: uniform("-".join(v for _, v in sorted(c.labels.items())) for c in m)),
        # the data's own dimensions first: `Type(?P<workload>read)-BS(?P<bs>8k)` keeps one
        # workload per (rw, bs) (read-8k, read-1m), not one per file
        ("bs", lambda m: uniform(fio_size(c.bs) for c in m)),
        ("rw", lambda m: uniform(c.rw for c in m)),
        ("ioengine", lambda m: uniform(c.ioengine for c in m)),
        ("folder", lambda m: _folder(m[0].source.rel)),
        ("file", lambda m: Path(m[0].source.rel).stem),
        ("path", lambda m: m[0].source.rel),
        ("job", lambda m: uniform(c.jobs[0].name for c in m)),
        ("run", lambda m: "-".join(map(str, filter(None, m[0].series)))),
    ]


def _folder(rel: str) -> str | None:
    parent = Path(rel).parent.as_posix()
    return None if parent in (".", "") else parent


def _collide(series: dict[SeriesId, list[Candidate]], names: dict[SeriesId, str]) -> bool:
    """True when two series given the same name share a load level."""
    owner: dict[tuple[str, str], SeriesId] = {}
    for sid, members in series.items():
        for c in members:
            spot = (names[sid], c.level)
            if owner.setdefault(spot, sid) != sid:
                return True
    return False


def _split_runs(members: list[Candidate]) -> None:
    """Groups of one run at the same workload and level (a stonewalled repeat, jobs fio 2.1
    listed without options) become series of their own, named after their job."""
    runs: dict[SeriesId, list[Candidate]] = defaultdict(list)
    for c in members:
        runs[c.series].append(c)
    for group in runs.values():
        levels = [c.level for c in group]
        if len(set(levels)) == len(levels):
            continue
        names = [c.jobs[0].name for c in group]
        unique = len(set(names)) == len(names)
        for c, name in zip(group, names, strict=True):
            c.part = name if unique else f"{name}-g{c.groupid}"


def _name_workloads(cands: list[Candidate]) -> None:
    bases: dict[str, list[Candidate]] = defaultdict(list)
    for c in cands:
        bases[c.workload if c.named else _base_name(c)].append(c)
    by_base: dict[str, dict[SeriesId, list[Candidate]]] = defaultdict(dict)
    for base, members in bases.items():
        _split_runs(members)
        for c in members:
            by_base[base].setdefault(c.series, []).append(c)
    for base, series in by_base.items():
        names = dict.fromkeys(series, base)
        if len(series) > 1 and _collide(series, names):
            names = _qualified(base, series)
        for sid, members in series.items():
            for c in members:
                c.workload = _clean_name(names[sid])


def _qualified(base: str, series: dict[SeriesId, list[Candidate]]) -> dict[SeriesId, str]:
    names: dict[SeriesId, str] = {}
    for _, qualifier in _qualifiers():
        parts = {sid: qualifier(members) for sid, members in series.items()}
        if any(p is None for p in parts.values()):
            continue
        names = {sid: f"{base}-{part}" for sid, part in parts.items()}
        if not _collide(series, names):
            return names
    return names  # the last qualifier (path and run) is unique per series


def _drop_duplicates(cands: list[Candidate], skipped: list[Skipped]) -> list[Candidate]:
    first: dict[str, Candidate] = {}
    kept = []
    for c in cands:
        if c.key in first:
            skipped.append(
                Skipped(
                    c.source.rel,
                    f"run {c.doc_index}, group {c.groupid}: same "
                    f"workload and load level ({c.key}) as group "
                    f"{first[c.key].groupid}: not imported",
                )
            )
            continue
        first[c.key] = c
        kept.append(c)
    return kept


# --------------------------------------------------------------------------- interval logs


@dataclass(frozen=True)
class _Log:
    path: Path
    rel: str
    prefix: str
    kind: str
    job: int | None


def _log_places(c: Candidate) -> set[tuple[Path, str]]:
    """(folder, prefix) of the logs this point's jobs wrote: the write_*_log options, read
    beside the result file (and relative to it), and the result file's own name."""
    folder = c.source.path.parent.resolve()
    places = {(folder, c.source.path.stem)}
    for job in c.jobs:
        options = c.doc.global_options | job.options
        for value in (options[k] for k in _LOG_OPTIONS if options.get(k)):
            places |= {(folder, Path(value).name), ((folder / value).parent, Path(value).name)}
    return places


def _job_ranges(cands: list[Candidate]) -> dict[int, range] | None:
    """fio numbers log files by job, over the whole run: the numbers of each group's jobs."""
    first = cands[0]
    run = (first.source.rel, first.doc_index)
    if any((c.source.rel, c.doc_index) != run for c in cands) or first.hosts:
        return None
    ranges: dict[int, range] = {}
    start = 1
    for groupid, jobs in sorted(_groups(first.doc).items()):
        count = _host_workers(jobs, first.doc.global_options)
        ranges[groupid] = range(start, start + count)
        start += count
    return ranges


_SAMPLE_COLUMNS = ("read_iops", "write_iops", "read_mbps", "write_mbps", "read_lat_us",
                   "write_lat_us")  # fmt: skip


def _samples(logs: list[_Log], version: str) -> tuple[list[Sample], bool]:
    """1-second samples from one point's logs, and whether their clock is the Unix epoch."""
    parsed: dict[str, list[list[IntervalSample]]] = defaultdict(list)
    for log in sorted(logs, key=lambda lg: (lg.kind, lg.job or 0)):
        rows = parse_interval_log(log.path)
        if any(r.bs for r in rows):
            raise Skip(
                f"{log.rel}: one row per I/O (log_avg_msec=0); only averaged logs "
                "(log_avg_msec >= 1) are imported"
            )
        parsed[log.kind].append(rows)
    match = _VERSION_RE.search(version)
    lat_scale = 1000 if match and int(match.group(1)) < 3 else 1  # fio < 3 logs latency in us
    iops, bw, lat = parsed.get("iops", []), parsed.get("bw", []), parsed.get("lat", [])
    columns: dict[str, dict[int, float]] = {}
    for ddir, name in ((0, "read"), (1, "write")):
        columns[f"{name}_iops"] = dict(per_second(iops, "iops", ddir))
        columns[f"{name}_mbps"] = {t: v * 1024 / 1e6 for t, v in per_second(bw, "bw", ddir)}
        lat_ns = per_second(lat, "lat", ddir, iops_by_job=iops if len(iops) == len(lat) else None)
        columns[f"{name}_lat_us"] = {t: v * lat_scale / 1000 for t, v in lat_ns}
    complete = full_seconds(iops or bw or lat)
    seconds = sorted({t for col in columns.values() for t in col} & complete)
    samples = [Sample(t, *(columns[c].get(t) for c in _SAMPLE_COLUMNS)) for t in seconds]
    epoch = any(r.time_ms > _EPOCH_MS for rows in (iops or bw or lat) for r in rows[:1])
    return samples, epoch


def _with_bins(jobs: list[Measurement], merged: dict[int, dict[int, int]]) -> list[Measurement]:
    """The point's jobs with the merged histogram: on the first job that moved data in each
    direction, empty bins on the others, so that the point's merged bins (aggregate's
    merge_bins) are exactly the logs' histogram."""
    out = []
    given: set[int] = set()
    for job in jobs:
        changes: dict[str, DirStats] = {}
        for ddir, name in ((0, "read"), (1, "write")):
            stats = job.direction(name)
            if ddir not in merged or stats.empty:
                continue
            bins = merged[ddir] if ddir not in given else {}
            given.add(ddir)
            changes[name] = dataclasses.replace(stats, bins_ns=bins, percentiles_ns={})
        out.append(dataclasses.replace(job, **changes))  # type: ignore[arg-type]
    return out


def _log_candidate(root: Path, prefix: str, logs: list[_Log]) -> Candidate:
    """A point to be from one prefix's logs alone: one job per log number."""
    by_job: dict[int, dict[str, list[IntervalSample]]] = defaultdict(dict)
    for log in (lg for lg in logs if lg.kind != "hist"):
        rows = parse_interval_log(log.path)
        if any(r.bs for r in rows):
            raise Skip("one row per I/O (log_avg_msec=0): only averaged logs are imported")
        by_job[log.job or 0][log.kind] = rows
    jobs = []
    for _, kinds in sorted(by_job.items()):
        job = job_from_logs(prefix, kinds.get("iops", []), kinds.get("bw", []),
                            kinds.get("lat", []))  # fmt: skip
        if job is not None:
            jobs.append(job)
    if not jobs or _moved_nothing(jobs):
        raise Skip("no iops or bw log with any I/O: nothing to rebuild the totals from")
    if not any(j.read.io_bytes or j.write.io_bytes for j in jobs):
        raise Skip("an iops log without its bw log: no block size or bytes to rebuild")
    doc = FioDocument(fio_version="", timestamp=None, timestamp_ms=None, global_options={},
                      jobs=jobs, all_clients=None, disk_util=[], preamble="")  # fmt: skip
    first = sorted(logs, key=lambda lg: lg.rel)[0]
    source = Source(first.path, first.rel.rsplit("/", 1)[0] + "/" + prefix
                     if "/" in first.rel else prefix, "logs")  # fmt: skip
    c = _candidate(source, doc, 1, 0, jobs)
    c.logs = [log.rel for log in logs]
    return c


# --------------------------------------------------------------------------- the scan


class _Scan:
    """Files -> candidates (points to be), logs, skipped files and notes."""

    def __init__(self, root: Path, regex: UserRegex | None, skipped: list[Skipped]) -> None:
        self.root = root
        self.regex = regex
        self.skipped = skipped
        self.notes: list[str] = []
        self.candidates: list[Candidate] = []
        self.logs: list[_Log] = []
        self.unmatched_names: list[str] = []
        self.orphans: list[tuple[str, list[_Log]]] = []  # logs no result file names

    def skip(self, path: Path, reason: str) -> None:
        self.skipped.append(Skipped(_relative(path, self.root), reason))

    def add(self, path: Path) -> None:
        rel = _relative(path, self.root)
        hist = _HIST_RE.search(path.name)
        if hist:
            job = hist.group("job")
            self.logs.append(_Log(path, rel, path.name[: hist.start()], "hist",
                                  int(job) if job else None))  # fmt: skip
            return
        log = _LOG_RE.match(path.name)
        if log:
            self._add_log(path, rel, log)
            return
        try:
            self._add_result(path, rel)
        except (Skip, OSError, ValueError) as exc:
            self.skip(path, str(exc) if isinstance(exc, Skip) else f"cannot read: {exc}")

    def _add_log(self, path: Path, rel: str, match: re.Match[str]) -> None:
        if match.group("kind") not in ("bw", "iops", "lat"):
            self.skip(path, f"{match.group('kind')} log: only bw, iops and lat logs are imported")
            return
        job = match.group("job")
        self.logs.append(
            _Log(path, rel, match.group("prefix"), match.group("kind"), int(job) if job else None)
        )

    def _add_result(self, path: Path, rel: str) -> None:
        docs, fmt = read_docs(path)
        docs, picked = pick_docs(docs, fmt)
        source = Source(path, rel, fmt)
        found: list[Candidate] = []
        for index, doc in enumerate(docs, start=1):
            found += self._doc_candidates(source, doc, index)
        if not found:
            raise Skip("fio results without any completed I/O")
        self.notes += [f"{rel}: {note}" for note in picked]
        self.notes += [f"{rel} (run {i}): {n}" for i, d in enumerate(docs, 1) for n in d.notes]
        self._fio_messages(rel, docs)
        if self.regex is not None:
            values = _pattern_values(self.regex, source)
            if values is None:
                self.unmatched_names.append(rel)
            else:
                self.notes += _apply_pattern(found, values, rel)
                self.notes += per_device(found, values, rel)  # threads per device (grid.py)
        for c in found:
            c.implausible = implausible(c.jobs, _fixed_block_sizes(c))
            c.notes += [f"implausible: {reason}" for reason in c.implausible]
        self.notes += [f"{c.where}: {n}" for c in found for n in c.notes]
        self.candidates += found

    def _doc_candidates(self, source: Source, doc: FioDocument, index: int) -> list[Candidate]:
        found = []
        for groupid, jobs in _groups(doc).items():
            if _moved_nothing(jobs):
                errors = sorted({j.error for j in jobs if j.error})
                why = f" (fio error {', '.join(map(str, errors))})" if errors else ""
                self.skip(source.path, f"run {index}, group {groupid}: no I/O completed{why}")
                continue
            try:
                found.append(_candidate(source, doc, index, groupid, jobs))
            except Skip as exc:
                self.skip(source.path, str(exc))
        return found

    def _fio_messages(self, rel: str, docs: list[FioDocument]) -> None:
        lines = [line for d in docs for line in d.preamble.splitlines() if line.strip()]
        if lines:
            more = f" (and {len(lines) - 1} more line(s))" if len(lines) > 1 else ""
            self.notes.append(f"{rel}: fio printed {lines[0].strip()!r}{more}")

    def finish(self) -> list[Candidate]:
        if self.unmatched_names:
            shown = ", ".join(self.unmatched_names[:5])
            self.notes.append(
                f"the name pattern matched no part of {len(self.unmatched_names)} "
                f"result file name(s): {shown}"
            )
        _name_workloads(self.candidates)
        self.candidates = _drop_duplicates(self.candidates, self.skipped)
        return self.candidates

    # ----------------------------------------------------------------------- logs

    def attach_logs(self, cands: list[Candidate]) -> None:
        groups: dict[tuple[Path, str], list[_Log]] = defaultdict(list)
        for log in self.logs:
            groups[(log.path.parent.resolve(), log.prefix)].append(log)
        by_place: dict[tuple[Path, str], list[Candidate]] = defaultdict(list)
        by_prefix: dict[str, list[Candidate]] = defaultdict(list)
        for c in cands:
            places = _log_places(c)
            for place in places:
                by_place[place].append(c)
            # logs found elsewhere only for a prefix none of its own places holds
            own = {prefix for place, prefix in places if (place, prefix) in groups}
            for prefix in {prefix for _, prefix in places} - own:
                by_prefix[prefix].append(c)
        assigned: dict[Candidate, list[_Log]] = defaultdict(list)
        for (folder, prefix), logs in groups.items():
            near = by_place.get((folder, prefix)) or by_prefix.get(prefix, [])
            targets = list(dict.fromkeys(near))
            for c, mine in self._split_logs(prefix, logs, targets).items():
                assigned[c] += mine
        relative = 0
        for c, logs in assigned.items():
            if not self._give_samples(c, logs):
                relative += 1
        if relative:
            self.notes.append(
                f"{relative} point(s) got 1-second samples from logs without "
                "Unix-epoch stamps: their time is counted from the job start"
            )

    def _split_logs(
        self, prefix: str, logs: list[_Log], targets: list[Candidate]
    ) -> dict[Candidate, list[_Log]]:
        if not targets:
            self.orphans.append((prefix, logs))  # imported on their own, as time series
            return {}
        if len(targets) == 1:
            return {targets[0]: logs}
        ranges = _job_ranges(targets) or {}
        by_group = {c.groupid: c for c in targets}
        split: dict[Candidate, list[_Log]] = defaultdict(list)
        for log in logs:
            group = next((g for g, r in ranges.items() if log.job in r), None)
            if group is None or group not in by_group:
                keys = ", ".join(c.key for c in targets[:4])
                self.skip(
                    log.path,
                    f"the log prefix {prefix!r} fits {len(targets)} points "
                    f"({keys}) and its job number does not tell which one",
                )
                continue
            split[by_group[group]].append(log)
        return split

    def _give_histogram(self, c: Candidate, hists: list[_Log]) -> None:
        """Percentiles from histogram logs, for a point whose result gives no histogram
        (json+ bins win): the logs' bins merged over jobs and rows."""
        stats = [d for j in c.jobs for d in (j.read, j.write) if not d.empty]
        exact = all(d.bins_ns is not None for d in stats) or (
            len(c.jobs) == 1 and all(d.percentiles_ns for d in stats)
        )
        if exact:  # json+ bins, or fio's own percentiles of the one entry
            for log in hists:
                self.skip(log.path, f"histogram log of {c.key}: fio's result gives percentiles")
            return
        merged: dict[int, dict[int, int]] = defaultdict(dict)
        try:
            for log in hists:
                for ddir, bins in hist_log_bins(parse_hist_log(log.path)).items():
                    for value, count in bins.items():
                        merged[ddir][value] = merged[ddir].get(value, 0) + count
        except FioParseError as exc:
            for log in hists:
                self.skip(log.path, f"not attached to {c.key}: {exc.message}")
            return
        c.jobs = _with_bins(c.jobs, merged)
        logged = sum(sum(b.values()) for b in merged.values())
        done = sum(j.read.ios + j.write.ios for j in c.jobs)
        note = (
            f"percentiles from {len(hists)} histogram log(s): {logged} of {done} I/Os logged "
            "(fio logs no partial last window)"
        )
        c.notes.append(note)
        self.notes.append(f"{c.where}: {note}")
        c.logs += [log.rel for log in hists]

    def log_candidates(self, taken: set[str]) -> list[Candidate]:
        """Points from logs that no result file names: their totals rebuilt from the logs
        (job_from_logs), their samples as for any point."""
        found: list[Candidate] = []
        for prefix, logs in self.orphans:
            if all(log.kind == "hist" for log in logs):
                for log in logs:
                    self.skip(log.path, f"histogram log: no result file of prefix {prefix!r} "
                                        "to give its percentiles to")  # fmt: skip
                continue
            try:
                c = _log_candidate(self.root, prefix, logs)
            except (Skip, FioParseError) as exc:
                reason = exc.message if isinstance(exc, FioParseError) else str(exc)
                for log in logs:
                    self.skip(log.path, f"logs of {prefix!r} on their own: {reason}")
                continue
            found.append(c)
        _name_workloads(found)
        kept = []
        for c in _drop_duplicates(found, self.skipped):
            if c.key in taken:
                self.skip(c.source.path, f"logs of {c.key}: a result file gives that point")
                continue
            self._give_samples(c, [lg for lg in self.logs if lg.rel in c.logs])
            self.notes.append(
                f"{c.source.rel}: no result file names these logs: {c.key} is rebuilt from "
                "them (I/Os and bytes = logged rates x their windows, approximate)"
            )
            kept.append(c)
        return kept

    def _give_samples(self, c: Candidate, logs: list[_Log]) -> bool:
        """Attach samples; False when their clock is relative to the job start."""
        hists = [log for log in logs if log.kind == "hist"]
        logs = [log for log in logs if log.kind != "hist"]
        if hists:
            self._give_histogram(c, hists)
        if not logs:
            return True
        try:
            c.samples, epoch = _samples(logs, c.doc.fio_version)
        except (Skip, FioParseError) as exc:
            reason = exc.message if isinstance(exc, FioParseError) else str(exc)
            for log in logs:
                self.skip(log.path, f"not attached to {c.key}: {reason}")
            return True
        c.logs = [log.rel for log in logs]
        return epoch or not c.samples
