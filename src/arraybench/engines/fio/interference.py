"""The dbi services "mixed workload" (interference) test as one fio job file.

A **base load** (a database: random 8 KiB, 50/50 read/write, rate-limited to e.g. 40,000 IOPS
in total) runs from the start; every `interval_s` one more **background stream** (a backup:
sequential 1 MiB I/O at `bg_rate_iops_per_step` IOPS) joins, and keeps running to the end.
The base load stops at `base_stop` so the background is seen alone for `tail` seconds:

    0          I          2I   ...   S*I          base_stop            total
    |base alone|base + 1 x|base + 2 x|  base + S x  | background alone  |

Step k (bg1 .. bgS) starts at k x interval_s and runs to the end. Defaults: `base_stop` =
(steps + 1) x interval_s, so the last step is measured beside the base load for a whole
interval like the others; `tail` = interval_s.

More: docs/internals.md, `engines/fio/interference.py`."""

from __future__ import annotations

from dataclasses import dataclass

from arraybench.engines.fio.jobfile import PERCENTILES, fio_filename, fio_seconds, rate_option
from arraybench.engines.fio.values import fio_value
from arraybench.plan.rate import JobRate, job_rate
from arraybench.units import fio_size, format_size

JOBFILE_NAME = "interference.fio"
BASE_PREFIX = "base"
BG_PREFIX = "bg"  # bg1, bg2, ... one per step
BASE_ALONE = "base alone"
BACKGROUND_ALONE = "background alone"


def bg_prefix(step: int) -> str:
    """Section name and log prefix of background step `step` (1-based)."""
    return f"{BG_PREFIX}{step}"


@dataclass(frozen=True)
class InterferenceSpec:
    """One interference test. Rates are IOPS; times are seconds from the start of the run."""

    targets: list[str]  # files or devices; every section spreads over all (filename=a:b)
    base_bs: int = 8192
    base_read_pct: int = 50
    base_rate_iops: int = 40000  # TOTAL over all base jobs and both directions
    base_jobs: int = 4
    base_iodepth: int = 8
    bg_bs: int = 1 << 20
    bg_read_pct: int = 100
    bg_rate_iops_per_step: int = 1000  # each step adds one job at this rate
    steps: int = 5
    bg_iodepth: int = 4
    interval_s: float = 60.0  # time between background steps
    base_stop_s: float | None = None  # None: (steps + 1) x interval_s
    tail_s: float | None = None  # background alone after the base stops; None: interval_s
    ioengine: str = "libaio"
    direct: bool = True

    def __post_init__(self) -> None:
        if not self.targets:
            raise ValueError("an interference test needs at least one target")
        for name in ("base_bs", "base_rate_iops", "base_jobs", "base_iodepth", "bg_bs"):
            _positive(name, getattr(self, name))
        for name in ("bg_rate_iops_per_step", "steps", "bg_iodepth"):
            _positive(name, getattr(self, name))
        for name in ("base_read_pct", "bg_read_pct"):
            if not 0 <= getattr(self, name) <= 100:
                raise ValueError(f"{name} must be within 0..100, got {getattr(self, name)}")
        if self.interval_s <= 0:
            raise ValueError(f"interval_s must be > 0, got {self.interval_s}")
        if self.base_stop <= self.steps * self.interval_s:
            raise ValueError(
                f"base_stop_s={self.base_stop:g} must be after the last step starts "
                f"({self.steps} x {self.interval_s:g} s), or that step never meets the base load"
            )
        if self.tail < 0:
            raise ValueError(f"tail_s must be >= 0, got {self.tail}")
        base_job_rates(self)  # raises when the rate cannot be split

    @property
    def base_stop(self) -> float:
        """When the base load stops (seconds from the start)."""
        if self.base_stop_s is None:
            return (self.steps + 1) * self.interval_s
        return self.base_stop_s

    @property
    def tail(self) -> float:
        """How long the background runs alone after the base load stops."""
        return self.interval_s if self.tail_s is None else self.tail_s


