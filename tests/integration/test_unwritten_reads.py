"""Reads of never-written blocks on a block device (analysis/written.py, run/written.py): a read
point whose region this run had not written gets the `unwritten-region` remark; once a write
point has covered the region, or the plan preconditions the target, reads are not flagged.
Real fio on a loop device over a sparse file (its unwritten blocks are holes: zeros, read from
no media, as a thin LUN's)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.analysis.validity import REMARK_KINDS, flags_of
from arraybench.finding_kinds import VALIDITY
from arraybench.store.db import Store
from tests.conftest import main_cli, needs_fio
from tests.loopdev import attached, sparse_file

READ_WRITE_READ = (
    "  - {name: rr-first, pattern: random, bs: 4k, read: 100}\n"
    "  - {name: fill, pattern: sequential, bs: 1m, read: 0, load: {workers: [1], iodepth: [8]}}\n"
    "  - {name: rr-after, pattern: random, bs: 4k, read: 100}\n"
)


@pytest.fixture
def loopdev(tmp_path: Path) -> Iterator[str]:
    with attached(sparse_file(tmp_path / "backing.img", 32 << 20)) as dev:
        yield dev


def _flags(tmp_path: Path, device: str, extra: str = "", size: str = "") -> dict[str, list[str]]:
    plan = tmp_path / "plan.yaml"
    sized = f"\n    size: {size}" if size else ""
    plan.write_text(f"name: unwritten\ntargets:\n  - path: {device}{sized}\n"
                    f"allow_destroy: [{device}]\ntiming: {{ramp: 0s, duration: 2s}}\n"
                    f"load: {{workers: [1], iodepth: [4]}}\n{extra}"
                    f"workloads:\n{READ_WRITE_READ}")  # fmt: skip
    results = tmp_path / "res"
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stderr
    store = Store(results, create=False)
    ((run, _),) = store.list_runs()
    keys = {p.id: p.workload for p in store.points(run.id)}
    found: dict[str, list[str]] = {name: [] for name in keys.values()}
    for f in store.findings(run.id, VALIDITY.name):
        found[keys[f.point_id or 0]] += [x.kind + ": " + x.why for x in flags_of(VALIDITY.of(f))]
    return found


@needs_fio
def test_reads_before_any_write_are_said_reads_after_the_fill_are_not(
    tmp_path: Path, loopdev: str
) -> None:
    flags = _flags(tmp_path, loopdev)
    [first] = [f for f in flags["rr-first"] if f.startswith("unwritten-region")]
    assert "about 100% of the region it read was not written by this run" in first
    assert "unwritten-region" in REMARK_KINDS  # kept in the headline, marked
    # 2 s of 1 MiB sequential writes at iodepth 8 write the 32 MiB device many times over
    assert not [f for f in flags["rr-after"] if f.startswith("unwritten-region")], flags
    assert not [f for f in flags["fill"] if f.startswith("unwritten-region")]  # no reads


@needs_fio
def test_a_preconditioned_target_is_written(tmp_path: Path, loopdev: str) -> None:
    flags = _flags(tmp_path, loopdev, "precondition: {passes: 1}\n")
    assert not [f for fs in flags.values() for f in fs if f.startswith("unwritten-region")]


@needs_fio
def test_a_file_target_is_laid_out_with_data(tmp_path: Path) -> None:
    flags = _flags(tmp_path, str(tmp_path / "t.dat"), size="16m")
    assert not [f for fs in flags.values() for f in fs if f.startswith("unwritten-region")]


def test_plan_check_says_which_reads_come_before_any_write(tmp_path: Path, loopdev: str) -> None:
    plan = tmp_path / "plan.yaml"
    text = (f"name: unwritten\ntargets:\n  - path: {loopdev}\nallow_destroy: [{loopdev}]\n"
            f"workloads:\n{READ_WRITE_READ}")  # fmt: skip
    plan.write_text(text)
    said = " ".join(main_cli("plan", "check", str(plan)).stdout.split())
    assert f"block device(s) {loopdev}: rr-first read before any point of this run writes" in said
    assert "precondition: {passes: 1} writes every target first" in said
    plan.write_text(text.replace("workloads:", "precondition: {passes: 1}\nworkloads:"))
    assert "read before any point" not in main_cli("plan", "check", str(plan)).stdout
