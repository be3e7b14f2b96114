"""Validity flags of one point: reasons its figures may not measure the storage.

Pure: the stored facts of a point in, flags out. Each flag says why, and what to change. The
campaign stores them as one `validity` finding beside the point; `show` and the reports read
them back.

Each flag is graded by what it does to the point's figure (`grade`, docs/validity.md):
*invalidating* (the figure is not the storage's: generator-bound, page cache, ramp too short,
stopped early, rate not reached or not kept, steady state asked and not attained, fio and the
kernel moved different bytes, hosts started far apart) leaves the point out of the headline figures
(`leaves_headline`); a *remark* (the same bytes in more or fewer requests, a host busy with
others while fio's own share was small, hosts a little out of step) keeps it in, with a mark.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from arraybench.analysis.fabric import ABOVE_CEILING, WorkloadCeiling, above_ceiling
from arraybench.analysis.findings import DISAGREEMENT, series
from arraybench.analysis.kernelcheck import (
    FILE_WRITE_BAND,
    MIN_SECONDS,
    KernelView,
    bytes_apart,
    describe,
    not_judged,
    requests_apart,
)
from arraybench.analysis.written import UNWRITTEN_SHARE
from arraybench.finding_kinds import VALIDITY, FlagData, ValidityFinding
from arraybench.records import CpuSample, Finding, NewPoint, Sample

if TYPE_CHECKING:  # `show` reads flags without loading the plan model
    from arraybench.plan.expand import Point

BUSY_PCT = 90.0  # host CPU busy (all CPUs) at or above this: no headroom for the generator
CORE_PCT = 90.0  # one fio job's usr + sys at or above this share of one CPU: fio is the limit
SHARE_PCT = 80.0  # fio's jobs together at or above this share of all CPUs: the same
FIO_MOST = 0.5  # a busy host is fio's doing when fio used at least this share of the busy time
RAMP_HEAD_S = 2  # the first seconds of the measured window checked for a rising ramp
RAMP_SHORT_BY = 0.9  # ...rising and below this share of the rest's median: ramp too short
RAMP_MIN_SECONDS = 6  # fewer 1-second samples: too short to tell a ramp from noise
# the measured window shorter than this share of ramp + duration (steady state not the cause):
# stopped early. fio's start and exit add to the wall time, never take from it
STOPPED_SHARE = 0.9
# a rate_iops workload below this share of its rate while fio had CPU to spare: not reached
RATE_SHARE = 0.9
# ... above this share of its rate, or its read share this many points off the planned mix:
# the rate was not applied as planned (fio capping each direction at the total: 2 x the rate
# at 50 % reads), whatever the CPU
RATE_OVER = 1.1
MIX_POINTS = 5.0
# hosts out of step beyond the plan's bound by at most this share of the measured window: a
# remark (the hosts overlapped for the rest of it); more: the total is not one load's
START_SKEW_SHARE = 0.02

KIND = VALIDITY.name  # the findings kind
FILE_BAND = f"{FILE_WRITE_BAND * 100:.0f} %"  # a file's writes: the journal's allowance
# the kinds judged from fio against the kernel's counters (analysis.kernelcheck)
KERNEL_KINDS = frozenset({"fio-kernel", "merged-io", "split-io", "fs-io"})

Grade = Literal["invalidating", "remark"]
INVALIDATING: Grade = "invalidating"
REMARK: Grade = "remark"
# the kinds that keep their point in the headline; any other kind (a later version's too)
# leaves it out: an unknown doubt is not waved through
REMARK_KINDS = frozenset({
    "merged-io",  # fio and the kernel moved the same bytes, the kernel in fewer requests
    "split-io",  # ... in more requests
    "host-busy",  # the host was busy, but mostly with others: fio's own share was small
    "start-skew",  # the hosts started out of step by a small share of the window
    "fs-io",  # a file in a filesystem: its journal's writes beside a writing workload's
    # reads of blocks this run did not write: maybe written before it, maybe not (a thin
    # LUN's unwritten blocks come from metadata): said, not judged
    "unwritten-region",
    "data-drift",  # incompressible data asked, the sample reduced (not a reduction study)
})  # fmt: skip


@dataclass(frozen=True)
class Flag:
    # invalidating: generator-bound, fio-kernel, not-steady, page-cache, ramp, stopped-early,
    # invalidating: generator-bound, fio-kernel, not-steady, page-cache, ramp, stopped-early,
    # rate-not-reached, rate-not-kept, start-spread, above-ceiling; remarks: REMARK_KINDS
    kind: str
    why: str
    change: str

    def as_dict(self) -> FlagData:
        return {"kind": self.kind, "why": self.why, "change": self.change}

    @property
    def grade(self) -> Grade:
        return grade(self.kind)


# each kind's threshold and the evidence behind it, as the report's appendix states them
# (docs/validity.md says the same, with the measurements)
THRESHOLDS = {
    "generator-bound": (f"fio's jobs >= {SHARE_PCT:.0f} % of the CPUs, or one job >= "
                        f"{CORE_PCT:.0f} % of a CPU at iodepth >= 2, or the host >= "
                        f"{BUSY_PCT:.0f} % busy and most of it fio's",
                        "null-engine runs beyond the core count: fio sets the pace"),
    "page-cache": ("buffered I/O on a file target", "the page cache can serve the reads"),
    "ramp": (f"the first {RAMP_HEAD_S} s rising, from below {RAMP_SHORT_BY:.0%} of the rest's "
             "median", "the window's mean is still the warm-up's"),
    "not-steady": ("steady state asked, fio did not attain it", "the plan asked for it"),
    "stopped-early": (f"fio ran < {STOPPED_SHARE:.0%} of warm-up + duration (of the duration "
                      "after a logged warm-up)",
                      "the point measured less than the plan asked"),
    "rate-not-reached": (f"< {RATE_SHARE:.0%} of the rate x workers, fio not the limit",
                         "its latency is a saturated device's"),
    "rate-not-kept": (f"> {RATE_OVER:.0%} of the rate x workers, or the read share > "
                      f"{MIX_POINTS:g} points off the planned mix",
                      "one cap per direction on a 70/30 job: 2 x the rate at 50 % reads"),
    "fio-kernel": ("fio and /proc/diskstats > 10 % apart in MB/s, second by second too, "
                   f"over >= {MIN_SECONDS} s (a file's writes: > +{FILE_BAND})",
                   "a competing writer on a loop device: 1.15-18.7 x fio's bytes; split or "
                   "merged I/O: <= 9 % apart"),
    "fs-io": (f"a file in a filesystem, a writing workload: the kernel's MB/s +10 % to "
              f"+{FILE_BAND} over fio's", "the filesystem's journal and metadata "
              "writes reach the device beside fio's"),
    "above-ceiling": (f"MB/s > {ABOVE_CEILING:.0%} of the declared fabric's payload ceiling",
                      "no more can cross the links: a cache's figure, or the declared fabric "
                      "is wrong"),
    "start-spread": (f"hosts further apart than the plan's bound, > {START_SKEW_SHARE:.0%} "
                     "of the window", "the total is not one load's"),
    "merged-io": ("MB/s within 10 %, fewer requests", "merged 4 KiB reads on a loop device: "
                  "0.06 x the requests, 0.91-1.07 x the bytes"),
    "split-io": ("MB/s within 10 %, more requests", "1 MiB I/O on a loop device cut at "
                 "max_sectors_kb 64: 16 x the requests, 1.00-1.06 x the bytes"),
    "host-busy": (f"host >= {BUSY_PCT:.0f} % busy, fio's own share small", "2 jobs beside "
                  "CPU burners: fio used 27 % of the CPUs and measured the idle host's IOPS"),
    "data-missed": ("the workload's data, sampled through fio before the run, > 10 % from a "
                    "requested compression or dedupe ratio", "a reduction study's figure is "
                    "the ratio's: fio's repeat-mode dedupe at 2:1 reached 1.94-2.04:1, and a "
                    "block smaller than the granule 1.15:1"),
    "data-drift": ("incompressible data asked, its sample > 10 % reducible",
                   "the figure is still the storage's, on data an array could reduce"),
    "generator-stall": ("an open-loop point's stall while fio's own job processes were "
                        "stopped (analysis/openloop.py)", "the I/O that was late was never "
                        "issued: the lateness is the host's, not the storage's"),
    "start-skew": (f"hosts beyond the plan's bound by <= {START_SKEW_SHARE:.0%} of the window",
                   "they overlapped for 98 % of it or more"),
    "unwritten-region": (f"a read point on a block device whose region this run's earlier "
                         f"points left > {UNWRITTEN_SHARE:.0%} unwritten (analysis/written.py)",
                         "a thin LUN answers unwritten blocks from metadata, not media"),
}  # fmt: skip


def grade(kind: str) -> Grade:
    """What a flag of this kind does to its point's figure (module doc)."""
    return REMARK if kind in REMARK_KINDS else INVALIDATING


