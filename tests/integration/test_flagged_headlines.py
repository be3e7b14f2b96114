"""Flagged points (validity flags) leave the headline figures everywhere the run's report leaves
them out: in `compare` and in acceptance verdicts, unless the run's plan sets
`report.headline_includes_flagged`; `show` lists each flag within 100 columns. Runs built
through the Store API with the records and the `validity` findings a campaign stores (a
generator-bound flag cannot be had on demand)."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from rich.cells import cell_len

from arraybench import cli, console
from arraybench.analysis.aggregate import DirMetrics, PointMetrics
from arraybench.analysis.validity import Flag, finding_data
from arraybench.finding_kinds import VALIDITY
from arraybench.point_identity import PointIdentity
from arraybench.report.assemble import report_for_run
from arraybench.report.compare import compare, load_scenario
from arraybench.store.db import NewPoint, RunRecord, Store
from arraybench.units import format_throughput

# workers -> (IOPS, mean latency µs): w4 looks best, but it is the one the generator bounded
LADDER = {1: (100_000.0, 10.0), 2: (150_000.0, 13.0), 4: (300_000.0, 13.3)}
BOUND = Flag("generator-bound", "host CPU 97 % busy (>= 90 %) with 4 fio job(s) on 2 CPUs",
             "use fewer jobs per host, more hosts, or a cheaper ioengine")  # fmt: skip


def _plan(name: str, extra: str = "") -> str:
    return (
        f'name: {name}\nioengine: "null"\ntiming: {{ramp: 0s, duration: 1s}}\n'
        "load: {workers: [1, 2, 4], iodepth: [1]}\ntargets: [{path: /tmp/t.dat, size: 16m}]\n"
        f"workloads:\n  - {{name: rr, pattern: random, bs: 4k, read: 100}}\n{extra}"
    )


def _metrics(iops: float, lat_us: float) -> PointMetrics:
    ios = int(iops)
    d = DirMetrics(ios, ios * 4096, iops, iops * 4096 / 1e6, lat_us, lat_us, 3 * lat_us,
                   5 * lat_us, 20 * lat_us)  # fmt: skip
    none = DirMetrics(0, 0, 0.0, 0.0, None, None, None, None, None)
    return PointMetrics(read=d, write=none, total=d)


def stored_run(
    store: Store, run_id: str, flagged: set[int], plan: str, ladder: dict[int, tuple[float, float]]
) -> str:
    """A complete run of the ladder; the points at the `flagged` worker counts carry BOUND."""
    store.create_run(RunRecord(
        id=run_id, plan_name=run_id, scenario="default", labels={}, plan_yaml=plan,
        folder=f"/tmp/{run_id}", scale=1.0, status="complete",
        started="2026-01-01T00:00:00+00:00", finished="2026-01-01T00:01:00+00:00",
        total_points=len(ladder), engine_version="fio-3.33", arraybench_version="0.1.0",
        host="h", kernel="6.1", targets=["/tmp/t.dat"], latency_bound_us=1000.0,
        latency_stat="mean",
    ))  # fmt: skip
    for seq, (workers, (iops, lat)) in enumerate(sorted(ladder.items()), start=1):
        point = NewPoint(
            run_id=run_id, seq=seq, identity=PointIdentity("rr", f"w{workers}-qd1"),
            family="Random 4 KiB", mix="Read", pattern="random", bs=4096, read_pct=100,
            region="backend", ioengine="null", unit="IOPS", workers=workers, iodepth=1,
            jobs=workers, targets="/tmp/t.dat", folder=f"/tmp/{run_id}/p{seq}", started="a",
            finished="b", runtime_s=1.0, engine_version="fio-3.33", usr_cpu=40.0 * workers,
            sys_cpu=10.0 * workers, cpu_busy_pct=97.0 if workers in flagged else 30.0,
        )  # fmt: skip
        found = [VALIDITY.new(finding_data([BOUND]))] if workers in flagged else []
        store.add_point(point, _metrics(iops, lat), [], findings=found)
    return run_id


def _compare(results: Path, *specs: str, width: int = 160) -> str:
    """compare's output as a console `width` columns wide shows it (default: a pipe's 160;
    an xdist worker's console may be 80 wide, and the table's rows would wrap)."""
    out, before = io.StringIO(), console.out.width
    console.out.width = width
    try:
        with redirect_stdout(out):
            assert cli.main(["compare", *specs, "--results", str(results)]) == 0
    finally:
        console.out.width = before
    return out.getvalue()


def _iops(value: float) -> str:
    return format_throughput(value, "IOPS")


def test_compare_leaves_flagged_points_out_as_the_report_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path)
    plain = stored_run(store, "plain", {2, 4}, _plan("plain"), LADDER)
    keeps = stored_run(store, "keeps", {4}, _plan("keeps", "report: {headline_includes_flagged: "
                                                  "true}\n"), LADDER)  # fmt: skip
    clean = stored_run(store, "clean", set(), _plan("clean"), LADDER)
    store.close()
    out = _compare(tmp_path, f"{plain}:A", f"{keeps}:B", f"{clean}:C")
    rows = {line.split("│")[2].strip(): line for line in out.splitlines() if "│ rr " in line}
    # A: w2 and w4 flagged, left out: its max and optimal point are w1's 100 kIOPS
    assert _iops(100_000) in rows["A"] and _iops(300_000) not in rows["A"], out
    assert _iops(150_000) not in rows["A"], out
    # B keeps its flagged w4 (its plan says so); C has no flags: both name w4's 300 kIOPS
    assert _iops(300_000) in rows["B"] and _iops(300_000) in rows["C"], out
    text = " ".join(out.split())
    assert (
        text.count(
            "A: 2 flagged points (generator-bound) left out of its max, optimal "
            "point and min latency"
        )
        == 1
    ), out  # one line per run, not per point
    assert "B: 1 flagged point (generator-bound) kept in its max" in text, out
    assert "headline_includes_flagged: true" in text and "note: C:" not in text  # no flags
    # what COLUMNS=100 gives the console
    narrow = _compare(tmp_path, f"{plain}:A", f"{keeps}:B", f"{clean}:C", width=100)
    assert max(cell_len(line) for line in narrow.splitlines()) <= 100, narrow  # notes wrapped
    assert " ".join(narrow.split()).count("flagged point") == 2, narrow
    # the run's own report names the same maximum as compare
    report = report_for_run(Store(tmp_path, create=False), plain)
    [cell] = report.summary[0].cells.values()
    said = f"{cell.optimal} {cell.extremes}"  # one point left: its figures said once
    assert _iops(100_000) in said and _iops(300_000) not in said, cell


def test_compare_charts_cross_each_runs_own_flagged_points(tmp_path: Path) -> None:
    """The same point keys in both runs: only A's flagged w2 and w4 get the red cross, on A's
    line (its colour), and the chart's legend says what the cross means."""
    store = Store(tmp_path)
    plain = stored_run(store, "plain", {2, 4}, _plan("plain"), LADDER)
    clean = stored_run(store, "clean", set(), _plan("clean"), LADDER)
    store.close()
    page = tmp_path / "compare.html"
    with redirect_stdout(io.StringIO()):
        code = cli.main(["compare", f"{plain}:A", f"{clean}:C", "--results", str(tmp_path),
                         "-o", str(page)])  # fmt: skip
    assert code == 0
    html = page.read_text()
    chart = html[html.index('id="workloads"') :]
    assert chart.count('class="mark-flagged"') == 2, chart
    assert "flagged: see table" in chart
    report = compare([load_scenario(Store(tmp_path, create=False), s) for s in
                      (f"{plain}:A", f"{clean}:C")])  # fmt: skip
    [overlay] = report.overlays
    assert [line.flagged for line in overlay.lines] == [[False, True, True], [False] * 3]
    [flags] = [t for t in report.appendix if t.title == "Validity flags"]
    assert [r[:3] for r in flags.rows] == [["A", "rr/w2-qd1", "generator-bound"],
                                           ["A", "rr/w4-qd1", "generator-bound"]]  # fmt: skip
    assert "Validity flags" in html  # what "see table" points to


