"""What a point is, typed: its plan scenario, series, load level, SNIA round and repetition.

A point's key (`C3/rr/w4-qd1-d2-h2@r3#2`) is written from this record and stored beside
its parts (the points table's `level`, `round`, `repetition`, `plan_scenario` columns, with
`workload`): readers take the parts, never parse the key. This is the one module that reads
a key back (`from_key`), for the rows a store written before those columns held
(store/db.py fills them once, on first open).

Layer 0, imported by the store's records: no plan model (pydantic) for a key's parts.
"""

from __future__ import annotations

from dataclasses import dataclass

REPEAT_MARK = "#"  # `rr/w4-qd1#2`: the second repetition of rr/w4-qd1
ROUND_MARK = "@r"  # `rr/w4-qd1@r3`: SNIA round 3 of rr/w4-qd1


def level_name(workers: int, iodepth: int, devices: int | None, hosts: int | None) -> str:
    """A load level as keys name it: w<workers>-qd<iodepth>[-d<devices>][-h<hosts>]."""
    on = f"-d{devices}" if devices else ""
    over = f"-h{hosts}" if hosts else ""
    return f"w{workers}-qd{iodepth}{on}{over}"


@dataclass(frozen=True)
class PointIdentity:
    """One point's place in a campaign: the parts its key is written from."""

    workload: str  # the series' name: a plan workload, `curve-rr`, `interference`, `metadata`
    level: str  # the load level within it: `w4-qd1-d2-h2`, `p50`, `t4`, `base+steps`
    scenario: str | None = None  # the plan scenario (plan/scenarios.py) it was measured in
    round: int | None = None  # SNIA round of a repeated workload
    repetition: int = 1  # of `repeat`: the first keeps the plain key (stores stay readable)

    @property
    def key(self) -> str:
        """The stored point's key, unique in its run."""
        return f"{self.series_key}/{self.label}"

    @property
    def level_key(self) -> str:
        """The key without its repetition: every repetition of one level shares it."""
        return f"{self.series_key}/{self.level_label}"

    @property
    def series_key(self) -> str:
        """The series within its scenario: `C3/rr`, or `rr`."""
        return f"{self.scenario}/{self.workload}" if self.scenario else self.workload

    @property
    def label(self) -> str:
        """The key's last part, as charts and tables name a point within its series."""
        again = f"{REPEAT_MARK}{self.repetition}" if self.repetition > 1 else ""
        return f"{self.level_label}{again}"

    @property
    def level_label(self) -> str:
        """The label without the repetition: the level as every repetition shares it."""
        return f"{self.level}{ROUND_MARK}{self.round}" if self.round else self.level


GRID_MARK = "@"  # WORKLOAD@DATA: a plan's data_grid copy of WORKLOAD, written as preset DATA


def grid_parts(workload: str) -> tuple[str, str] | None:
    """`fill@db` -> ("fill", "db"): a data_grid copy's workload and data value; a workload
    without the mark: None (docs/data.md)."""
    base, mark, value = workload.partition(GRID_MARK)
    return (base, value) if mark else None


def from_key(key: str, workload: str, scenario: str | None = None) -> PointIdentity:
    """A stored key read back into its parts: only for rows stored before the parts had
    columns. `workload` is the row's own column (the key's series); `scenario` its scenario
    column, which only campaign points carry at the head of their key (an import's scenario
    came from a file name and is not in the key)."""
    rest, repetition = _mark(key, REPEAT_MARK)
    rest, round_no = _mark(rest, ROUND_MARK)
    in_scenario = scenario if scenario and rest.startswith(f"{scenario}/") else None
    if in_scenario:
        rest = rest[len(in_scenario) + 1 :]
    head, _, level = rest.rpartition("/")
    return PointIdentity(head or workload, level, in_scenario, round_no, repetition or 1)


def _mark(text: str, mark: str) -> tuple[str, int | None]:
    """The text without a trailing `<mark><digits>`, and the number (None: no such mark)."""
    base, found, number = text.rpartition(mark)
    return (base, int(number)) if found and number.isdigit() else (text, None)