def leaves_headline(flags: Iterable[Flag | str]) -> bool:
    """Whether a point with these flags (or flag kinds) leaves the headline figures: one
    invalidating flag is enough; remarks alone keep it in. The one predicate analysis.headline
    and every section apply (docs/headline.md)."""
    return any(grade(f if isinstance(f, str) else f.kind) == INVALIDATING for f in flags)


@dataclass(frozen=True)
class PointFacts:
    """What the checks need of one point, as the store or the campaign holds it."""

    jobs: int
    iodepth: int = 1  # per job
    usr_cpu: float | None = None  # fio's, summed over the jobs: % of one CPU
    sys_cpu: float | None = None
    cpu_busy_pct: float | None = None  # the monitor's host CPU busy, % of all CPUs
    cpus: int | None = None  # the load generator's CPU count
    steady_asked: bool = False  # timing.steady set in the plan
    steady_attained: int | None = None  # fio's verdict
    direct: bool = True
    file_target: bool = False  # a regular file (the page cache can serve it)
    monitor_flags: Sequence[str] = ()  # the monitor's lines (before `kernel`: its judgments)
    kernel: KernelView | None = None  # fio against the kernel (analysis.kernelcheck)
    sequential: bool = False  # the workload's pattern
    iops: Sequence[float] = field(default_factory=list)  # 1-second totals of the window
    start_spread_ms: float | None = None  # many hosts: last host's first I/O - the first's
    max_start_spread_ms: float | None = None  # the plan's bound
    planned_s: float | None = None  # what the measured fio run was to last: ramp + duration
    measured_s: float | None = None  # duration: the window the figures are from
    elapsed_s: float | None = None  # fio's wall time (the measured run's)
    warmup_apart: bool = False  # the ramp ran as its own fio run before (timing.log_ramp)
    rate_iops: int | None = None  # the workload's rate_iops (per job, both directions)
    read_pct: int = 100  # the planned mix
    read_share_pct: float | None = None  # the mix achieved: reads in % of the I/Os
    # fio's own total IOPS of the point (its I/Os over its runtime, all hosts): the figure the
    # report shows, judged against the rate; None: the mean of `iops` stands in for it
    total_iops: float | None = None
    mb_per_s: float | None = None  # user data moved, both directions (10^6 bytes/s)
    ceiling: WorkloadCeiling | None = None  # the plan's fabric: what its links can carry
    # a read point on block devices: the share of its read region this run had not written
    # before it (analysis/written.py; None: not judged, e.g. a file)
    unwritten_share: float | None = None


