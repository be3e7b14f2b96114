"""A logged warm-up (`timing.log_ramp`, run.warmup) drawn before the point's measured seconds:
shaded and labelled "warm-up, not in the figures"; the point's figures never include it."""

from __future__ import annotations

from dataclasses import replace

from arraybench.finding_kinds import WARMUP, WarmupFinding
from arraybench.records import Finding
from arraybench.report.model import Timeline

WARMUP_LABEL = "warm-up, not in the figures"


def _sum(*values: float | None) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _lat(row: list[float | None]) -> float | None:
    parts = [(row[5], row[1]), (row[6], row[2])]
    known = [(lat, n or 0.0) for lat, n in parts if lat is not None]
    weight = sum(n for _, n in known)
    return sum(lat * n for lat, n in known) / weight if weight else None


def with_warmup(t: Timeline, findings: list[Finding], first_t: float, t0: float) -> Timeline:
    """`t` with its point's logged warm-up in front (time zero: the warm-up's first second) and
    the shaded span it covers; `t` unchanged without a `warmup` finding. `first_t` is the
    measured series' first second and `t0` the time zero `t` was drawn from (Unix s)."""
    warm = WARMUP.among(findings)
    rows = [r for data in warm for r in data["samples"] if r[0] is not None]
    if not rows or not t.t_s or t.series:
        return t
    start = float(rows[0][0])  # type: ignore[arg-type]
    shift = t0 - start  # the measured seconds move right by the warm-up
    n = len(rows)
    pad: list[float | None] = [None] * n
    mbps = t.throughput_unit == "MB/s"
    thr = [_sum(r[3], r[4]) if mbps else _sum(r[1], r[2]) for r in rows]
    # between the two fio runs: no line across (the measured run restarts its jobs)
    end = (float(rows[-1][0]) + first_t) / 2 - start  # type: ignore[arg-type]
    gap = [end]
    return replace(
        t,
        t_s=[float(r[0]) - start for r in rows] + gap + [x + shift for x in t.t_s],  # type: ignore[arg-type]
        throughput=thr + [None] * len(gap) + t.throughput,
        lat_mean_us=[_lat(r) for r in rows] + [None] * len(gap) + t.lat_mean_us,
        kernel=None if t.kernel is None else pad + [None] * len(gap) + t.kernel,
        array=None if t.array is None else pad + [None] * len(gap) + t.array,
        gb_written=None if t.gb_written is None else pad + [None] * len(gap) + t.gb_written,
        controller_cpu=None,  # read again for the whole span (timelines.py with_cpu)
        guides=[(label, pad + [None] * len(gap) + v) for label, v in t.guides],
        events=[(at + shift, label) for at, label in t.events],
        x_label="seconds since the warm-up started (s)",
        shade=(0.0, end, WARMUP_LABEL),
        findings=[*(line for data in warm for line in gap_lines(data)), *t.findings],
    )


def gap_lines(data: WarmupFinding) -> list[str]:
    """On many hosts the warm-up and the measured run are two gated runs: the pause between
    them is said, so that the chart's two parts are not read as one continuous load."""
    gap = data.get("gap_s")
    if gap is None:
        return []
    hosts = data.get("hosts", [])
    failed = data.get("failed_hosts", [])
    lines = [f"the measured run started {gap:.1f} s after the warm-up on {len(hosts)} hosts "
             "ended (the hosts' start gate): no load in between"]  # fmt: skip
    if failed:
        names = ", ".join(failed)
        lines.append(f"warm-up failed on host(s) {names}: not warmed up before the measured run")
    return lines


def measured_only(t: Timeline) -> Timeline:
    """`t` without its shaded warm-up seconds (the figures of a text summary), its findings
    saying how many warm-up seconds were logged."""
    if t.shade is None:
        return t
    end = t.shade[1]
    keep = [i for i, x in enumerate(t.t_s) if x > end]
    warm = sum(1 for x, v in zip(t.t_s, t.throughput, strict=False) if x <= end and v is not None)

    def kept(values: list[float | None] | None) -> list[float | None] | None:
        """Every per-second list sliced alike, so that index i stays second t_s[i]."""
        return None if values is None else [values[i] if i < len(values) else None for i in keep]

    return replace(
        t,
        t_s=[t.t_s[i] for i in keep],
        throughput=kept(t.throughput) or [],
        lat_mean_us=kept(t.lat_mean_us) or [],
        kernel=kept(t.kernel),
        array=kept(t.array),
        controller_cpu=kept(t.controller_cpu),
        gb_written=kept(t.gb_written),
        guides=[(label, kept(v) or []) for label, v in t.guides],
        findings=[
            f"warm-up: {warm} s logged before these samples, not in the figures",
            *t.findings,
        ],
        shade=None,
    )
