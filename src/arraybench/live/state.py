"""The live state of a running campaign: what the terminal view, `/metrics`, the live page and
`arraybench watch` show, as one typed JSON snapshot.

`LiveObserver` wraps the run's observer (every call is passed on unchanged) and keeps the
state from the calls it sees: the campaign's progress, the current point, each host's last
complete second from `run/live_feed.py`, the point's per-second series, events as they
happen, finished points. Every change is written, at most twice a second, to `live.json` in
the run's folder (atomically: a temporary file renamed), which `arraybench watch` polls from
another process: the store holds a point's 1-second samples only once the point is over.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from typing_extensions import TypedDict  # pydantic validates these on Python 3.11 too

from arraybench.analysis.aggregate import PointMetrics
from arraybench.engines.live import DirectionSecond, LiveSecond
from arraybench.errors import ArraybenchError
from arraybench.events.records import START_ACTIONS, EventRecord
from arraybench.outfiles import write_file
from arraybench.plan.expand import Point, throughput_unit
from arraybench.records import PointRecord, RunRecord
from arraybench.userfiles import InputFileError, read_whole

if TYPE_CHECKING:
    from pydantic import TypeAdapter, ValidationError

LIVE_NAME = "live.json"
VERSION = 1
SERIES_KEPT = 900  # seconds of the current point kept in the snapshot (15 minutes)
EVENTS_KEPT = 50
LINES_KEPT = 12
WRITE_EVERY_S = 0.5
# live.json read back at most this big: 900 seconds of 64 hosts and thousands of finished
# points take a few MiB; a larger one is no snapshot arraybench wrote
LIVE_LIMIT = 32 << 20


class DirectionView(TypedDict):
    iops: float
    mbps: float
    lat_mean_us: float | None
    lat_p99_us: float | None


class HostView(TypedDict):
    t: int
    read: DirectionView
    write: DirectionView
    errors: int


class PointView(TypedDict):
    key: str
    seq: int
    scenario: str
    workload: str
    level: str
    expected_s: float
    left_s: float
    unit: str  # IOPS or MB/s: what the point's curve is read in
    started: float  # Unix time the point started (its chart's zero)
    source: str  # whose seconds: fio's reports, or the hosts' kernel counters (hosts_live.py)


class EventView(TypedDict):
    point: str
    label: str
    kind: str
    action: str
    outcome: str
    t: float


class FinishedView(TypedDict):
    key: str
    scenario: str
    workload: str
    level: str
    outstanding: int
    iops: float
    mbps: float
    lat_mean_us: float | None
    lat_p99_us: float | None
    unit: str


# one second of the current point: [t, total IOPS, total MB/s, {host: IOPS}]
SeriesRow = tuple[float, float, float, dict[str, float]]


class Snapshot(TypedDict):
    version: int
    run: str
    plan: str
    state: str  # running, or how it ended: complete, interrupted, failed
    pid: int
    updated: float
    done: int
    total: int
    point: PointView | None
    hosts: dict[str, HostView]
    total_now: HostView | None
    series: list[SeriesRow]
    events: list[EventView]
    event_counts: dict[str, dict[str, int]]  # label -> {applied: n, reverted: n}
    finished: list[FinishedView]
    lines: list[str]


def _direction(d: DirectionSecond) -> DirectionView:
    return {"iops": d.iops, "mbps": d.mbps, "lat_mean_us": d.lat_mean_us,
            "lat_p99_us": d.lat_p99_us}  # fmt: skip


def _host(s: LiveSecond) -> HostView:
    return {"t": s.t, "read": _direction(s.read), "write": _direction(s.write), "errors": s.errors}


def _sum_direction(parts: Sequence[DirectionView]) -> DirectionView:
    """Hosts added up: rates summed, mean latency weighted by I/Os, p99 the worst host's (a
    bound: the hosts' histograms are not merged live)."""
    iops = sum(p["iops"] for p in parts)
    weighted = [(p["lat_mean_us"], p["iops"]) for p in parts if p["lat_mean_us"] is not None]
    p99s = [p["lat_p99_us"] for p in parts if p["lat_p99_us"] is not None]
    mean = sum(v * w for v, w in weighted) / iops if weighted and iops > 0 else None
    return {"iops": iops, "mbps": sum(p["mbps"] for p in parts), "lat_mean_us": mean,
            "lat_p99_us": max(p99s) if p99s else None}  # fmt: skip