FEWER_JOBS = "use fewer jobs per host, more hosts, or a cheaper ioengine"


def generator_bound(f: PointFacts) -> Flag | None:
    """The load generator, not the storage, may have set the pace (the issue's two triggers):
    fio's own jobs left no CPU headroom (together >= SHARE_PCT of the CPUs, or one job near a
    core at a deep queue), or the host's CPU as a whole was >= BUSY_PCT busy while fio ran.
    Each flag's `why` says which fired, with its figures."""
    fio_cpu = None if f.usr_cpu is None else f.usr_cpu + (f.sys_cpu or 0.0)  # % of one CPU
    if f.cpus and fio_cpu is not None and fio_cpu >= SHARE_PCT * f.cpus:
        return Flag("generator-bound", f"fio's own {f.jobs} job(s) used {fio_cpu / f.cpus:.0f} "
                    f"% of the host's {f.cpus} CPUs (usr + sys, >= {SHARE_PCT:.0f} %)",
                    FEWER_JOBS)  # fmt: skip
    # one job near a core with a deep queue: it cannot keep the queue full (fio #1501); at
    # iodepth 1 a job's CPU is the latency it measures, and the ladder adds jobs itself
    if fio_cpu is not None and f.sys_cpu is not None and f.jobs >= 1 and f.iodepth >= 2:
        per_job = fio_cpu / f.jobs
        if per_job >= CORE_PCT:
            return Flag(
                "generator-bound",
                f"fio's jobs used {per_job:.0f} % of a CPU each "
                f"(usr + sys, >= {CORE_PCT:.0f} %, at iodepth {f.iodepth})",
                "spread the load over more jobs (workers) at a lower iodepth each",
            )
    if f.cpu_busy_pct is not None and f.cpu_busy_pct >= BUSY_PCT:
        return host_busy(f, fio_cpu)
    return None