def test_compare_says_when_every_point_of_a_curve_is_flagged(tmp_path: Path) -> None:
    store = Store(tmp_path)
    every = stored_run(store, "every", {1, 2, 4}, _plan("every"), LADDER)
    clean = stored_run(store, "clean", set(), _plan("clean"), LADDER)
    store.close()
    text = " ".join(_compare(tmp_path, f"{clean}:C", f"{every}:E").split())
    assert "E: every point of rr is flagged: its figures are named from flagged points" in text
    assert "left out" not in text


def _verdicts(store: Store, run_id: str) -> dict[str, list[str]]:
    """Criterion -> [verdict, evidence, point] of the run's report."""
    [table] = report_for_run(store, run_id).verdicts
    return {row[0]: row[1:] for row in table.rows}


def test_acceptance_verdicts_follow_the_headline_rule(tmp_path: Path) -> None:
    criteria = ("acceptance:\n  - {name: high, workload: rr, min_iops: 200000}\n"
                "  - {name: low, workload: rr, min_iops: 120000}\n")  # fmt: skip
    keep = "report: {headline_includes_flagged: true}\n"
    store = Store(tmp_path)
    plain = stored_run(store, "plain", {4}, _plan("plain", criteria), LADDER)
    keeps = stored_run(store, "keeps", {4}, _plan("keeps", criteria + keep), LADDER)
    every = stored_run(store, "every", {1, 2, 4}, _plan("every", criteria), LADDER)
    # only the flagged w4 reaches 200 kIOPS: no PASS, and the verdict says why
    high, low = _verdicts(store, plain)["high"], _verdicts(store, plain)["low"]
    assert high[0] == "NOT DECIDABLE" and high[2] == "rr/w4-qd1", high
    assert "only flagged points pass (generator-bound)" in high[1], high
    assert f"unflagged: best within the latency bound: {_iops(150_000)}" in high[1], high
    assert low[0] == "PASS" and low[2] == "rr/w2-qd1", low  # proved by an unflagged point
    kept = _verdicts(store, keeps)["high"]
    assert kept[0] == "PASS" and "the plan keeps flagged points" in kept[1], kept
    assert kept[2] == "rr/w4-qd1"
    verdict, why, _ = _verdicts(store, every)["low"]
    assert verdict == "NOT DECIDABLE" and "every point of this workload is flagged" in why
    # not a pass: `arraybench run` ends with the exit code of a run not accepted
    assert cli.verdict_exit(report_for_run(store, plain)) == cli.EXIT_NOT_ACCEPTED
    assert cli.verdict_exit(report_for_run(store, keeps)) == 0


