"""Findings with their confidence: fio/kernel disagreements said once per run, and a write
cliff the kernel's counters do not show marked doubtful."""

from __future__ import annotations

import pytest

from arraybench.analysis.findings import kernel_drop_pct, summarize_disagreements
from arraybench.report.sections.runnotes import disagreement_notes
from arraybench.report.sections.timelines import cliff_lines

CLIFF = {"found": True, "time_s": 6.0, "level_before": 60_000.0, "level_after": 4_200.0,
         "drop_pct": 93.0, "level_min": 3_000.0, "recovered": False}  # fmt: skip
TIMES = [float(t) for t in range(12)]


def test_kernel_drop_is_measured_around_the_cliff() -> None:
    flat = [50_000.0] * 12
    fell = [50_000.0] * 6 + [5_000.0] * 6
    assert kernel_drop_pct(TIMES, flat, 6.0) == pytest.approx(0.0)
    assert kernel_drop_pct(TIMES, fell, 6.0) == pytest.approx(90.0)
    assert kernel_drop_pct(TIMES, [None] * 12, 6.0) is None


def test_a_cliff_the_kernel_does_not_see_is_doubtful() -> None:
    (line,), _ = cliff_lines(CLIFF, "IOPS", kernel_drop=0.0)
    assert line.startswith("doubtful: write cliff at 6s") and "fell only 0 %" in line
    (line,), _ = cliff_lines(CLIFF, "IOPS", kernel_drop=90.0)
    assert line.startswith("write cliff at 6s")
    (line,), _ = cliff_lines(CLIFF, "IOPS")  # no kernel counters: nothing to say
    assert not line.startswith("doubtful")


def test_disagreements_are_one_line_per_run() -> None:
    flags = [(f"rand/w{n}", f"kernel saw {n * 10} % more MB/s than fio on vda (other I/O on the "
              "device?)") for n in range(1, 40)]  # fmt: skip
    flags.append(("seq/w1", "kernel saw 7669153 % more MB/s than fio on vda (read-ahead?)"))
    found = summarize_disagreements(flags, compared=146)
    assert found is not None
    assert (found.points, found.of, found.worst_point) == (40, 146, "seq/w1")
    assert found.likely_cause == "other I/O on the device?"
    (note,) = disagreement_notes(found)
    assert "40 of 146 points" in note and "worst seq/w1" in note and "7669153 %" in note
    assert summarize_disagreements([], 10) is None and disagreement_notes(None) == []
    assert found.same_bytes == 0 and "merged or split" not in note
    split = "kernel saw 300 % more IOPS than fio on vda (same bytes in more requests: split I/O)"
    found = summarize_disagreements([*flags, ("seq/w2", split), ("seq/w4", split)], 146)
    assert found is not None and found.same_bytes == 2
    (note,) = disagreement_notes(found)
    assert "42 of 146 points (2 of them the same bytes in other requests: merged or split" in note


def test_the_worst_disagreement_is_a_real_one_when_there_is_one() -> None:
    """A merged-I/O remark's 83.3 % fewer requests is not worse than other bytes on the
    device: the note names the flag that left a point out."""
    merged = ("seq/w16", "kernel saw 83.3 % fewer IOPS than fio on vda (same bytes in fewer "
              "requests: merged I/O; MB/s +0.0 %, 33 s compared)")  # fmt: skip
    real = ("rand/w2", "kernel saw 20.7 % more MB/s than fio on vda (other I/O on the device; "
            "6 s compared): the bytes differ")  # fmt: skip
    found = summarize_disagreements([merged, real], compared=3)
    assert found is not None and found.worst_point == "rand/w2" and found.same_bytes == 1
    assert found.likely_cause == "other I/O on the device"
    alone = summarize_disagreements([merged], compared=3)
    assert alone is not None and alone.likely_cause == "same bytes in fewer requests: merged I/O"