def _positive(name: str, value: int) -> None:
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")


def total_seconds(spec: InterferenceSpec) -> float:
    """Length of the whole run: base_stop + tail."""
    return spec.base_stop + spec.tail


def step_label(spec: InterferenceSpec, streams: int) -> str:
    """`base + 2 x 1 MiB`: the base load beside `streams` background streams."""
    return f"base + {streams} x {format_size(spec.bg_bs)}"


def step_windows(spec: InterferenceSpec) -> list[tuple[str, float, float]]:
    """(label, start_s, end_s) of each phase, relative to the run start, in time order:
    "base alone", one per step ("base + k x 1 MiB"), "background alone" (absent if tail is 0)."""
    interval = float(spec.interval_s)
    stop = float(spec.base_stop)
    windows = [(BASE_ALONE, 0.0, interval)]
    for k in range(1, spec.steps + 1):
        end = stop if k == spec.steps else (k + 1) * interval
        windows.append((step_label(spec, k), k * interval, end))
    if spec.tail > 0:
        windows.append((BACKGROUND_ALONE, stop, float(total_seconds(spec))))
    return windows


def base_job_rate(spec: InterferenceSpec) -> JobRate:
    """EACH base job's rate, split by the base mix (`plan.rate.job_rate`, as every rate in a
    job file): its total x base_jobs is the total base rate (exactly base_rate_iops when it
    divides evenly, else the nearest whole IOPS per job)."""
    per_job = round(spec.base_rate_iops / spec.base_jobs)
    if per_job < 1:
        raise ValueError(
            f"base_rate_iops={spec.base_rate_iops} over {spec.base_jobs} jobs is < 1 IOPS per job"
        )
    return job_rate(per_job, spec.base_read_pct, spec.base_bs)


def base_job_rates(spec: InterferenceSpec) -> tuple[float, float]:
    """(read, write) IOPS of EACH base job."""
    rate = base_job_rate(spec)
    return rate.read_iops, rate.write_iops


def effective_base_rate(spec: InterferenceSpec) -> float:
    """The total base rate the job file asks fio for (rounding of the per-job split)."""
    return base_job_rate(spec).total_iops * spec.base_jobs


def bg_job_rate(spec: InterferenceSpec) -> JobRate:
    """Each background stream's rate, split by its mix."""
    return job_rate(spec.bg_rate_iops_per_step, spec.bg_read_pct, spec.bg_bs)


def _rw(random: bool, read_pct: int) -> list[str]:
    if read_pct == 100:
        return ["rw=randread" if random else "rw=read"]
    if read_pct == 0:
        return ["rw=randwrite" if random else "rw=write"]
    return ["rw=randrw" if random else "rw=rw", f"rwmixread={read_pct}"]


def _logs(prefix: str) -> list[str]:
    return [f"write_iops_log={prefix}", f"write_bw_log={prefix}", f"write_lat_log={prefix}"]


def _global(spec: InterferenceSpec) -> list[str]:
    return [
        "[global]",
        f"filename={':'.join(fio_filename(t, 'interference target') for t in spec.targets)}",
        f"ioengine={fio_value(spec.ioengine, 'ioengine')}",
        f"direct={int(spec.direct)}",
        "time_based=1",
        "randrepeat=0",
        "invalidate=1",
        "group_reporting=0",
        "lat_percentiles=1",
        f"percentile_list={PERCENTILES}",
        "log_avg_msec=1000",
        "log_unix_epoch=1",
        "per_job_logs=1",
    ]


