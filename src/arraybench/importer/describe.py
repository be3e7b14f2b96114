"""What one group of jobs is, read from fio's options and figures: the rw mode and read
share, the block size, the jobs per host, the iodepth (`new_candidate`), and the workload
name the options give (`base_name`: randread-8k, randrw70-4k)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence

from arraybench.engines.measurement import EngineDocument, Measurement
from arraybench.importer.candidate import Candidate, Source
from arraybench.importer.format import Skip
from arraybench.importer.registry import format_named
from arraybench.units import fio_size, parse_size

# fio rw mode -> (pattern, read percentage; None = a mix, from rwmixread)
RW_MODES: dict[str, tuple[str, int | None]] = {
    "read": ("sequential", 100), "randread": ("random", 100),
    "write": ("sequential", 0), "randwrite": ("random", 0),
    "rw": ("sequential", None), "readwrite": ("sequential", None), "randrw": ("random", None),
    "trim": ("sequential", 0), "randtrim": ("random", 0), "trimwrite": ("sequential", 0),
}  # fmt: skip


def positive_int(text: str | None) -> int | None:
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


def positive_size(text: str | None) -> int | None:
    try:
        value = parse_size(str(text).strip())
    except ValueError:
        return None
    return value if value > 0 else None


def _enabled(options: dict[str, str], name: str) -> bool:
    return name in options and options[name].strip() not in ("0", "false")


def host_workers(entries: Sequence[Measurement], global_options: dict[str, str]) -> int:
    """Jobs one host ran in one group: an entry of group_reporting stands for numjobs jobs."""
    names = [j.name for j in entries]
    total = 0
    for job in entries:
        options = global_options | job.options
        aggregated = _enabled(options, "group_reporting") or names.count(job.name) == 1
        stated = positive_int(options.get("numjobs"))
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


def _workers(jobs: Sequence[Measurement], doc: EngineDocument) -> tuple[int, str | None]:
    by_host: dict[str | None, list[Measurement]] = defaultdict(list)
    for job in jobs:
        by_host[job.hostname].append(job)
    counts = {host: host_workers(entries, doc.global_options) for host, entries in by_host.items()}
    if len(set(counts.values())) > 1:
        detail = ", ".join(f"{h}: {n}" for h, n in counts.items())
        return max(counts.values()), f"hosts ran different numbers of jobs ({detail}): the most"
    return next(iter(counts.values())), None


def _measured_read_pct(jobs: Sequence[Measurement]) -> int | None:
    reads = sum(j.read.ios for j in jobs)
    total = reads + sum(j.write.ios for j in jobs)
    return round(100 * reads / total) if total else None


def rw_mode(
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
        size = positive_size(parts[index])
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


def new_candidate(
    source: Source, doc: EngineDocument, index: int, groupid: int, jobs: list[Measurement]
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
    pattern, read_pct, note = rw_mode(rw, options, jobs, listed)
    bs, bs_note = _block(options, jobs, read_pct)
    workers, workers_note = _workers(jobs, doc)
    notes += [n for n in (note, bs_note, workers_note) if n]
    if bs is None:
        raise Skip(f"run {index}, group {groupid}: no block size and no I/O to measure it")
    hostnames = {j.hostname for j in jobs if j.hostname}
    named = options.get("workload", "")  # a tool whose phases are not fio's modes (mdtest)
    return Candidate(
        source=source, doc=doc, doc_index=index, groupid=groupid, jobs=jobs, options=options,
        rw=rw, pattern=pattern, read_pct=read_pct, bs=bs,
        ioengine=options.get("ioengine", ""), workers=workers,
        iodepth=positive_int(options.get("iodepth")) or 1, notes=notes,
        workload=clean_name(named) if named else "", named=bool(named),
        hosts=len(hostnames) or (positive_int(options.get("hosts"))
                                 if format_named(source.fmt).hosts_in_options else None),
    )  # fmt: skip


def fixed_block_sizes(c: Candidate) -> list[int | None]:
    """The block size per direction as fio was told it (bs=4k, bs=8k,64k), else None."""
    value = c.options.get("bs") or c.options.get("blocksize")
    if not value or "-" in value or ":" in value:
        return [None, None, None]
    parts = [positive_size(p) for p in value.split(",")]
    return [parts[min(i, len(parts) - 1)] for i in range(3)]


def job_groups(doc: EngineDocument) -> dict[int, list[Measurement]]:
    groups: dict[int, list[Measurement]] = {}
    for job in doc.jobs:
        groups.setdefault(job.groupid, []).append(job)
    return groups


def moved_nothing(jobs: Iterable[Measurement]) -> bool:
    return all(j.read.empty and j.write.empty for j in jobs)


def base_name(c: Candidate) -> str:
    """The workload name from the job options: randread-8k, randrw70-4k, rw50-128k."""
    rw = "rw" if c.rw == "readwrite" else c.rw
    mix = str(c.read_pct) if RW_MODES[c.rw][1] is None else ""
    return f"{rw}{mix}-{fio_size(c.bs)}"


def clean_name(text: str) -> str:
    """A workload name the plan model accepts: letters, digits, '.', '_', '-'."""
    cleaned = re.sub(r"[^A-Za-z0-9_.\-]+", "-", text).strip("-._")
    return cleaned or "imported"
