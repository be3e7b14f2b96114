"""Point -> fio job file text. The only module that knows fio's option names for a point.

The job file is written beside fio's outputs so a user can re-run it by hand:
`fio point.fio --output-format=json+ --output=fio.json`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from arraybench.engines.fio.reduction import data_options
from arraybench.engines.fio.values import fio_comment, fio_path, fio_value
from arraybench.plan.expand import Point, describe_level
from arraybench.plan.rate import IOPS, JobRate, job_rate
from arraybench.units import fio_size, format_size

LOG_PREFIX = "point"
# a rate-limited point's latency histograms, one row per job every OPEN_LOOP_HIST_MS: its
# completions against the schedule it should have kept (`<prefix>_clat_hist.<job>.log`)
OPEN_LOOP_PREFIX = "openloop"
OPEN_LOOP_HIST_MS = 100
PERCENTILES = "1:5:10:50:90:95:99:99.5:99.9:99.95:99.99"


def fio_filename(path: str, where: str = "target") -> str:
    """A target path for ``filename=``: refused when fio would read another path (newline,
    ``#``, ``;``, ``$`` ...), ``:`` escaped (fio separates several files with ':')."""
    return fio_path(path, f"{where} path")


def _renamed(name: str, names: Mapping[str, str]) -> str:
    path = name.strip().replace("\\:", ":")  # fio_path's one escape
    return fio_path(names[path], "resolved target path") if path in names else name


def rename_filenames(text: str, names: Mapping[str, str]) -> str:
    """A job file with every ``filename=`` entry that is a key of `names` replaced by its
    value (a target's resolved path on a host, a /dev/fd/N)."""
    lines = []
    for line in text.splitlines(keepends=True):
        key, sep, value = line.partition("=")
        if sep and key.strip() == "filename":
            body = value.rstrip("\n")
            parts = re.split(r"(?<!\\):", body)
            line = f"{key}={':'.join(_renamed(n, names) for n in parts)}{value[len(body) :]}"
        lines.append(line)
    return "".join(lines)


def pin_filenames(text: str, pins: Mapping[str, int]) -> str:
    """A job file with every ``filename=`` entry naming a pinned target (path -> an open
    descriptor fio inherits) replaced by ``/dev/fd/N``: fio reopens the file or device that
    descriptor is, whatever the path leads to by then (``targets.guard.TargetGuard.pinned``)."""
    return rename_filenames(text, {path: f"/dev/fd/{fd}" for path, fd in pins.items()})


def _rw(point: Point) -> list[str]:
    w = point.workload
    random = w.pattern == "random"
    if w.read == 100:
        return ["rw=randread" if random else "rw=read"]
    if w.read == 0:
        return ["rw=randwrite" if random else "rw=write"]
    return ["rw=randrw" if random else "rw=rw", f"rwmixread={w.read}"]


def _data_options(point: Point) -> list[str]:
    return data_options(point.data, point.workload.bs) if point.writes else []


def _global(point: Point) -> list[str]:
    options = [
        "[global]",
        f"ioengine={fio_value(point.ioengine, 'ioengine')}",
        f"direct={int(point.direct)}",
        f"bs={fio_size(point.workload.bs)}",
        *_rw(point),
        f"iodepth={point.level.iodepth}",
        "time_based=1",
        f"ramp_time={fio_seconds(point.timing.ramp)}",
        f"runtime={fio_seconds(point.timing.duration)}",
        "randrepeat=0",
        "invalidate=1",
        "lat_percentiles=1",
        f"percentile_list={PERCENTILES}",
        # submission latency is read by nothing of arraybench's, and its per-I/O sample and
        # slat log cost fio 13 % of its IOPS at 21 M IOPS (docs/performance.md)
        "disable_slat=1",
        "log_avg_msec=1000",
        "log_unix_epoch=1",
        "per_job_logs=1",
        f"write_iops_log={LOG_PREFIX}",
        f"write_bw_log={LOG_PREFIX}",
        f"write_lat_log={LOG_PREFIX}",
    ]
    if point.workload.pattern == "random":
        options.append("norandommap=1")
    rate = point_rate(point)
    if rate is not None:
        options.append(rate_option(rate))
    if rate is not None and not point.level.hosts:
        # the completions, every OPEN_LOOP_HIST_MS, against the schedule (analysis.openloop);
        # local points only: fio's client writes a server's histogram rows wrong (rows of
        # 52 50 102 100 152 150 ... for 50 I/Os every 100 ms, on 3.33 and 3.42)
        options += [f"log_hist_msec={OPEN_LOOP_HIST_MS}", f"write_hist_log={OPEN_LOOP_PREFIX}"]
    if point.workload.events:  # a failover's I/O errors are measured, not a reason to stop
        options.append("continue_on_error=io")
    steady = point.timing.steady
    if steady:
        # fio ends the job once every sample of the window is within limit% of its mean
        # (tightened when the plan asks for an interval of the mean: plan.confidence)
        options += [
            f"steadystate={steady.metric}:{round(steady.fio_limit, 2):g}%",
            f"steadystate_duration={fio_seconds(steady.window)}",
        ]
    return options + _data_options(point)


def point_rate(point: Point) -> JobRate | None:
    """Each job's rate, split by the workload's mix (`plan.rate`), or None: no rate."""
    w = point.workload
    return job_rate(w.rate_iops, w.read, w.bs) if w.rate_iops else None


def rate_option(rate: JobRate) -> str:
    """fio's line for a job's rate: `rate_iops=R,W` (I/Os a second) or `rate=R,W` (bytes a
    second), each direction capped on its own; one value where the job has one direction."""
    name = "rate_iops" if rate.unit == IOPS else "rate"
    if rate.read == 0 or rate.write == 0:
        return f"{name}={rate.read or rate.write}"
    return f"{name}={rate.read},{rate.write}"


def fio_seconds(value: float) -> str:
    """fio time value: whole seconds as `5`, fractions in milliseconds (`300ms`)."""
    return f"{value:g}" if value == int(value) else f"{round(value * 1000)}ms"


def _region_bytes(point: Point, sizes: Mapping[str, int]) -> int | None:
    """Bytes of each target the workers address, or None for 'the whole target'."""
    w = point.workload
    known = [sizes[t.path] for t in point.targets if t.path in sizes and sizes[t.path] > 0]
    smallest = min(known) if known else None
    if w.region == "frontend":
        # the first blocks of the target, never more than it holds: fio would grow a file to
        # `size` (a 16 MiB file asked for 4096 x 64 KiB became 256 MiB)
        front = w.frontend_blocks * w.bs
        return front if smallest is None else min(front, smallest)
    return smallest


def _placement(point: Point, region: int | None, nfiles: int, workers: int) -> list[str]:
    """size/offset lines: sequential workers get their own stripe, random ones share the region."""
    bs = point.workload.bs
    if region is None:
        return []
    if point.workload.pattern == "sequential" and workers > 1:
        stripe = max(bs, region // workers // bs * bs)
        return [f"size={fio_size(stripe * nfiles)}", f"offset_increment={fio_size(stripe)}"]
    return [f"size={fio_size(region // bs * bs * nfiles)}"]


def start_gate(start_at_ns: int) -> str:
    """An exec_prerun holding every job until a wall-clock instant (Unix ns, host clock).

    fio runs exec_prerun in each job after its files are set up and just before the job's
    clock (epoch) starts, so jobs on every host begin I/O at that instant. Written without
    ';' (fio splits option values there); the trailing '#' comments out the output
    redirection fio appends, so nothing is written on the hosts. Needs GNU date (%N) and a
    sleep that takes fractions; it always succeeds (a late host simply starts at once).
    """
    return (
        f"exec_prerun=t=$(date +%s%N) && d=$(({start_at_ns} - t)) && [ $d -gt 0 ] && "
        "sleep $((d/1000000000)).$(printf %09d $((d%1000000000))) || true #"
    )


def render_jobfile(
    point: Point, sizes: Mapping[str, int], title: str = "", start_at_ns: int | None = None
) -> str:
    """fio job text for `point`; `sizes` maps target path -> bytes (files and devices);
    `start_at_ns` holds the start until that wall-clock instant (many hosts)."""
    region = _region_bytes(point, sizes)
    heading = f"arraybench point {point.key}{(' - ' + title) if title else ''}"
    lines = [
        f"; {fio_comment(heading, 'job title')}",
        f"; {point.workload.pattern} {format_size(point.workload.bs)}, read {point.workload.read}%,"
        f" {describe_level(point.level)}, spread {point.spread}",
        "; re-run by hand: fio point.fio --output-format=json+ --output=fio.json",
        *_global(point),
        *([start_gate(start_at_ns)] if start_at_ns is not None else []),
        "",
    ]
    if point.spread == "per_target":
        for index, target in enumerate(point.targets, start=1):
            lines += [
                f"[t{index}]",
                f"filename={fio_filename(target.path, f'targets[{index - 1}]')}",
                f"numjobs={point.level.workers}",
                *_placement(point, region, 1, point.level.workers),
                "",
            ]
    else:
        names = ":".join(fio_filename(t.path, f"targets[{i}]") for i, t in enumerate(point.targets))
        lines += [
            "[load]",
            f"filename={names}",
            f"numjobs={point.level.workers}",
            *_placement(point, region, len(point.targets), point.level.workers),
            "",
        ]
    return "\n".join(lines)
