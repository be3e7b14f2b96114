"""A live snapshot as terminal lines, at most 100 columns: the run and its point, per host and
in total the last second's IOPS, MB/s, mean and p99 latency per direction and errors, a
sparkline of the last minute, and the latest events and notes. Shared by the view during
`run` on a terminal and by `arraybench watch`; only text here, the printing is console.py's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arraybench.units import format_latency

if TYPE_CHECKING:  # console.py imports this module at start-up: no plan model then
    from arraybench.live.state import DirectionView, HostView, Snapshot

WIDTH = 100
BARS = "▁▂▃▄▅▆▇█"
SPARK_S = 60


def sparkline(values: list[float], width: int = SPARK_S) -> str:
    """The last `width` values as block characters, scaled from 0 to their maximum."""
    tail = values[-width:]
    top = max(tail, default=0.0)
    if top <= 0:
        return BARS[0] * len(tail)
    return "".join(BARS[min(len(BARS) - 1, int(v / top * (len(BARS) - 1) + 0.5))] for v in tail)


def _rate(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


def _lat(us: float | None) -> str:
    return "–" if us is None else format_latency(us)


def _direction(d: DirectionView) -> str:
    return f"{_rate(d['iops']):>10} {d['mbps']:>8.1f} {_lat(d['lat_mean_us']):>9} " \
           f"{_lat(d['lat_p99_us']):>9}"  # fmt: skip


HEADER = (f"{'host':<12}{'read IOPS':>10} {'MB/s':>8} {'mean':>9} {'p99':>9} "
          f"{'write IOPS':>10} {'MB/s':>8} {'mean':>9} {'p99':>9} {'err':>4}")  # fmt: skip


def host_line(name: str, h: HostView) -> str:
    return f"{name[:11]:<12}{_direction(h['read'])} {_direction(h['write'])} {h['errors']:>4}"


# a many-host point's seconds (run/hosts_live.py): the hosts' disks as the kernel counts them
KERNEL_NOTE = (
    "kernel's view: the hosts' disk counters (/proc/diskstats), not fio's; latency: "
    "block-layer await"
)  # 96 columns


def headline(snap: Snapshot) -> str:
    point = snap["point"]
    where = ""
    if point is not None:
        scenario = f"{point['scenario']} / " if point["scenario"] else ""
        left = f", {point['left_s']:.0f} s left" if snap["state"] == "running" else ""
        where = f" · {scenario}{point['workload']} {point['level']}{left}"
    return f"run {snap['run']} {snap['state']} · {snap['done']}/{snap['total']} points{where}"


def view_lines(snap: Snapshot, events: int = 3, notes: bool = True) -> list[str]:
    """The whole view, every line cut to WIDTH; the last `events` lines of what happened
    (only the events without `notes`: run's own terminal prints its notes itself)."""
    lines = [headline(snap)]
    hosts = snap["hosts"]
    if hosts and snap["state"] == "running":
        lines.append(HEADER)
        lines += [host_line(name, h) for name, h in sorted(hosts.items())]
        if len(hosts) > 1 and snap["total_now"] is not None:
            lines.append(host_line("total", snap["total_now"]))
        if snap["point"] and snap["point"].get("source") == "kernel":
            lines.append(KERNEL_NOTE)
        unit = snap["point"]["unit"] if snap["point"] else "IOPS"
        values = [r[2] if unit == "MB/s" else r[1] for r in snap["series"]]
        left = f" · {snap['point']['left_s']:.0f} s left" if snap["point"] else ""
        if values:
            lines.append(f"{unit} last {min(len(values), SPARK_S)} s "
                         f"{sparkline(values)} {_rate(values[-1])}{left}")  # fmt: skip
    said = [line for line in snap["lines"] if notes or line.startswith("event ")]
    lines += said[-events:] if events > 0 else []  # events, steps, phases, warnings
    return [line[:WIDTH] for line in lines]


def second_line(snap: Snapshot) -> str:
    """One line per second where there is no terminal (watch into a pipe or a file)."""
    total = snap["total_now"]
    if total is None or snap["state"] != "running":
        return headline(snap)[:WIDTH]
    iops = total["read"]["iops"] + total["write"]["iops"]
    mbps = total["read"]["mbps"] + total["write"]["mbps"]
    lat = [d["lat_mean_us"] for d in (total["read"], total["write"]) if d["lat_mean_us"]]
    point = snap["point"]["key"] if snap["point"] else "-"
    text = (f"{point}: {_rate(iops)} IOPS {mbps:.1f} MB/s mean {_lat(max(lat) if lat else None)}"
            f" errors {total['errors']}")  # fmt: skip
    return text[:WIDTH]
