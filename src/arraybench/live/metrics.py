"""A live snapshot in Prometheus' text exposition format (version 0.0.4), for `/metrics`.

Our own writer rather than `prometheus_client`: the snapshot already is the whole state, so
a client library's registry of collectors would only copy it, and the format (HELP, TYPE,
`name{label="value"} number [timestamp]`, three characters escaped in label values) is a
page of code with no new dependency. `promtool check metrics` accepts its output (tested).

The per-second values carry the Unix time (ms) of the second they describe: a scrape that
comes 0.7 s after the second ended files the value at that second, so Prometheus'
`query_range` with a 1 s step gives the very series `arraybench show` stores. They are
exposed only while a point runs and its last second is recent (`FRESH_S`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

from arraybench.live.state import DirectionView, HostView, Snapshot

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
FRESH_S = 10.0  # a second older than this (fio stalled, between points) is not exposed
TOTAL_HOST = "total"

# name, type, help, value of a direction's view (None: not exposed)
PER_DIRECTION = (
    ("arraybench_iops", "gauge", "I/O operations per second in the last complete second",
     lambda d: d["iops"]),
    ("arraybench_bytes_per_second", "gauge", "Bytes per second in the last complete second",
     lambda d: d["mbps"] * 1e6),
    ("arraybench_latency_mean_seconds", "gauge",
     "Mean total latency of the I/Os completed in the last complete second",
     lambda d: None if d["lat_mean_us"] is None else d["lat_mean_us"] / 1e6),
    ("arraybench_latency_p99_seconds", "gauge",
     "99th percentile completion latency in the last complete second (total: worst host)",
     lambda d: None if d["lat_p99_us"] is None else d["lat_p99_us"] / 1e6),
)  # fmt: skip


def escape_label(value: str) -> str:
    """Backslash, double quote and line feed, as the format requires."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs: dict[str, str]) -> str:
    return "{" + ",".join(f'{k}="{escape_label(v)}"' for k, v in pairs.items()) + "}"


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def _head(name: str, kind: str, text: str) -> list[str]:
    return [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]


def _hosts(snap: Snapshot, now: float) -> dict[str, HostView]:
    """Each host's last second and their total, when a point runs and it is recent."""
    if snap["state"] != "running" or snap["point"] is None or snap["point"]["left_s"] <= 0:
        return {}
    fresh = {h: v for h, v in snap["hosts"].items() if now - v["t"] <= FRESH_S}
    total = snap["total_now"]
    if fresh and total is not None:
        fresh[TOTAL_HOST] = total
    return fresh


def _per_second(snap: Snapshot, now: float) -> Iterator[str]:
    hosts = _hosts(snap, now)
    point = snap["point"]
    base = {"run": snap["run"]}
    if point is not None:
        base |= {"scenario": point["scenario"], "workload": point["workload"],
                 "level": point["level"]}  # fmt: skip
    for name, kind, text, value_of in PER_DIRECTION:
        yield from _head(name, kind, text)
        for host, view in hosts.items():
            for direction in ("read", "write"):
                d: DirectionView = view[direction]
                value = value_of(d)
                if value is not None:
                    labels = _labels(base | {"host": host, "direction": direction})
                    yield f"{name}{labels} {_number(value)} {view['t'] * 1000}"
    yield from _head("arraybench_io_errors", "gauge", "I/O errors fio counted in this point")
    for host, view in hosts.items():
        labels = _labels(base | {"host": host})
        yield f"arraybench_io_errors{labels} {view['errors']} {view['t'] * 1000}"


def _progress(snap: Snapshot) -> Iterator[str]:
    run = {"run": snap["run"]}
    running = 1 if snap["state"] == "running" else 0
    point = snap["point"]
    yield from _head("arraybench_running", "gauge", "1 while the run's campaign runs")
    yield f"arraybench_running{_labels(run | {'plan': snap['plan']})} {running}"
    yield from _head("arraybench_points_done", "gauge", "Points stored so far")
    yield f"arraybench_points_done{_labels(run)} {snap['done']}"
    yield from _head("arraybench_points_planned", "gauge", "Points the campaign measures")
    yield f"arraybench_points_planned{_labels(run)} {snap['total']}"
    yield from _head("arraybench_point_seconds_left", "gauge", "Seconds left in the point")
    if point is not None and running:
        yield f"arraybench_point_seconds_left{_labels(run)} {_number(point['left_s'])}"
    yield from _head(
        "arraybench_point_info",
        "gauge",
        "The point that runs now (value 1); "
        "source: whose per-second figures, fio's or the hosts' kernel counters",
    )
    if point is not None and running:
        # a label of its own here, not on every per-second series: those keep their identity
        # (the dashboard's and a user's queries) whichever source a point's seconds come from
        info = run | {"key": point["key"], "scenario": point["scenario"],
                      "workload": point["workload"], "level": point["level"],
                      "source": point.get("source", "fio")}  # fmt: skip
        yield f"arraybench_point_info{_labels(info)} 1"
    yield from _head("arraybench_events_total", "counter",
                     "Events applied and reverted in this run, per event")  # fmt: skip
    for label, counts in sorted(snap["event_counts"].items()):
        for action in ("applied", "reverted"):
            labels = _labels(run | {"event": label, "action": action})
            yield f"arraybench_events_total{labels} {counts.get(action, 0)}"


def exposition(snap: Snapshot, now: float | None = None) -> str:
    """The whole `/metrics` body."""
    moment = time.time() if now is None else now
    return "\n".join([*_per_second(snap, moment), *_progress(snap)]) + "\n"
