"""Issue 35 item 4: an availability study compared run against run (`compare --align event`).

Two runs, each with a throttle on `rr` (applied, reverted) and a `run` command on `rw` (a
controller reboot script that takes 4 s; nothing is reverted). The degraded run's throttle
ends in fio's catch-up burst (2.5 x the rate for 8 s), its reboot stalls longer and overshoots.
Built through the Store API with the `events` finding a campaign stores (its impact computed
by analysis/events.py from the same seconds and records), so the dip, the recovery and the
burst are exactly the ones wanted: a real load cannot be told to catch up on demand.
"""

from __future__ import annotations

from pathlib import Path

from arraybench.analysis.aggregate import DirMetrics, PointMetrics
from arraybench.analysis.events import event_impact, windows_from_records
from arraybench.events.records import Action, EventRecord
from arraybench.finding_kinds import EVENTS, EventImpactData, EventRecordData, fields_of
from arraybench.point_identity import PointIdentity
from arraybench.report.compare import compare_runs
from arraybench.report.model import Figure
from arraybench.store.db import NewPoint, RunRecord, Sample, Store
from tests.conftest import main_cli

PLAN = """name: study
ioengine: "null"
timing: {ramp: 0s, duration: 40s}
load: {workers: [1], iodepth: [4]}
targets: [{path: /tmp/t.dat, size: 16m}]
workloads:
  - {name: rr, pattern: random, bs: 4k, read: 100}
  - {name: rw, pattern: random, bs: 4k, read: 0}
"""
T0 = {"base": 1_800_000_000, "degraded": 1_800_010_000}
# 40 s of 1000 IOPS with the event's seconds put in: rr throttled from +10 s to +15.2 s,
# rw's reboot command from +10 s (it returns at +14 s)
SECONDS = {
    ("base", "rr"): {11: 100, 12: 100, 13: 100, 14: 100, 15: 100},
    ("degraded", "rr"): {11: 0, 12: 0, 13: 0, 14: 0, 15: 0} | dict.fromkeys(range(16, 24), 2500),
    ("base", "rw"): {11: 0, 12: 0, 13: 0},
    ("degraded", "rw"): {11: 0, 12: 0, 13: 0, 14: 0, 15: 0, 16: 1800, 17: 1800, 18: 1800},
}


def _metrics(iops: float, read: bool) -> PointMetrics:
    d = DirMetrics(int(iops), int(iops) * 4096, iops, iops * 4096 / 1e6, 250.0, 250.0, 900.0,
                   1500.0, 5000.0)  # fmt: skip
    none = DirMetrics(0, 0, 0.0, 0.0, None, None, None, None, None)
    return PointMetrics(read=d if read else none, write=none if read else d, total=d)


def _record(kind: str, action: Action, start: float, end: float) -> EventRecord:
    label = "path slow" if kind == "throttle" else "reboot ctrl A"
    return EventRecord(0, kind, label, action, "ok", 10.0 if action != "revert" else None,
                       start, end, "")  # fmt: skip


def _point(store: Store, run: str, seq: int, workload: str) -> None:
    t0 = T0[run] + seq * 100
    read = workload == "rr"
    values = {t0 + s: 1000.0 for s in range(1, 41)}
    values |= {t0 + s: float(v) for s, v in SECONDS[(run, workload)].items()}
    samples = [Sample(t, v if read else None, None if read else v, None, None, 250.0, None)
               for t, v in sorted(values.items())]  # fmt: skip
    if workload == "rr":
        records = [_record("throttle", "apply", t0 + 10.0, t0 + 10.1),
                   _record("throttle", "revert", t0 + 15.0, t0 + 15.2)]  # fmt: skip
    else:
        records = [_record("run", "run", t0 + 10.0, t0 + 14.0)]
    impact = event_impact(samples, windows_from_records(records))
    finding = EVENTS.new({"records": [fields_of(EventRecordData, r) for r in records],
                          "impact": [fields_of(EventImpactData, i) for i in impact]})  # fmt: skip
    point = NewPoint(
        run_id=run, seq=seq, identity=PointIdentity(workload, "w1-qd4"),
        family="Random 4 KiB", mix="Read" if read else "Write", pattern="random", bs=4096,
        read_pct=100 if read else 0, region="backend", ioengine="null", unit="IOPS",
        workers=1, iodepth=4, jobs=1, targets="/tmp/t.dat", folder=f"/tmp/{run}/p{seq}",
        started="a", finished="b", runtime_s=40.0, engine_version="fio-3.33",
    )  # fmt: skip
    store.add_point(point, _metrics(1000.0, read), samples, findings=[finding])


