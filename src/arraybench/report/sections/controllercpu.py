"""The array controller's CPU beside a point's time chart (AERODISK's form: the whole hour
with its warm-up, controller CPU under it on the same time axis), from the `cpu` value the
plan's `array_monitor:` pulls (a Prometheus query or a command's `cpu` column) or an
attached CSV's. A plan that expects it (`report.controller_cpu: expected`, the aerodisk
template) says under each time chart when none was collected; no other report mentions it.
"""

from __future__ import annotations

from dataclasses import replace

from arraybench.report.model import Internal, Timeline

# a customer's report: what is missing, not how to configure the monitor (report/audience.py)
INTERNAL = (Internal(r"(no controller CPU was collected): give array_monitor .*", r"\1"),)
NO_CPU = ("no controller CPU was collected: give array_monitor a `cpu` query (Prometheus) or a "
          "command that prints a `cpu` column (docs/live.md)")  # fmt: skip


def with_cpu(t: Timeline, cpu: dict[int, float], zero: float) -> Timeline:
    """`t` with the controller's CPU % at each of its seconds (`zero`: the Unix time of its
    t = 0); none where fio logged no second (a gap between points, or before the measured
    run restarts its jobs); `t` unchanged when no CPU value falls inside it."""
    if not cpu:
        return t
    values = [
        None if thr is None else cpu.get(round(zero + x))
        for x, thr in zip(t.t_s, t.throughput, strict=True)
    ]
    if all(v is None for v in values):
        return t
    return replace(t, controller_cpu=values)


def say_missing(timelines: list[Timeline]) -> list[Timeline]:
    """Each point's timeline with NO_CPU under it when it has no controller CPU."""
    return [t if t.controller_cpu is not None or t.series else
            replace(t, findings=[*t.findings, NO_CPU]) for t in timelines]  # fmt: skip
