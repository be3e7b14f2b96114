"""The notes box holds a few lines, counts and where to look; every note waits in the
appendix."""

from __future__ import annotations

from arraybench.report.sections.appendix import MAX_BOX, flags_line, notes_box
from arraybench.report.sections.spread import LevelFacts
from tests.records import BLANK_POINT, keyed

POINTS = [keyed(BLANK_POINT, f"rr/w{w}-qd1") for w in (1, 2, 4, 8)]


def test_the_box_counts_the_flags_and_sends_the_rest_to_the_appendix() -> None:
    remarks = {"rr/w1-qd1": ["split-io"], "rr/w2-qd1": ["split-io", "host-busy"]}
    facts = LevelFacts(flagged={"rr/w8-qd1": ["generator-bound"]}, remarks=remarks)
    line = flags_line(facts, POINTS)
    assert line == ("validity flags: 1 of 4 points left out of the headline figures: "
                    "generator-bound; 2 kept with a remark (†): split-io, host-busy; every flag "
                    "in the appendix, the rules in docs/validity.md")  # fmt: skip
    notes = ["3 of 7 points are missing: continue with `arraybench run --resume X`",
             "run at --scale 0.05: durations and sizes were scaled",
             "rr: w8-qd1 (generator-bound) left out ... flagged, ...",
             *(f"note {i}" for i in range(6))]  # fmt: skip
    box = notes_box(notes, facts, POINTS)
    assert len(box) == MAX_BOX and box[0].startswith("3 of 7 points are missing")
    assert box[1] == line and box[2].startswith("run at --scale")
    assert box[-1] == "7 more notes in the appendix"  # of 9: the missing points and the scale said
    assert notes_box(notes[1:2], LevelFacts(), POINTS) == notes[1:2]  # few: as they are


def test_kept_flagged_points_are_said_kept() -> None:
    facts = LevelFacts(flagged={"rr/w8-qd1": ["ramp"]}, include_flagged=True)
    assert "1 of 4 points kept in (report.headline_includes_flagged): ramp" in str(
        flags_line(facts, POINTS)
    )
    assert flags_line(LevelFacts(), POINTS) is None
