"""fio per-interval logs: bw/iops/lat/clat/slat logs and histogram (clat_hist) logs.

Layouts fio has written over the years (one sample per line, comma separated):

* fio 2.x:        ``time, value, ddir, bs`` (``, offset`` with log_offset=1)
* fio 3.x:        ``time, value, ddir, bs, prio`` (``time, value, ddir, bs, offset, prio``
                  with log_offset=1; the newest versions may add an issue-time column)
* histogram logs: ``time, ddir, bs, bin0, bin1, ...`` (1216 bins before fio 2.99, 1856 after,
                  fewer with log_hist_coarseness)

Values stay in the log's own units: bw KiB/s, iops I/Os per second of the window, latency ns
(us before fio 3.0). ``time`` is the END of the averaging window in ms.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

from arraybench.engines.fio.results import IntervalSample
from arraybench.engines.measurement import DirStats, Measurement
from arraybench.errors import OutputParseError
from arraybench.userfiles import InputFileError, read_whole

# fio's latency histogram geometry (stat.h): 64 buckets per power-of-two group.
FIO_IO_U_PLAT_BITS = 6
FIO_IO_U_PLAT_VAL = 1 << FIO_IO_U_PLAT_BITS
# Bin counts of a full-resolution histogram: 19 groups (fio < 2.99, values in us) and
# 29 groups (fio >= 2.99, values in ns).
HIST_BINS_USEC = 19 * FIO_IO_U_PLAT_VAL  # 1216
HIST_BINS_NSEC = 29 * FIO_IO_U_PLAT_VAL  # 1856
_MAX_COARSENESS = 6  # fio's log_hist_coarseness range is 0..6

# a log is read whole: beyond this (a log of every I/O of a long run) it is refused, said
MAX_LOG_BYTES = 128 << 20
LAT_KINDS = ("lat", "clat", "slat")
RATE_KINDS = ("iops", "bw")

LogSource = str | os.PathLike[str]


def plat_idx_to_val(idx: int) -> int:
    """Value fio assigns to histogram bucket ``idx`` (stat.c plat_idx_to_val).

    Buckets below 128 hold exact values; above, each group of 64 buckets covers one power of
    two and fio reports the middle of the bucket. fio computes ``base + (k + 0.5) * 2**e`` in
    floating point; with e >= 1 that is always a whole number, so integers are exact here.
    """
    if idx < 0:
        raise ValueError(f"histogram bucket index must be >= 0, got {idx}")
    if idx < (FIO_IO_U_PLAT_VAL << 1):
        return idx
    error_bits = (idx >> FIO_IO_U_PLAT_BITS) - 1
    base = 1 << (error_bits + FIO_IO_U_PLAT_BITS)
    k = idx % FIO_IO_U_PLAT_VAL
    return base + k * (1 << error_bits) + (1 << (error_bits - 1))


def _bucket_lower_edge(idx: int) -> int:
    """Smallest latency that falls into bucket ``idx`` (inverse of plat_val_to_idx)."""
    if idx < (FIO_IO_U_PLAT_VAL << 1):
        return idx
    error_bits = (idx >> FIO_IO_U_PLAT_BITS) - 1
    base = 1 << (error_bits + FIO_IO_U_PLAT_BITS)
    return base + (idx % FIO_IO_U_PLAT_VAL) * (1 << error_bits)


def _hist_geometry(nbins: int) -> tuple[int, int]:
    """(coarseness, unit multiplier to ns) for a histogram log row of ``nbins`` bins."""
    for coarseness in range(_MAX_COARSENESS + 1):
        if nbins << coarseness == HIST_BINS_NSEC:
            return coarseness, 1
        if nbins << coarseness == HIST_BINS_USEC:
            return coarseness, 1000
    raise OutputParseError(
        f"a fio histogram log row has {nbins} bins, which matches no fio version",
        f"expected {HIST_BINS_NSEC} (fio >= 2.99) or {HIST_BINS_USEC} (older fio), "
        "possibly divided by 2**log_hist_coarseness",
    )


def hist_bin_value_ns(index: int, nbins: int) -> float:
    """Latency in ns that bin ``index`` of a histogram log row with ``nbins`` bins stands for.

    ``nbins`` tells the fio era: 1216 bins are microseconds (fio < 2.99, multiplied by 1000
    here), 1856 are nanoseconds. With log_hist_coarseness=c fio sums 2**c neighbouring
    buckets; such a bin is given the middle of its latency range, as fio's own
    fiologparser_hist.py does.
    """
    coarseness, to_ns = _hist_geometry(nbins)
    if not 0 <= index < nbins:
        raise ValueError(f"bin index {index} is outside 0..{nbins - 1}")
    if coarseness == 0:
        return float(plat_idx_to_val(index) * to_ns)
    stride = 1 << coarseness
    lower = _bucket_lower_edge(index * stride)
    upper = _bucket_lower_edge((index + 1) * stride)
    return (lower + upper) / 2 * to_ns


# --------------------------------------------------------------------------- reading


def _read_source(source: LogSource) -> tuple[str, str]:
    """(text, name for messages). A str with a newline or comma that is no file is log text."""
    if isinstance(source, str):
        looks_like_text = "\n" in source or ("," in source and not os.path.isfile(source))
        if looks_like_text:
            return source, "fio log text"
    path = Path(source)
    try:  # read whole: a regular file only, at most MAX_LOG_BYTES (userfiles.py)
        return read_whole(path, "a fio log", MAX_LOG_BYTES).decode("utf-8", "replace"), str(path)
    except InputFileError as exc:
        raise OutputParseError(exc.message, exc.hint) from None
    except OSError as exc:
        raise OutputParseError(
            f"cannot read fio log {path}: {exc.strerror or exc}",
            "check the path; fio names logs <prefix>_<kind>.<job>.log",
        ) from exc


def _fields(line: str) -> list[str]:
    """Comma-separated fields, without the empty field a trailing ", " leaves behind."""
    parts = [p.strip() for p in line.split(",")]
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _int_field(text: str) -> int:
    # The newest fio prints prio as 0x%04x; older fields are decimal. float() accepts values
    # some tools rewrite as "1000.0".
    if text.lower().startswith("0x"):
        return int(text, 16)
    try:
        return int(text)
    except ValueError:
        as_float = float(text)
        if not as_float.is_integer():
            raise
        return int(as_float)


def _bad_line(name: str, lineno: int, line: str, why: str) -> OutputParseError:
    shown = line if len(line) <= 80 else line[:77] + "..."
    return OutputParseError(
        f"{name}: line {lineno}: {why}: {shown!r}",
        "is this really a fio bw/iops/lat log? the file may be truncated or edited",
    )


def _interval_sample(fields: list[str]) -> IntervalSample:
    time_ms, value, ddir, bs = fields[:4]
    # Only a 5-column row says unambiguously that column 5 is the priority (fio 3.x). With
    # 6+ columns the order depends on log_offset / log_issue_time (offset, prio, issue time),
    # so prio is left unknown rather than guessed.
    prio = _int_field(fields[4]) if len(fields) == 5 else None
    return IntervalSample(
        time_ms=_int_field(time_ms),
        value=float(value),
        ddir=_int_field(ddir),
        bs=_int_field(bs),
        prio=prio,
    )


def parse_interval_log(source: LogSource) -> list[IntervalSample]:
    """Rows of a fio bw/iops/lat/clat/slat log (path, or the log text itself).

    Blank lines are skipped; a row with fewer than 4 columns or a non-number raises
    OutputParseError naming the line.
    """
    text, name = _read_source(source)
    samples: list[IntervalSample] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = _fields(line)
        if len(fields) < 4:
            raise _bad_line(name, lineno, line, f"expected at least 4 columns, found {len(fields)}")
        try:
            samples.append(_interval_sample(fields))
        except ValueError as exc:
            raise _bad_line(name, lineno, line, f"not a number ({exc})") from exc
    return samples


def parse_hist_log(source: LogSource) -> list[tuple[int, int, int, list[int]]]:
    """Rows ``(time_ms, ddir, bs, bins)`` of a fio histogram log (write_hist_log).

    Each row holds the bucket counts of I/Os completed since the previous row. Every row must
    have the same number of bins; map a bin to its latency with ``hist_bin_value_ns``.
    """
    text, name = _read_source(source)
    rows: list[tuple[int, int, int, list[int]]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = _fields(line)
        if len(fields) < 4:
            raise _bad_line(name, lineno, line, "expected time, ddir, bs and bins")
        try:
            time_ms, ddir, bs, *bins = (_int_field(f) for f in fields)
        except ValueError as exc:
            raise _bad_line(name, lineno, line, f"not a number ({exc})") from exc
        if rows and len(bins) != len(rows[0][3]):
            why = f"{len(bins)} bins where line 1 of the data has {len(rows[0][3])}"
            raise _bad_line(name, lineno, line, why)
        rows.append((time_ms, ddir, bs, bins))
    return rows


# --------------------------------------------------------------------------- per-second grid


def second_of(time_ms: int) -> int:
    """Whole second a sample belongs to: round(time_ms / 1000), halves rounded UP.

    fio stamps a sample at the END of its window with a few ms of jitter (4001, 11006), so
    rounding (not flooring) puts it in the right second. Python's round() rounds halves to
    even, which would file 500 ms and 2500 ms windows inconsistently; half-up keeps every
    500 ms window with the second it ends in.
    """
    return (time_ms + 500) // 1000


def full_seconds(logs: list[list[IntervalSample]]) -> set[int]:
    """Seconds every job logged: jobs start a few ms apart, so the first and last seconds of a
    point hold only some jobs' rows; their sums would show a false ramp or drop."""
    covered = [{second_of(s.time_ms) for s in job} for job in logs if job]
    return set.intersection(*covered) if covered else set()