def host_busy(f: PointFacts, fio_cpu: float | None) -> Flag:
    """The host's CPU >= BUSY_PCT busy while fio ran: no headroom for the load generator. It
    is fio's doing (generator-bound) when its jobs could fill every CPU and used most of the
    busy time; else other processes (or the kernel) took it (host-busy). Both flag the point:
    only the name differs (a host kept busy by others once had every point with as many jobs
    as CPUs called generator-bound, though fio used a fifth of the CPUs)."""
    busy = f"host CPU {f.cpu_busy_pct:.0f} % busy while fio ran (>= {BUSY_PCT:.0f} %)"
    cpus = f" on {f.cpus} CPUs" if f.cpus else ""
    idle = "run on an otherwise idle host"
    if fio_cpu is None or not f.cpus:  # fio's own share unknown: the job count must tell
        if f.cpus and f.jobs < f.cpus:
            return Flag("host-busy", f"{busy} with {f.jobs} fio job(s){cpus}: fewer jobs "
                        "than CPUs, other processes competed", idle)  # fmt: skip
        return Flag("generator-bound", f"{busy} with {f.jobs} fio job(s){cpus} (fio's own "
                    "CPU not measured: its jobs could fill every CPU)", FEWER_JOBS)  # fmt: skip
    share = fio_cpu / f.cpus  # % of all CPUs, as the host's busy is
    own = f"fio's own {f.jobs} job(s) used {share:.0f} % of the {f.cpus} CPUs (usr + sys)"
    if f.jobs >= f.cpus and share >= FIO_MOST * (f.cpu_busy_pct or 0.0):
        return Flag("generator-bound", f"{busy}, most of it fio's: {own}", FEWER_JOBS)
    return Flag(
        "host-busy",
        f"{busy}; {own}, the rest other processes or the kernel",
        f"{idle}, or find what else used the CPU (the points' CPU samples)",
    )


def fio_kernel(f: PointFacts) -> list[Flag]:
    """fio against the kernel's counters: the stored comparison judged (`kernel_flags`), or,
    given only the monitor's lines (as it wrote them before the comparison was stored), those."""
    if f.kernel is not None:
        return kernel_flags(f, f.kernel)
    return _monitor_lines(f)


NOTHING_TO_CHANGE = ("nothing: the bytes agree (the block layer's request size is the device's, "
                     "e.g. max_sectors_kb)")  # fmt: skip


def kernel_flags(f: PointFacts, v: KernelView) -> list[Flag]:
    """The comparison judged, bytes first, its one number (`KernelView.bytes_pct`, the points
    table's column) in the flag's words: not judged on too few seconds or a one-second swing
    (kernelcheck.not_judged, said in the run's notes); the bytes apart: other I/O on the device
    (or the page cache), invalidating, except a writing workload's file in a filesystem up to
    FILE_WRITE_BAND more (its journal, a remark); the same bytes in other requests: merged or
    split I/O, a remark. The hint and the change follow the job: the page cache and read-ahead
    only where fio's I/O is buffered, "set direct" only where it is not direct."""
    if not_judged(v) is not None:
        return []
    pct = v.bytes_pct
    compared = f"{v.seconds} s compared"
    if bytes_apart(v):
        more = pct is None or pct > 0
        text = describe("MB/s", v.fio_mbps, v.kernel_mbps, v)
        if (f.file_target and f.read_pct < 100 and pct is not None and 0 < pct
                <= FILE_WRITE_BAND * 100):  # fmt: skip
            return [Flag("fs-io", f"{text} (a file in a filesystem: its journal and metadata "
                         f"writes; {compared})", "nothing: expected of a file's writes (a block "
                         "device target measures the storage's alone)")]  # fmt: skip
        hint, change = _bytes_hint(f, more)
        return [Flag("fio-kernel", f"{text} ({hint}; {compared}): the bytes differ", change)]
    if requests_apart(v):
        fewer = v.kernel_iops < v.fio_iops
        text = describe("IOPS", v.fio_iops, v.kernel_iops, v)
        how = "fewer requests: merged I/O" if fewer else "more requests: split I/O"
        bytes_said = "" if pct is None else f"MB/s {pct:+.1f} %, "
        return [Flag("merged-io" if fewer else "split-io",
                     f"{text} (same bytes in {how}; {bytes_said}{compared})",
                     NOTHING_TO_CHANGE)]  # fmt: skip
    return []