def total_of(hosts: Sequence[HostView]) -> HostView | None:
    if not hosts:
        return None
    return {"t": max(h["t"] for h in hosts),
            "read": _sum_direction([h["read"] for h in hosts]),
            "write": _sum_direction([h["write"] for h in hosts]),
            "errors": sum(h["errors"] for h in hosts)}  # fmt: skip


def level_of(point: Point) -> str:
    return point.identity.label


def empty_snapshot() -> Snapshot:
    return {"version": VERSION, "run": "", "plan": "", "state": "starting", "pid": os.getpid(),
            "updated": time.time(), "done": 0, "total": 0, "point": None, "hosts": {},
            "total_now": None, "series": [], "events": [], "event_counts": {}, "finished": [],
            "lines": []}  # fmt: skip


class LiveState:
    """The snapshot, changed by the run's thread and read by the server's threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.data = empty_snapshot()
        self.folder: Path | None = None
        self.written = 0.0

    def snapshot(self) -> Snapshot:
        with self.lock:
            return cast(Snapshot, json.loads(json.dumps(self.data)))  # a copy for a thread

    def change(self, **values: Any) -> None:
        with self.lock:
            self.data.update(values)  # type: ignore[typeddict-item]
            self.data["updated"] = time.time()

    def write(self, force: bool = False) -> None:
        """live.json in the run's folder, at most every WRITE_EVERY_S unless forced; a failed
        write is skipped (the next one replaces it)."""
        now = time.monotonic()
        if self.folder is None or (not force and now - self.written < WRITE_EVERY_S):
            return
        self.written = now
        text = json.dumps(self.snapshot(), separators=(",", ":"))
        with contextlib.suppress(OSError):  # whatever is at the name is replaced, never followed
            write_file(self.folder / LIVE_NAME, text, LIVE_NAME, checked=False)


class LiveFileError(ArraybenchError):
    """A run's live.json that arraybench did not write as it is: no regular file, too large,
    not JSON, or not the snapshot's fields and types (one line, exit 2)."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(
            f"{path}: {why}",
            "it is not the snapshot a running arraybench writes "
            "there; remove it (`arraybench show RUN` reads the run from its store)",
        )


def read_snapshot(folder: Path) -> Snapshot | None:
    """A run's live.json, validated; None when there is none (LiveFileError: see there)."""
    path = folder / LIVE_NAME
    try:
        if path.is_symlink():  # the run renames a regular file there, never a link
            raise LiveFileError(path, "a symbolic link")
        raw = read_whole(path, LIVE_NAME, LIVE_LIMIT)
    except FileNotFoundError:
        return None
    except InputFileError as exc:  # a FIFO, a device, a directory, larger than LIVE_LIMIT
        raise LiveFileError(path, exc.message.removeprefix(f"{path}: ")) from None
    except OSError as exc:
        raise LiveFileError(path, f"cannot read it ({exc.strerror or exc})") from None
    return parse_snapshot(path, raw)


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text[:20]} is out of range")
    return value


def _no_constant(text: str) -> float:
    raise ValueError(f"{text} is no number")


def parse_snapshot(path: Path, raw: bytes) -> Snapshot:
    """`raw` as a Snapshot: every field present with its type, numbers finite."""
    try:  # JSON itself first: NaN, Infinity and 1e999 are refused, as is deep nesting
        data = json.loads(raw, parse_float=_finite, parse_constant=_no_constant)
    except RecursionError:
        raise LiveFileError(path, "not JSON (nested too deep)") from None
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError among them
        raise LiveFileError(path, f"not JSON ({str(exc)[:120]})") from None
    if not isinstance(data, dict):
        raise LiveFileError(path, f"not a JSON object but {type(data).__name__}")
    if data.get("version") != VERSION:
        raise LiveFileError(path, f"snapshot version {str(data.get('version'))[:20]!r}, this "
                            f"arraybench reads version {VERSION}")  # fmt: skip
    from pydantic import ValidationError

    try:
        return _adapter().validate_json(raw, strict=True)
    except ValidationError as exc:
        raise LiveFileError(path, _first_error(exc)) from None


