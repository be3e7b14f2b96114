"""A point's identity is typed (point_identity.py): its key is written from it, its parts are
stored in columns of their own, and no module but point_identity reads a key back."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from arraybench.point_identity import PointIdentity, from_key, level_name
from arraybench.store.db import Store
from arraybench.store.migrations import MIGRATIONS

SRC = Path(__file__).resolve().parents[2] / "src" / "arraybench"
# the modules that may read a key back: the identity itself, and the store's one-time fill of
# the identity columns of rows stored before them (it calls from_key)
ALLOWED = {"point_identity.py", "store/db.py"}
# a key taken apart: split/partition on `/`, `#` or `@`, the round mark as text, a key's
# prefix, suffix or `/` count tested, or the inverse function called
PARSES = [
    re.compile(r"key\b[\w\]\)'\"]*\s*\.\s*r?(?:split|partition)\(\s*f?[\"'][/#@ ]"),
    re.compile(r"[\"']@r"),
    re.compile(
        r"\.key\s*\.\s*(?:startswith|endswith|count|find|index|removeprefix|removesuffix)\("
    ),
    re.compile(r"\b(?:from_key|repetition_in_key|round_in_key|scenario_in_key)\("),
]
KEYS = [
    PointIdentity("rr", "w1-qd1"),
    PointIdentity("rr", "w4-qd8-d2-h3", "C3", None, 2),
    PointIdentity("seq-1m", "w1-qd32", None, 3),
    PointIdentity("r8", "w1-qd1", "C4", 2, 3),
    PointIdentity("curve-rr", "p50"),
    PointIdentity("interference", "base+steps"),
]


def _parses(line: str) -> bool:
    return any(p.search(line) for p in PARSES)


def test_the_pattern_finds_the_parses_it_replaced() -> None:
    """Each form a key was parsed in before the identity had columns is found."""
    old = [
        'return key.rsplit("/", 1)[-1]',
        "said = f\"{p.point.key.split('/', 1)[-1]}\"",
        'workload = step.key.split("/", 1)[0].removeprefix("curve-")',
        'tests.setdefault(p.key.rpartition("@r")[0], [])',
        'return scenario if point.key.startswith(f"{scenario}/") else None',
        'if p.key.count("/") == 1 and "@r" not in p.key',
        "level = into.setdefault(repetition_in_key(p.key)[0], [])",
        'series = key.split(" [", 1)[0].rsplit("/", 1)[0]',
        'base, mark, number = key.rpartition("#")',
    ]
    assert [line for line in old if not _parses(line)] == []
    assert not _parses("parts.append(f\"{key.split('_')[0]} {value}\")")  # not a point key


def test_no_module_but_the_identity_parses_a_point_key() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        if name in ALLOWED:
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if _parses(line):
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == [], "a point key parsed outside point_identity.py (read p.identity):\n" + (
        "\n".join(found)
    )


@pytest.mark.parametrize("identity", KEYS, ids=lambda i: i.key)
def test_a_key_read_back_is_the_identity_it_was_written_from(identity: PointIdentity) -> None:
    assert from_key(identity.key, identity.workload, identity.scenario) == identity
    assert identity.key == identity.level_key + (
        f"#{identity.repetition}" if identity.repetition > 1 else ""
    )
    assert identity.key.endswith("/" + identity.label)


def test_an_imports_scenario_is_not_in_its_key() -> None:
    """An import's scenario (from a file name) is a label: its key starts with the workload."""
    assert from_key("rr/w1-qd1", "rr", "L1C4").scenario is None
    assert level_name(2, 8, 4, 2) == "w2-qd8-d4-h2" and level_name(1, 1, None, 0) == "w1-qd1"


RUN = ("r1", "p", "default", "{}", "", "/x/runs/r1", 1.0, "complete", "a", None, 6, None,
       "0", "h", "k", "[]", 1000.0, "mean")  # fmt: skip


def test_a_store_from_before_the_identity_columns_is_filled_on_first_open(tmp_path: Path):
    """Rows stored by migration 5's schema get their identity once, from their keys."""
    db = sqlite3.connect(tmp_path / "arraybench.db")
    for migration in MIGRATIONS[:5]:
        db.executescript(migration)
    db.execute("PRAGMA user_version=5")
    db.execute(f"INSERT INTO runs VALUES ({', '.join('?' * len(RUN))})", RUN)
    stored = [(k, i.workload, i.scenario) for i in KEYS for k in [i.key]]
    stored.append(("rr/w2-qd1", "rr", "L1C4"))  # imported, its file name's scenario
    for seq, (key, workload, scenario) in enumerate(stored, start=1):
        db.execute(
            "INSERT INTO points (run_id, seq, key, workload, family, mix, pattern, bs, read_pct,"
            " region, ioengine, unit, workers, iodepth, jobs, targets, folder, started,"
            " finished, runtime_s, scenario) VALUES ('r1', ?, ?, ?, 'f', 'm', 'random', 4096,"
            " 100, 'backend', 'libaio', 'IOPS', 1, 1, 1, '/t', '/x', 'a', 'b', 1.0, ?)",
            (seq, key, workload, scenario),
        )
    db.commit()
    db.close()
    points = Store(tmp_path).points("r1")
    assert [p.identity for p in points] == [*KEYS, PointIdentity("rr", "w2-qd1")]
    assert [p.key for p in points] == [p.identity.key for p in points]
    assert points[-1].scenario == "L1C4"
    assert Store(tmp_path).schema_version == len(MIGRATIONS)