def _bytes_hint(f: PointFacts, more: bool) -> tuple[str, str]:
    """Why fio's bytes and the device's differ, as the job file allows, and what to change."""
    reads, writes = f.read_pct > 0, f.read_pct < 100
    if not f.direct:  # buffered: the page cache stands between fio and the device
        change = "set direct: true, then re-run"
        if not more:
            return "the page cache served fio", change
        if reads and f.sequential:
            return "read-ahead of buffered sequential reads", change
        if writes:
            return "writeback of buffered writes", change
        return "other I/O on the device", change
    keep_off = "keep other I/O off the device (the point's host samples show when), then re-run"
    if more and f.file_target and writes:
        return (f"other I/O on the device, beyond the {FILE_BAND} a filesystem's "
                "journal may add", keep_off)  # fmt: skip
    if more:
        return "other I/O on the device", keep_off
    if f.file_target and reads:
        return ("reads of the file's holes or unwritten extents, answered without I/O",
                "lay the file out fully written before the run")  # fmt: skip
    return (
        "fio's I/O counted on another device (a stacked dm, md or multipath device?)",
        "check the devices behind the targets (`arraybench plan check`)",
    )


def _monitor_lines(f: PointFacts) -> list[Flag]:
    """The monitor's disagreements of fio with the kernel's own counters, bytes first: the
    same bytes (MB/s within the monitor's tolerance) in a different number of requests is the
    block layer merging or splitting them, a remark; different bytes is other I/O on the
    device (or the page cache), invalidating. Evidence: docs/validity.md."""
    found = [(m, line) for line in f.monitor_flags if (m := DISAGREEMENT.search(line))]
    # the monitor says "same bytes" only where the MB/s agreed; any other line (a later
    # version's wording too) is a real disagreement
    same = [(m, line) for m, line in found if "same bytes" in line]
    other = [line for m, line in found if "same bytes" not in line]
    if other:  # the bytes' line first: the request count's follows from it
        other.sort(key=lambda line: " IOPS " in line)
        why = f"{'; '.join(other)}: the bytes differ"
        change = "keep other I/O off the device (or set direct: true), then re-run"
        return [Flag("fio-kernel", why, change)]
    return [Flag("merged-io" if m.group(2) == "fewer" else "split-io", line,
                 "nothing: the bytes agree (the block layer's request size is the device's, "
                 "e.g. max_sectors_kb)") for m, line in same]  # fmt: skip


def not_steady(f: PointFacts) -> Flag | None:
    if f.steady_asked and f.steady_attained == 0:
        return Flag("not-steady", "the plan asked for steady state and fio did not attain it",
                    "lengthen timing.duration or loosen timing.steady")  # fmt: skip
    return None


def page_cache(f: PointFacts) -> Flag | None:
    if f.file_target and not f.direct:
        return Flag("page-cache", "buffered I/O on a file: the page cache may have served it",
                    "set direct: true, or use a file much larger than the memory")  # fmt: skip
    return None