def _base_section(spec: InterferenceSpec, size_bytes: int | None) -> list[str]:
    lines = [
        f"[{BASE_PREFIX}]",
        *_rw(True, spec.base_read_pct),
        f"bs={fio_size(spec.base_bs)}",
        f"numjobs={spec.base_jobs}",
        f"iodepth={spec.base_iodepth}",
        rate_option(base_job_rate(spec)),
        f"runtime={fio_seconds(spec.base_stop)}",
        "norandommap=1",
    ]
    if size_bytes is not None:
        region = size_bytes // spec.base_bs * spec.base_bs
        if region == 0:
            raise ValueError(f"targets of {size_bytes} bytes hold no {spec.base_bs}-byte block")
        lines.append(f"size={fio_size(region * len(spec.targets))}")
    if spec.base_read_pct < 100:
        lines.append("refill_buffers=1")  # fresh random bytes per write: incompressible
    # 1-second completion-latency histograms: percentiles per step, merged, never averaged
    return [*lines, *_logs(BASE_PREFIX), f"write_hist_log={BASE_PREFIX}", "log_hist_msec=1000"]


def _bg_placement(spec: InterferenceSpec, step: int, size_bytes: int | None) -> list[str]:
    """Each step reads/writes its own stripe of every target (backups of different data)."""
    if size_bytes is None:  # fractions of whatever size fio finds
        share = 100 // spec.steps
        if share == 0:
            raise ValueError(f"{spec.steps} steps cannot each get 1 % of the targets")
        return [f"offset={(step - 1) * share}%", f"size={share}%"]
    stripe = size_bytes // spec.steps // spec.bg_bs * spec.bg_bs
    if stripe == 0:
        raise ValueError(
            f"targets of {size_bytes} bytes are too small for {spec.steps} stripes of "
            f"{format_size(spec.bg_bs)}"
        )
    return [
        f"offset={fio_size((step - 1) * stripe)}",
        f"size={fio_size(stripe * len(spec.targets))}",
    ]


def _bg_section(spec: InterferenceSpec, step: int, size_bytes: int | None) -> list[str]:
    start = step * spec.interval_s
    lines = [
        f"[{bg_prefix(step)}]",
        *_rw(False, spec.bg_read_pct),
        f"bs={fio_size(spec.bg_bs)}",
        f"iodepth={spec.bg_iodepth}",
        rate_option(bg_job_rate(spec)),
        f"startdelay={fio_seconds(start)}",
        f"runtime={fio_seconds(total_seconds(spec) - start)}",
        *_bg_placement(spec, step, size_bytes),
    ]
    if spec.bg_read_pct < 100:
        lines.append("refill_buffers=1")
    return lines + _logs(bg_prefix(step))


def _header(spec: InterferenceSpec) -> list[str]:
    base = base_job_rate(spec)
    bg_rate = spec.bg_rate_iops_per_step
    return [
        "; arraybench interference test (dbi services mixed workload)",
        f"; base: random {format_size(spec.base_bs)}, read {spec.base_read_pct}%,"
        f" {effective_base_rate(spec):g} IOPS = {spec.base_jobs} jobs x {rate_option(base)}"
        f" (read,write), iodepth {spec.base_iodepth}, 0 s to {spec.base_stop:g} s",
        f"; background: +{bg_rate} IOPS of sequential {format_size(spec.bg_bs)},"
        f" read {spec.bg_read_pct}%, every {spec.interval_s:g} s ({spec.steps} steps),"
        f" each to the end at {total_seconds(spec):g} s",
        "; no stonewall: every section runs at once, startdelay staggers the steps",
        f"; re-run by hand: fio {JOBFILE_NAME} --output-format=json+ --output=fio.json",
    ]


def render_interference_jobfile(spec: InterferenceSpec, size_bytes: int | None) -> str:
    """fio job text for `spec`; `size_bytes` = bytes of each target to use (the smallest
    target's size), or None to let fio use each whole file or device."""
    sections = [_header(spec) + _global(spec), _base_section(spec, size_bytes)]
    sections += [_bg_section(spec, k, size_bytes) for k in range(1, spec.steps + 1)]
    return "\n\n".join("\n".join(lines) for lines in sections) + "\n"