def windows_ms(samples: list[IntervalSample]) -> list[int]:
    """The averaging window each row covers, in ms: the time since the same direction's
    previous row (the first row's since the job start), at least 1 ms.

    fio ends a job's log with a flush row for the partial last window, stamped when the job
    ended, sometimes within the same second as the last full window: its window is short,
    and a mean over the second must weigh it by that, not count it as a full window.
    """
    last: dict[int, int] = {}
    found = []
    for s in samples:
        found.append(max(1, s.time_ms - last.get(s.ddir, 0)))
        last[s.ddir] = s.time_ms
    return found


def _per_job_buckets(
    samples: list[IntervalSample], ddir: int | None
) -> dict[tuple[int, int], float]:
    """(ddir, second) -> one job's value in that second: the mean of its rows there, each
    weighted by the window it covers (see windows_ms).

    Averaging (not summing) within one job is right for both kinds fio logs: iops/bw values
    are rates, and a latency mean over windows is their time-weighted average (the I/O
    count in a window is rate x window, and the rate varies little within a second).
    """
    sums: dict[tuple[int, int], float] = defaultdict(float)
    weights: dict[tuple[int, int], float] = defaultdict(float)
    if samples and any(s.bs for s in samples[:1]):
        spans = [1] * len(samples)  # one row per I/O (log_avg_msec=0): no windows
    else:
        spans = windows_ms(samples)
    for s, span in zip(samples, spans, strict=True):
        if ddir is not None and s.ddir != ddir:
            continue
        key = (s.ddir, second_of(s.time_ms))
        sums[key] += s.value * span
        weights[key] += span
    return {key: sums[key] / weights[key] for key in sums}


