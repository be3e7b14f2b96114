"""The findings' kinds (finding_kinds.py): each writer's output has exactly its TypedDict's
keys, the stored JSON is the one earlier versions wrote, and a misspelt key is refused."""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import MISSING, asdict, fields, replace
from pathlib import Path

import pytest

from arraybench.analysis.cliff import CliffResult, find_write_cliff, gc_throughput_estimate
from arraybench.analysis.events import EventImpact
from arraybench.analysis.findings import cliff_finding, series, steady_finding
from arraybench.analysis.interference import InterferenceChart, StepRow
from arraybench.analysis.metadata import MetadataRow
from arraybench.analysis.steady import SteadyResult, steady_state
from arraybench.analysis.validity import Flag, finding_data, flags_by_point, flags_of
from arraybench.events.records import EventRecord
from arraybench.finding_kinds import (
    CLIFF,
    INTEGRITY,
    KINDS,
    PROVENANCE,
    PURGE,
    ROUNDS,
    STEADY,
    VALIDITY,
    BlockProblemData,
    CliffFinding,
    EventImpactData,
    EventRecordData,
    FindingKeyError,
    FindingKind,
    HostViewData,
    IntegrityFinding,
    InterferenceChartData,
    MetadataRowData,
    ScenarioStepFinding,
    SteadyFields,
    StepRowData,
    check_finding,
)
from arraybench.integrity.check import BlockProblem, IntegrityReport
from arraybench.plan.load import parse_plan_text
from arraybench.plan.model import Rounds
from arraybench.records import Finding
from arraybench.run import provenance
from arraybench.run.campaign import rounds_verdict
from arraybench.run.point import gc_rate_of
from arraybench.run.scenarios import HostView, StepRecord
from arraybench.targets.condition import purge_target
from tests.records import BLANK_POINT, keyed, sample_12

CLIFF_EXTRA = {"found", "seconds", "gc_bytes_per_s"}


def keys(shape: object) -> set[str]:
    return set(shape.__required_keys__) | set(shape.__optional_keys__)  # type: ignore[attr-defined]


def test_every_kind_is_registered_under_its_name_and_a_name_is_taken_once():
    built_in = {"cliff", "steady", "monitor", "validity", "hosts", "events", "integrity",
                "interference", "metadata", "import", "implausible", "provenance", "adaptive",
                "purge", "precondition", "rounds", "array_series", "scenario_step",
                "scenario_paths"}  # fmt: skip
    assert built_in <= set(KINDS) and all(name == k.name for name, k in KINDS.items())
    assert FindingKind("cliff", CliffFinding) == CLIFF  # the same declaration again: fine
    with pytest.raises(ValueError, match="two finding kinds named 'cliff'"):
        FindingKind("cliff", SteadyFields)


def test_shapes_follow_the_dataclasses_they_store():
    # a field added to one of these dataclasses is stored: its TypedDict must name it
    assert keys(CliffFinding) == {f.name for f in fields(CliffResult)} | CLIFF_EXTRA
    assert keys(SteadyFields) == {f.name for f in fields(SteadyResult)}
    stored = {f.name for f in fields(IntegrityReport)} | {"problems_omitted", "clean", "lost",
                                                          "corrupt", "unreadable"}  # fmt: skip
    on_hosts = {"host", "writer", "error"}  # run.host_verify: one finding per host
    assert keys(IntegrityFinding) == stored | {"summary", "writer_error"} | on_hosts
    nested = [
        (EventRecordData, EventRecord), (EventImpactData, EventImpact),
        (BlockProblemData, BlockProblem), (StepRowData, StepRow),
        (InterferenceChartData, InterferenceChart), (MetadataRowData, MetadataRow),
    ]  # fmt: skip
    for shape, record in nested:
        assert keys(shape) == {f.name for f in fields(record)}, shape.__name__
        # a field with a default came later: older stores lack it, so it is NotRequired
        later = {f.name for f in fields(record) if f.default is not MISSING}
        assert set(shape.__optional_keys__) == later, shape.__name__  # type: ignore[attr-defined]
    # scenario records are written whole (always every key), by asdict of these dataclasses
    assert keys(ScenarioStepFinding) == {f.name for f in fields(StepRecord)}
    assert keys(HostViewData) == {f.name for f in fields(HostView)}