def _stored(results: Path) -> Store:
    store = Store(results)
    for n, run in enumerate(T0):
        store.create_run(RunRecord(
            id=run, plan_name="study", scenario=run, labels={}, plan_yaml=PLAN,
            folder=f"/tmp/{run}", scale=1.0, status="complete",
            started=f"2027-01-0{n + 1}T00:00:00+00:00", finished=f"2027-01-0{n + 1}T00:05:00+00:00",
            total_points=2, engine_version="fio-3.33", arraybench_version="0.1.0", host="h",
            kernel="6.1", targets=["/tmp/t.dat"], latency_bound_us=1000.0, latency_stat="mean",
        ))  # fmt: skip
        _point(store, run, 1, "rr")
        _point(store, run, 2, "rw")
    return store


def _line(figure: Figure, label: str) -> dict[float, float | None]:
    [series] = [s for s in figure.series if s.label == label]
    return dict(zip(series.x or [], series.values, strict=True))


def test_each_event_kind_is_aligned_at_its_start_and_its_impact_tabulated(tmp_path: Path) -> None:
    store = _stored(tmp_path)
    model = compare_runs(store, ["base", "degraded"], str(tmp_path), None, "event")
    # the reboot script ran 4 s: t = 0 is when it started, so its stall lies after 0 (it
    # was drawn 4 s before 0 when aligned on the command's return)
    [rw] = [f for f in model.figures if f.title.startswith("rw: IOPS over time")]
    for run in ("base", "degraded"):
        line = _line(rw, run)
        assert line[0.0] == 1000.0 and line[1.0] == 0.0 and line[-1.0] == 1000.0, line
    [rr] = [f for f in model.figures if f.title.startswith("rr: IOPS over time")]
    assert _line(rr, "degraded")[1.0] == 0.0 and _line(rr, "degraded")[6.0] == 2500.0
    # the events' figures come first in a failure study, one row per event and run
    first, second = model.tables[:2]
    assert first.title == "rr: each event's impact, runs side by side"
    assert second.title == "rw: each event's impact, runs side by side"
    assert first.columns == ["Level", "Event", "Run", "Before", "Dip", "Back within 5 %",
                             "Overshoot", "Max latency"]  # fmt: skip
    assert first.rows == [
        ["w1-qd4", "path slow (throttle)", "base", "1 kIOPS", "-90.0 %",
         "5.0 s after the start; 0.0 s after the revert", "none", "250 µs"],
        # the burst after the stall is not back: 7.8 s after the revert, +150 % for 8 s
        ["w1-qd4", "path slow (throttle)", "degraded", "1 kIOPS", "-100.0 %",
         "13.0 s after the start; 7.8 s after the revert", "+150.0 %, 8 s above the band",
         "250 µs"],
    ]  # fmt: skip
    # a `run` is never reverted: its recovery counts from its start
    assert [r[1:] for r in second.rows] == [
        ["reboot ctrl A (run)", "base", "1 kIOPS", "-100.0 %", "3.0 s after the start", "none",
         "250 µs"],
        ["reboot ctrl A (run)", "degraded", "1 kIOPS", "-100.0 %", "8.0 s after the start",
         "+80.0 %, 3 s above the band", "250 µs"],
    ]  # fmt: skip
    # aligned at the start, the point means' table follows the events' tables
    plain = compare_runs(store, ["base", "degraded"], str(tmp_path), None, "start")
    assert plain.tables[0].title.startswith("Max, optimal point")
    assert plain.tables[1].title == first.title


def test_the_compare_html_shows_the_events_side_by_side(tmp_path: Path) -> None:
    _stored(tmp_path).close()
    out = tmp_path / "cmp.html"
    done = main_cli("compare", "base", "degraded", "--results", str(tmp_path), "-o", str(out),
                    "--align", "event")  # fmt: skip
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    events = html.index("rr: each event&#x27;s impact, runs side by side")
    assert events < html.index("Max, optimal point and min latency per scenario")
    assert "+150.0 %, 8 s above the band" in html and "7.8 s after the revert" in html