def _sum_rates(
    samples_by_job: list[list[IntervalSample]], ddir: int | None
) -> list[tuple[int, float]]:
    totals: dict[int, float] = defaultdict(float)
    for samples in samples_by_job:
        for (_, second), value in _per_job_buckets(samples, ddir).items():
            totals[second] += value
    return sorted(totals.items())


def _weighted_latency(
    samples_by_job: list[list[IntervalSample]],
    iops_by_job: list[list[IntervalSample]] | None,
    ddir: int | None,
) -> list[tuple[int, float]]:
    if iops_by_job is not None and len(iops_by_job) != len(samples_by_job):
        raise ValueError(
            f"iops_by_job has {len(iops_by_job)} jobs but samples_by_job has "
            f"{len(samples_by_job)}: they must list the same jobs in the same order"
        )
    weighted_sum: dict[int, float] = defaultdict(float)
    weight: dict[int, float] = defaultdict(float)
    plain: dict[int, list[float]] = defaultdict(list)
    for job, samples in enumerate(samples_by_job):
        iops = _per_job_buckets(iops_by_job[job], ddir) if iops_by_job is not None else {}
        for key, latency in _per_job_buckets(samples, ddir).items():
            second = key[1]
            w = iops.get(key, 0.0)
            if w > 0:
                weighted_sum[second] += latency * w
                weight[second] += w
            else:
                plain[second].append(latency)
    result: dict[int, float] = {}
    for second in set(weight) | set(plain):
        if weight.get(second, 0.0) > 0:
            result[second] = weighted_sum[second] / weight[second]
        else:
            # No IOPS sample to weight by (no iops log, or a final partial-second flush row):
            # the plain mean is the only estimate left.
            result[second] = sum(plain[second]) / len(plain[second])
    return sorted(result.items())