@functools.cache  # built when first needed: pydantic's schema takes a moment
def _adapter() -> TypeAdapter[Snapshot]:
    from pydantic import TypeAdapter

    return TypeAdapter(Snapshot)


def _first_error(exc: ValidationError) -> str:
    """A pydantic ValidationError as one line: where, what, and how many more."""
    errors = exc.errors()
    first = errors[0]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"field {where.lstrip('.') or 'snapshot'}: {first['msg'].lower()}{more}"


def finished_view(p: PointRecord) -> FinishedView:
    """A point stored before (a resumed run's): its curve's figures."""
    return {"key": p.key, "scenario": p.scenario or "", "workload": p.workload,
            "level": p.identity.label, "outstanding": p.workers * p.iodepth,
            "iops": p.metric("total", "iops") or 0.0, "mbps": p.metric("total", "mbps") or 0.0,
            "lat_mean_us": p.metric("total", "lat_mean_us"),
            "lat_p99_us": p.metric("total", "lat_p99_us"), "unit": p.unit}  # fmt: skip


class ShownObserver(Protocol):
    """What a `LiveObserver` passes every call on to (`progressbar.py` `ProgressObserver`): the
    run's Observer steps, the live view's lines, and the stop after an interruption."""

    def campaign_started(self, run: RunRecord, todo: Sequence[Point], skipped: int) -> None: ...
    def target_preparing(self, path: str, size: int) -> None: ...
    def point_started(self, point: Point, index: int, total: int) -> None: ...
    def point_tick(self, point: Point, elapsed_s: float) -> None: ...
    def point_finished(self, point: Point, metrics: PointMetrics, unit: str) -> None: ...
    def warning(self, text: str) -> None: ...
    def note(self, text: str) -> None: ...
    def pausing(self, point: Point, seconds: float) -> None: ...
    def points_skipped(self, points: Sequence[Point]) -> None: ...
    def phase_started(self, kind: str, text: str, expected_s: float) -> None: ...
    def phase_finished(self, counts: bool) -> None: ...
    def rounds_ended(self, round_no: int, points: Sequence[Point]) -> None: ...
    def confirm(self, text: str) -> None: ...
    def live_view(self, snap: Snapshot) -> None: ...
    def stop(self) -> None: ...


