"""CPU time from /proc/stat and its split over an interval, as % of all CPUs.

The aggregate ``cpu`` line holds, in USER_HZ ticks summed over all online CPUs:
``user nice system idle iowait irq softirq steal guest guest_nice``. Kernels before 2.6.11
stop after softirq, before 2.6.24 after steal. ``guest`` and ``guest_nice`` are already
included in ``user`` and ``nice``, so they are not added to the total.
"""

from __future__ import annotations

from dataclasses import dataclass

_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


@dataclass(frozen=True)
class CpuCounters:
    """Cumulative ticks of the aggregate ``cpu`` line, and the number of ``cpuN`` lines."""

    user: int
    nice: int
    system: int
    idle: int
    iowait: int
    irq: int
    softirq: int
    steal: int
    ncpu: int

    @property
    def total(self) -> int:
        return sum(getattr(self, name) for name in _FIELDS)


@dataclass(frozen=True)
class CpuRates:
    """Share of all CPUs' time over an interval, in % (100 = every core busy all along).

    ``user_pct`` includes nice, ``system_pct`` includes hard and soft interrupts (where
    block-I/O completions run), ``busy_pct`` is everything but idle and iowait (so it includes
    steal: time the hypervisor gave to someone else). iowait is idle time with I/O pending: it
    says the CPU had nothing else to do, not that the I/O was slow.
    """

    user_pct: float
    system_pct: float
    iowait_pct: float
    idle_pct: float
    steal_pct: float
    busy_pct: float
    ncpu: int


def parse_proc_stat(text: str) -> CpuCounters:
    """Counters of the aggregate ``cpu`` line of /proc/stat text (missing fields read as 0).

    Raises ValueError when there is no ``cpu`` line.
    """
    aggregate: list[int] | None = None
    ncpu = 0
    for line in text.splitlines():
        if line.startswith("cpu "):
            aggregate = [int(x) for x in line.split()[1 : 1 + len(_FIELDS)]]
        elif line.startswith("cpu") and line[3:4].isdigit():
            ncpu += 1
    if aggregate is None:
        raise ValueError("no aggregate 'cpu' line: is this /proc/stat?")
    values = dict(zip(_FIELDS, aggregate, strict=False))
    return CpuCounters(**{name: values.get(name, 0) for name in _FIELDS}, ncpu=max(ncpu, 1))


def cpu_rates(before: CpuCounters, after: CpuCounters) -> CpuRates:
    """Split of the CPU time between two readings. An interval without ticks reads as idle.

    A counter that went backwards counts as 0: with NO_HZ, the kernel's per-CPU iowait can
    decrease between readings (documented in proc(5)).
    """
    delta = {name: max(0, getattr(after, name) - getattr(before, name)) for name in _FIELDS}
    total = sum(delta.values())

    def pct(*names: str) -> float:
        return 100.0 * sum(delta[n] for n in names) / total if total else 0.0

    idle = pct("idle") if total else 100.0
    return CpuRates(
        user_pct=pct("user", "nice"),
        system_pct=pct("system", "irq", "softirq"),
        iowait_pct=pct("iowait"),
        idle_pct=idle,
        steal_pct=pct("steal"),
        busy_pct=pct("user", "nice", "system", "irq", "softirq", "steal"),
        ncpu=after.ncpu,
    )