def test_cliff_and_steady_writers_store_the_json_earlier_versions_stored():
    samples = sample_12()
    found = cliff_finding(samples, 4096)
    check_finding("cliff", found)
    assert set(found) == keys(CliffFinding)  # found: every optional key is there
    times, iops, bw = series(samples)
    cliff = find_write_cliff(times, iops, bytes_per_io=4096, bw_bytes=bw)
    assert cliff is not None
    gc = gc_throughput_estimate(times, bw, cliff)
    before = {"found": True, "seconds": len(times), **asdict(cliff), "gc_bytes_per_s": gc}
    assert json.dumps(found) == json.dumps(before)  # same keys in the same order
    flat = [replace(s, write_iops=1000.0, write_mbps=4.0) for s in samples[:20]]
    check_finding("cliff", cliff_finding(flat, 4096))  # not found: two keys
    steady = steady_finding(samples)
    check_finding("steady", steady)
    # a 54-second point: its last 10 s (a fifth) as 5 rounds of 2 s; earlier versions stored
    # no `rounds` (one second a round, the last 5)
    rounds = [statistics.fmean(iops[i : i + 2]) for i in range(44, 54, 2)]
    judged = {**asdict(steady_state(rounds, window=5)), "window_start": 44, "window_end": 54}
    before = {"window": 10, "samples": len(iops), "rounds": 5, **judged}
    assert json.dumps(steady) == json.dumps(before)


def test_rounds_verdict_has_the_rounds_keys():
    points = [keyed(BLANK_POINT, f"r8/w1-qd1@r{i}", seq=i, workload="r8",
                      metrics={**BLANK_POINT.metrics, "total_iops": 1000.0 + i})
              for i in range(1, 4)]  # fmt: skip
    verdict = rounds_verdict(points, Rounds(workloads=["r8"], track="r8", window=3, max=5), 3)
    check_finding("rounds", verdict)
    assert verdict["values"] == [1001.0, 1002.0, 1003.0] and verdict["steady"]
    assert ROUNDS.among([ROUNDS.new(verdict), STEADY.new(steady_finding([]))]) == [verdict]


def test_validity_flags_round_trip_through_their_finding():
    flag = Flag("page-cache", "why", "change")
    data = finding_data([flag])
    check_finding("validity", data)
    assert data == {"flags": [asdict(flag)]} and flags_of(data) == [flag]
    assert flags_by_point([VALIDITY.new(data, point_id=3)]) == {3: [flag]}


def test_purge_provenance_and_integrity_writers(tmp_path: Path):
    target = tmp_path / "t.dat"
    target.write_bytes(b"\0" * 4096)
    check_finding("purge", PURGE.new({"targets": [purge_target(str(target), "file")]}).data)
    plan = parse_plan_text(
        f"name: p\ntargets: [{{path: {target}, size: 1m}}]\nworkloads:\n"
        "  - {name: r, pattern: random, bs: 4k, read: 100}\n",
        "p.yaml",
    )
    check_finding("provenance", PROVENANCE.new(provenance.collect(plan, {str(target): 4096})).data)
    report = IntegrityReport(str(target), "j", 4096, 0, 4096, 1, False)
    report.problems.append(BlockProblem(0, "lost", 2, 1, 10, "generation 1, not 2"))
    data = report.as_dict() | {"summary": report.summary_line(), "writer_error": None}  # sidecars
    check_finding("integrity", data)
    found = INTEGRITY.of(Finding(1, "integrity", data))
    assert not found["clean"] and found["problems"][0]["expected_generation"] == 2


def test_gc_rate_reads_the_cliff_findings():
    found = cliff_finding(sample_12(), 4096)
    rate = gc_rate_of([STEADY.new(steady_finding([])), CLIFF.new(found)])
    assert rate == found["gc_bytes_per_s"] and rate is not None and rate > 1e8


@pytest.mark.parametrize(
    ("kind", "data", "words"),
    [
        ("purge", {"target": []}, "unknown key(s) target; missing key(s) targets"),
        ("monitor", {"flags": []}, "missing key(s) devices"),
        ("cliff", {"found": False, "seconds": 3, "gc_byte_per_s": 1.0}, "unknown key(s) gc_"),
        ("clif", {"found": False}, "unknown finding kind 'clif'"),
    ],
)
def test_a_misspelt_or_missing_key_is_refused(kind: str, data: dict[str, object], words: str):
    with pytest.raises(FindingKeyError, match=re.escape(words)):
        check_finding(kind, data)


def test_a_finding_read_as_another_kind_is_an_error():
    with pytest.raises(ValueError, match="'steady' finding read as 'cliff'"):
        CLIFF.of(STEADY.new(steady_finding([])))


def test_old_findings_without_later_keys_are_read():
    """Stores written before `paths`, `io_errors`, `t0_unix` or `host_tuning` existed."""
    check_finding("events", {"records": [], "impact": []})
    check_finding("provenance", {"machine": {}, "targets": [], "hosts": []})
