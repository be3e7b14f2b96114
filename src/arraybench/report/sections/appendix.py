"""What the notes box says up front, and what waits in the appendix.

A customer reads the set-up, the summary, the seed tables and the charts first; the notes box
above them holds a few lines (counts and where to look), and every note in full, every
validity flag and the per-point tables follow the charts in the appendix.
"""

from __future__ import annotations

from collections.abc import Sequence

from arraybench.report.model import REMARK_MARK, Internal, ReportModel
from arraybench.report.sections.inputs import RunInputs
from arraybench.report.sections.spread import RULES, LevelFacts
from arraybench.store.db import PointRecord

# a customer's report: the plan's key named by what it does (report/audience.py)
INTERNAL = (Internal(r" \(report\.headline_includes_flagged\)", " (as the plan asks)"),)
MAX_BOX = 4  # lines in the notes box, the "more in the appendix" line included


def flags_line(facts: LevelFacts, points: Sequence[PointRecord]) -> str | None:
    """One line: how many levels left the headline figures and how many stayed with a
    remark, by kind; None when no point carries a flag."""
    if not facts.flagged and not facts.remarks:
        return None
    levels = len({p.identity.level_key for p in points})  # as LevelFacts keys them

    def kinds(by_level: dict[str, list[str]]) -> str:
        return ", ".join(dict.fromkeys(k for found in by_level.values() for k in found))

    said = []
    if facts.flagged:
        kept = "kept in (report.headline_includes_flagged)" if facts.include_flagged else (
            "left out of the headline figures")  # fmt: skip
        said.append(f"{len(facts.flagged)} of {levels} points {kept}: {kinds(facts.flagged)}")
    if facts.remarks:
        remarked = set(facts.remarks) - set(facts.flagged)
        said.append(f"{len(remarked)} kept with a remark ({REMARK_MARK}): {kinds(facts.remarks)}")
    return (f"validity flags: {'; '.join(said)}; every flag in the appendix, the rules in "
            f"{RULES}")  # fmt: skip


def notes_box(notes: Sequence[str], facts: LevelFacts, points: Sequence[PointRecord]) -> list[str]:
    """At most MAX_BOX lines: missing points first, the flags' counts, then the first other
    notes; the per-series notes on flagged points (spread.headline_notes: each says
    "flagged") are counted in the flags' line, not repeated (the appendix has them)."""
    first = [n for n in notes if "points are missing" in n]
    counted = flags_line(facts, points)
    rest = [n for n in notes if n not in first and "flagged" not in n]
    box = first + ([counted] if counted else [])
    room = MAX_BOX - len(box)
    if len(rest) <= room:
        return box + rest
    shown = rest[: room - 1]
    more = len(notes) - len(first) - len(shown)
    return [*box, *shown, f"{more} more notes in the appendix"]


def section(model: ReportModel, run: RunInputs) -> None:
    """The notes box, last: it counts every section's notes."""
    model.notes_box = notes_box(model.notes, run.facts, run.points)