def test_show_wraps_each_flag_as_a_hanging_paragraph_within_100_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = Store(tmp_path)
    flagged = stored_run(store, "flagged", {1, 2, 4}, _plan("flagged"), LADDER)
    store.close()
    monkeypatch.setattr(console.out, "width", 100)  # what COLUMNS=100 gives the console
    capsys.readouterr()
    assert cli.main(["show", flagged, "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    long = [line for line in out.splitlines() if cell_len(line) > 100]
    assert long == [], long
    lines = out.splitlines()
    starts = [n for n, line in enumerate(lines) if line.startswith("flagged: #")]
    assert len(starts) == 3, out  # one paragraph per flag
    first = starts[0]
    more = lines[first + 1 : starts[1]]
    assert more and all(line.startswith("     ") for line in more), out  # the hanging indent
    said = " ".join(line.strip() for line in lines[first : starts[1]])
    assert said == f"flagged: #1 rr/w1-qd1: {BOUND.kind}: {BOUND.why}; {BOUND.change}", said
    monkeypatch.setattr(console.out, "width", 160)  # a pipe: the table whole, the flags not
    assert cli.main(["show", flagged, "--results", str(tmp_path)]) == 0
    wide = capsys.readouterr().out.splitlines()
    under = wide[next(n for n, line in enumerate(wide) if line.startswith("flagged: #")) :]
    assert max(cell_len(line) for line in under) <= 100, under