def per_second(
    samples_by_job: list[list[IntervalSample]],
    kind: str,
    ddir: int | None = None,
    iops_by_job: list[list[IntervalSample]] | None = None,
) -> list[tuple[int, float]]:
    """Combine several jobs' logs onto one 1-second grid: ``[(second, value), ...]``.

    * ``kind`` "iops" / "bw": the SUM over jobs (and over directions unless ``ddir`` given).
    * ``kind`` "lat" / "clat" / "slat": the I/O-weighted mean. Each job's latency in a second
      and direction is weighted by that job's IOPS in the same second and direction
      (``iops_by_job``, same job order). A plain mean of latency rows over-weights slow
      seconds, where few I/Os completed: on a write cliff it can be 3-4x the true mean.
      Seconds with no IOPS sample to weight by fall back to the plain mean.

    Within one job, several samples in the same second (windows shorter than 1 s) are
    averaged. Values stay in the log's units.
    """
    if kind in RATE_KINDS:
        return _sum_rates(samples_by_job, ddir)
    if kind in LAT_KINDS:
        return _weighted_latency(samples_by_job, iops_by_job, ddir)
    raise ValueError(f"unknown log kind {kind!r}; expected one of {RATE_KINDS + LAT_KINDS}")


# --------------------------------------------------------------------------- logs on their own


def _integral(rows: list[IntervalSample], ddir: int) -> tuple[float, int]:
    """(rate x window summed over the rows of one direction, last stamp in ms)."""
    mine = [r for r in rows if r.ddir == ddir]
    spans = windows_ms(mine)
    total = sum(r.value * span / 1000 for r, span in zip(mine, spans, strict=True))
    return total, max((r.time_ms for r in mine), default=0)


def _log_lat_mean(lat: list[IntervalSample], iops: list[IntervalSample], ddir: int) -> float:
    """Mean latency over the run: each row weighted by the I/Os of its window (its iops
    second's rate x its window), as fio weighs every I/O once."""
    rates = dict(per_second([iops], "iops", ddir))
    mine = [r for r in lat if r.ddir == ddir]
    weights = [rates.get(second_of(r.time_ms), 0.0) * span for r, span in
               zip(mine, windows_ms(mine), strict=True)]  # fmt: skip
    if sum(weights) <= 0:
        spans = windows_ms(mine)
        return sum(r.value * w for r, w in zip(mine, spans, strict=True)) / max(1, sum(spans))
    return sum(r.value * w for r, w in zip(mine, weights, strict=True)) / sum(weights)


def job_from_logs(
    name: str,
    iops: list[IntervalSample],
    bw: list[IntervalSample],
    lat: list[IntervalSample],
    lat_to_ns: float = 1.0,
) -> Measurement | None:
    """One job's totals rebuilt from its averaged logs alone (no result file): I/Os and bytes
    are the integrals of the logged rates over their windows, runtime the last stamp, mean
    latency I/O-weighted. Approximate (fio rounds each logged value); None without an iops
    or bw log."""
    if not iops and not bw:
        return None
    dirs = []
    for ddir in range(3):
        count, end_iops = _integral(iops, ddir)
        kib, end_bw = _integral(bw, ddir)
        runtime = max(end_iops, end_bw)
        if not runtime or (count <= 0 and kib <= 0):
            dirs.append(DirStats(0, 0, 0, 0.0, 0.0, None, None, None, "lat"))
            continue
        ios, moved = round(count), round(kib * 1024)
        has_lat = any(r.ddir == ddir for r in lat)
        mean = _log_lat_mean(lat, iops, ddir) * lat_to_ns if has_lat else None
        dirs.append(DirStats(ios=ios, io_bytes=moved, runtime_ms=runtime,
                             iops=ios * 1000 / runtime, bw_bytes=moved * 1000 / runtime,
                             lat_mean_ns=mean, lat_min_ns=None, lat_max_ns=None,
                             lat_kind="lat"))  # fmt: skip
    return Measurement(name=name, groupid=0, error=0, read=dirs[0], write=dirs[1],
                        trim=dirs[2], options={})  # fmt: skip


def hist_log_bins(rows: list[tuple[int, int, int, list[int]]]) -> dict[int, dict[int, int]]:
    """ddir -> {latency ns: count}: the rows of one histogram log summed (each row holds the
    I/Os completed since the previous one), keyed as json+ bins are, for
    parse.percentile_from_bins. fio writes no row for the partial last window, so the I/Os
    of the run's last log_hist_msec are missing: percentiles from these are close, not exact.
    """
    merged: dict[int, dict[int, int]] = defaultdict(dict)
    for _, ddir, _, bins in rows:
        target = merged[ddir]
        for index, count in enumerate(bins):
            if count:
                value = round(hist_bin_value_ns(index, len(bins)))
                target[value] = target.get(value, 0) + count
    return dict(merged)