class LiveObserver:
    """The run's observer (`run/context.py` `Observer`) with the live state kept beside it
    (see the module's text). `stored` gives a run's points stored before (a resume shows
    their curves too)."""

    def __init__(
        self, inner: ShownObserver, state: LiveState | None = None,
        stored: Callable[[str], Sequence[PointRecord]] | None = None, seconds: bool = True,
    ) -> None:  # fmt: skip
        self.live_seconds = seconds  # fio's status reports read (run/live_feed.py), or not
        self.inner = inner
        self.state = state or LiveState()
        self.stored = stored
        self.unit = "IOPS"

    def _line(self, text: str) -> None:
        with self.state.lock:
            self.state.data["lines"] = [*self.state.data["lines"], text][-LINES_KEPT:]
        self.state.write()

    # -- the Observer protocol -------------------------------------------------------------
    def campaign_started(self, run: RunRecord, todo: Sequence[Point], skipped: int) -> None:
        self.state.folder = Path(run.folder)
        before = [finished_view(p) for p in self.stored(run.id)] if self.stored and skipped else []
        self.state.change(run=run.id, plan=run.plan_name, state="running", pid=os.getpid(),
                          done=skipped, total=skipped + len(todo), finished=before)  # fmt: skip
        self.state.write(force=True)
        self.inner.campaign_started(run, todo, skipped)

    def target_preparing(self, path: str, size: int) -> None:
        self.inner.target_preparing(path, size)

    def point_started(self, point: Point, index: int, total: int) -> None:
        self.unit = throughput_unit(point.workload)
        view: PointView = {"key": point.key, "seq": point.seq, "scenario": point.scenario or "",
                           "workload": point.workload.name, "level": level_of(point),
                           "expected_s": point.expected_seconds,
                           "left_s": point.expected_seconds, "unit": self.unit,
                           "started": time.time(), "source": "fio"}  # fmt: skip
        with self.state.lock:
            done = self.state.data["done"]
            self.state.data["total"] = max(self.state.data["total"], done + 1)
        self.state.change(point=view, hosts={}, total_now=None, series=[])
        self.state.write(force=True)
        self._view()
        self.inner.point_started(point, index, total)

    def point_tick(self, point: Point, elapsed_s: float) -> None:
        self.inner.point_tick(point, elapsed_s)

    def point_finished(self, point: Point, metrics: PointMetrics, unit: str) -> None:
        t = metrics.total
        done: FinishedView = {"key": point.key, "scenario": point.scenario or "",
                              "workload": point.workload.name, "level": level_of(point),
                              "outstanding": point.level.outstanding, "iops": t.iops,
                              "mbps": t.mbps, "lat_mean_us": t.lat_mean_us,
                              "lat_p99_us": t.lat_p99_us, "unit": unit}  # fmt: skip
        with self.state.lock:
            data = self.state.data
            data["finished"] = [*data["finished"], done]
            data["done"] += 1
            data["total"] = max(data["total"], data["done"])
            if data["point"] is not None:
                data["point"]["left_s"] = 0.0
        self.state.write(force=True)
        self.inner.point_finished(point, metrics, unit)

    def warning(self, text: str) -> None:
        self._line(f"warning: {text}")
        self.inner.warning(text)

    def note(self, text: str) -> None:
        self._line(text)
        self.inner.note(text)

    def phase_started(self, kind: str, text: str, expected_s: float) -> None:
        """Preconditioning, a scenario's step, a special test: said as it starts."""
        self._line(f"{kind}: {text}")
        self.inner.phase_started(kind, text, expected_s)

    def phase_finished(self, counts: bool) -> None:
        self.inner.phase_finished(counts)

    def rounds_ended(self, round_no: int, points: Sequence[Point]) -> None:
        self.inner.rounds_ended(round_no, points)

    def confirm(self, text: str) -> None:
        self.inner.confirm(text)

    def stop(self) -> None:
        self.inner.stop()

    def pausing(self, point: Point, seconds: float) -> None:
        self._line(f"pausing {seconds:.0f}s after {point.key}")
        self.inner.pausing(point, seconds)

    def points_skipped(self, points: Sequence[Point]) -> None:
        with self.state.lock:
            self.state.data["total"] = max(self.state.data["done"],
                                           self.state.data["total"] - len(points))  # fmt: skip
        self.inner.points_skipped(points)

    # -- from run/live_feed.py and run/hosts_live.py -------------------------------------------
    def live_second(
        self, point: Point, seconds: Sequence[LiveSecond], left_s: float, source: str = "fio"
    ) -> None:
        with self.state.lock:
            data = self.state.data
            hosts = data["hosts"]
            for s in seconds:
                hosts[s.host] = _host(s)
            total = total_of(list(hosts.values()))
            data["total_now"] = total
            if data["point"] is not None:
                data["point"]["left_s"] = round(left_s, 1)
                data["point"]["source"] = source
            if total is not None:
                per_host = {h: v["read"]["iops"] + v["write"]["iops"] for h, v in hosts.items()}
                row: SeriesRow = (total["t"], total["read"]["iops"] + total["write"]["iops"],
                                  total["read"]["mbps"] + total["write"]["mbps"],
                                  per_host)  # fmt: skip
                data["series"] = [*data["series"], row][-SERIES_KEPT:]
            data["updated"] = time.time()
        self.state.write()
        self._view()

    def live_event(self, point: Point, record: EventRecord) -> None:
        # a prompt confirmed or a command run is the event applied, as a throttle set is
        action = "applied" if record.action in START_ACTIONS else (
            "reverted" if record.action == "revert" else record.action)  # fmt: skip
        view: EventView = {"point": point.key, "label": record.label, "kind": record.kind,
                           "action": action, "outcome": record.outcome,
                           "t": record.started_unix}  # fmt: skip
        with self.state.lock:
            data = self.state.data
            data["events"] = [*data["events"], view][-EVENTS_KEPT:]
            counts = data["event_counts"].setdefault(record.label, {})
            counts[action] = counts.get(action, 0) + 1
        self._line(f"event {record.label} ({record.kind}) {action}: {record.outcome}")
        self._view()

    def _view(self) -> None:
        """The inner observer's live view (the terminal's), when it has one."""
        self.inner.live_view(self.state.snapshot())

    def finish(self, state: str) -> None:
        """The campaign ended (complete, interrupted, failed): said to watchers."""
        self.state.change(state=state)
        self.state.write(force=True)