def ramp_too_short(f: PointFacts) -> Flag | None:
    """The first seconds of the window still rising towards the level of the rest."""
    iops = list(f.iops)
    if len(iops) < RAMP_MIN_SECONDS:
        return None
    head, rest = iops[:RAMP_HEAD_S], sorted(iops[RAMP_HEAD_S:])
    level = rest[len(rest) // 2]
    rising = all(a < b for a, b in zip(head, [*head[1:], level], strict=True))
    if level <= 0 or not rising or head[0] >= RAMP_SHORT_BY * level:
        return None
    return Flag("ramp", f"the first {RAMP_HEAD_S} s rose from {head[0] / level:.0%} of the "
                "rest's median", "lengthen timing.ramp")  # fmt: skip


def start_spread(f: PointFacts) -> Flag | None:
    """Hosts started further apart than the plan's bound: a remark while the spread is at most
    START_SKEW_SHARE of the measured window, invalidating beyond."""
    spread, bound = f.start_spread_ms, f.max_start_spread_ms
    if spread is None or bound is None or spread <= bound:
        return None
    window = (f.measured_s or 0.0) * 1000
    small = window > 0 and spread <= START_SKEW_SHARE * window
    share = f", {spread / window:.1%} of the {window / 1000:g} s window" if window else ""
    return Flag("start-skew" if small else "start-spread", f"the hosts started {spread:,.0f} ms "
                f"apart (bound {bound:,.0f} ms{share})", "raise start_lead, or check the "
                "hosts' clocks (`arraybench hosts check`)")  # fmt: skip


def stopped_early(f: PointFacts) -> Flag | None:
    """fio ran for less than STOPPED_SHARE of what its run was planned to last, and not because
    steady state ended it (`timing.steady`): the point measured less than the plan asked. A
    logged warm-up (`warmup_apart`) ran as its own fio run before: the measured run was
    planned for the duration alone (judged on ramp + duration, every such point read as
    stopped at duration / (ramp + duration), 80 % for AERODISK's 15 min + 1 h)."""
    if not f.planned_s or f.elapsed_s is None or (f.steady_asked and f.steady_attained):
        return None
    planned = f.planned_s
    if f.warmup_apart and f.measured_s:
        planned = f.measured_s
    if f.elapsed_s >= STOPPED_SHARE * planned:
        return None
    what = "duration; the warm-up ran before it" if f.warmup_apart else "ramp + duration"
    return Flag("stopped-early", f"fio ran {f.elapsed_s:,.1f} s of the planned "
                f"{planned:g} s ({what}, < {STOPPED_SHARE:.0%})",
                "see the point's fio output; re-run the point")  # fmt: skip


def rate_misses(
    planned_iops: float, planned_read_pct: float, achieved_iops: float,
    achieved_read_pct: float | None, rate_tolerance_pct: float, mix_points: float,
) -> list[str]:  # fmt: skip
    """How a rate-limited load missed its plan, each as a phrase, none when it was kept: its
    total more than `rate_tolerance_pct` % below or above the planned total, its read share
    more than `mix_points` points off the planned mix. The one rule of the validity flags
    and the response-time curve's "Reached" (docs/validity.md)."""
    misses = []
    if planned_iops > 0:
        share = achieved_iops / planned_iops
        if abs(share - 1) * 100 > rate_tolerance_pct:
            misses.append(f"{achieved_iops:,.0f} IOPS, {share * 100:.0f} % of the "
                          f"{planned_iops:,.0f} planned")  # fmt: skip
    mixed = 0 < planned_read_pct < 100 and achieved_read_pct is not None and achieved_iops > 0
    if mixed and abs((achieved_read_pct or 0.0) - planned_read_pct) > mix_points:
        misses.append(f"{achieved_read_pct:.1f} % reads, planned {planned_read_pct:g} %")
    return misses


def rate_not_reached(f: PointFacts, bound: bool) -> Flag | None:
    """A rate_iops workload that did not run its rate at its mix. Short of the total while
    fio had CPU to spare: its latency is that of a saturated device (`rate-not-reached`).
    Over the total, or off the mix: the rate was not applied as planned (`rate-not-kept`),
    whatever the CPU. The rate is the total of both directions at the planned mix
    (`plan.rate`)."""
    if not f.rate_iops or len(f.iops) < 2:
        return None
    asked = f.rate_iops * max(f.jobs, 1)
    # fio's total, not the mean of the logged seconds: on many hosts a second one host logged
    # alone (their starts apart) halves that second's sum and pulled the mean under the rate
    got = f.total_iops if f.total_iops else statistics.fmean(f.iops)
    planned = f"(rate_iops {f.rate_iops} x {f.jobs} job(s) at {f.read_pct} % reads)"
    kept = rate_misses(asked, f.read_pct, got, f.read_share_pct, (RATE_OVER - 1) * 100,
                       MIX_POINTS)  # fmt: skip
    if got > RATE_OVER * asked or (kept and got >= RATE_SHARE * asked):
        return Flag("rate-not-kept", f"{'; '.join(kept)} {planned}: the load ran was not "
                    "the one planned", "check the job file's rate (rate_iops=R,W: the "
                    "total split by the mix); re-run the point")  # fmt: skip
    if bound or got >= RATE_SHARE * asked:
        return None
    mix = f", {f.read_share_pct:.1f} % reads" if f.read_share_pct is not None else ""
    return Flag("rate-not-reached", f"{got:,.0f} IOPS{mix} of the {asked:,.0f} asked "
                f"{planned}, < {RATE_SHARE:.0%}, with fio's CPU to spare: the storage set "
                "the pace", "lower rate_iops, or read the point as a saturation "
                "point")  # fmt: skip


def read_share_pct(samples: Sequence[Sample]) -> float | None:
    """Reads in % of the I/Os of a point's 1-second samples; None without I/O."""
    reads = sum(s.read_iops or 0.0 for s in samples)
    total = reads + sum(s.write_iops or 0.0 for s in samples)
    return 100.0 * reads / total if total > 0 else None


def beyond_fabric(f: PointFacts) -> Flag | None:
    """More user data than the declared links can carry (analysis/fabric.py): either the
    figure is a cache's (the host's page cache, a loop device's backing file, a controller
    answering unwritten blocks from metadata), not the storage's over this fabric, or the plan's
    `fabric:` names fewer or slower links than there are. Both make the figure unfit to report
    against the fabric, so it is invalidating."""
    if f.ceiling is None or f.mb_per_s is None or not above_ceiling(f.mb_per_s, f.ceiling):
        return None
    c = f.ceiling
    hosts = f" x {c.hosts} hosts" if c.hosts > 1 else ""
    return Flag("above-ceiling", f"{f.mb_per_s:,.0f} MB/s is {f.mb_per_s / c.mb_per_s:.0%} of "
                f"the payload ceiling of {c.fabric}{hosts} ({c.mb_per_s:,.0f} MB/s): more than "
                "the links can carry", "check the plan's fabric: (links per host, speed); if "
                "it is right, the figure is a cache's: use direct I/O on the device and a "
                "working set larger than the caches")  # fmt: skip


def unwritten_region(f: PointFacts) -> Flag | None:
    """A read point on a block device whose region this run had not (fully) written: if
    nothing wrote it before the run either, a thin LUN (or an SSD's unmapped blocks) answered
    from metadata, faster than media. A remark: the run cannot know what was written before it."""
    if f.unwritten_share is None or f.read_pct <= 0 or f.unwritten_share <= UNWRITTEN_SHARE:
        return None
    return Flag("unwritten-region", f"about {f.unwritten_share:.0%} of the region it read was "
                "not written by this run's earlier points; if nothing wrote it before the run, "
                "a thin LUN answers those blocks from metadata (zeros), faster than media",
                "write the target first: precondition: {passes: 1} in the plan, or a write "
                "workload over the region before the reads")  # fmt: skip


def point_flags(facts: PointFacts) -> list[Flag]:
    bound = generator_bound(facts)
    fio_limit = bound is not None and bound.kind == "generator-bound"
    found = [bound, not_steady(facts), page_cache(facts), ramp_too_short(facts),
             start_spread(facts), stopped_early(facts),
             rate_not_reached(facts, fio_limit), beyond_fabric(facts),
             unwritten_region(facts)]  # fmt: skip
    return [f for f in found if f is not None] + fio_kernel(facts)


def data_flags(point: Point, misses: Sequence[str]) -> list[Flag]:
    """A workload's data that missed its ratios: invalidating when the workload asked for
    reduction (its figure is the ratio's), a remark on data asked incompressible."""
    if not misses or not point.writes:
        return []
    kind = "data-missed" if point.data.reduced else "data-drift"
    return [Flag(kind, f"the data sampled before the run: {'; '.join(misses)}",
                 "ask for a ratio fio reaches at this block size (plan check --data)")]  # fmt: skip


def generator_stall(stalls: Sequence[tuple[float, float]]) -> Flag | None:
    """An open-loop point whose load generator stopped ((start s, length s) of each such
    stall): its availability figures (stall, unserved demand, corrected latency) are the
    host's, invalidating."""
    if not stalls:
        return None
    said = ", ".join(f"{length:g} s at {start:g} s" for start, length in stalls)
    return Flag(
        "generator-stall",
        f"fio's job processes were stopped while I/O was due "
        f"({said}): the stall is the load generator's, not the storage's",
        "keep the load host free of freezes (SIGSTOP, a VM pause, CPU starvation)",
    )


def finding_data(flags: Sequence[Flag]) -> ValidityFinding:
    return {"flags": [f.as_dict() for f in flags]}


def flags_of(data: ValidityFinding) -> list[Flag]:
    """A stored `validity` finding's flags back (unknown keys of later versions ignored)."""
    return [_regraded(Flag(str(d.get("kind", "")), str(d.get("why", "")),
                           str(d.get("change", ""))))
            for d in data.get("flags", []) if isinstance(d, dict)]  # fmt: skip


def _regraded(flag: Flag) -> Flag:
    """A `fio-kernel` flag stored before the bytes-first grading, on request counts alone
    (the monitor's "same bytes in fewer/more requests"), read as the remark it is."""
    if flag.kind == "fio-kernel" and "same bytes in" in flag.why:
        return Flag("merged-io" if "fewer requests" in flag.why else "split-io", flag.why,
                    flag.change)  # fmt: skip
    return flag


def busy_pct(cpu: Sequence[CpuSample]) -> float | None:
    """The host's CPU busy while fio ran: the median of the whole seconds, the first and the
    last left out (fio starting and exiting in them dilute a 2-second point's mean by 20 %)."""
    inner = list(cpu[1:-1]) if len(cpu) >= 3 else list(cpu)
    return statistics.median(c.busy_pct for c in inner) if inner else None


def point_finding(
    point: Point,
    record: NewPoint,
    samples: Sequence[Sample],
    *,
    monitor_flags: Sequence[str] = (),
    cpu: Sequence[CpuSample] = (),
    cpus: int | None = None,
    file_target: bool = False,
    max_start_spread_ms: float | None = None,
    warmup_apart: bool = False,
    kernel: KernelView | None = None,
    mb_per_s: float | None = None,
    ceiling: WorkloadCeiling | None = None,
    unwritten_share: float | None = None,
    data_misses: Sequence[str] = (),
    total_iops: float | None = None,
) -> Finding | None:
    """The `validity` finding of a point just measured (None when nothing is wrong).
    `warmup_apart`: its ramp ran as a logged fio run of its own before the measured one;
    `data_misses`: how its workload's sampled data missed the requested ratios."""
    facts = PointFacts(
        jobs=record.jobs or 0, iodepth=record.iodepth or 1,
        usr_cpu=record.usr_cpu,
        sys_cpu=record.sys_cpu, cpu_busy_pct=busy_pct(cpu), cpus=cpus,
        steady_asked=point.timing.steady is not None,
        steady_attained=record.steady_attained, direct=point.direct,
        file_target=file_target, monitor_flags=monitor_flags, iops=series(samples)[1],
        kernel=kernel, sequential=point.workload.pattern == "sequential",
        start_spread_ms=record.start_spread_ms, max_start_spread_ms=max_start_spread_ms,
        planned_s=point.timing.ramp + point.timing.duration,
        measured_s=point.timing.duration, elapsed_s=record.runtime_s,
        rate_iops=point.workload.rate_iops, read_pct=record.read_pct,
        read_share_pct=read_share_pct(samples), total_iops=total_iops,
        warmup_apart=warmup_apart,
        mb_per_s=mb_per_s, ceiling=ceiling, unwritten_share=unwritten_share,
    )  # fmt: skip
    flags = point_flags(facts) + data_flags(point, data_misses)
    return VALIDITY.new(finding_data(flags)) if flags else None


def flags_by_point(findings: Sequence[Finding]) -> dict[int, list[Flag]]:
    """Stored `validity` findings -> each point id's flags."""
    found: dict[int, list[Flag]] = {}
    for f in findings:
        if f.kind == KIND and f.point_id is not None:
            found.setdefault(f.point_id, []).extend(flags_of(VALIDITY.of(f)))
    return found
