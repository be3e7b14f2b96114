"""Numbers no store can hold, in real result files of every format an import reads (fio JSON,
terse, vdbench, elbencho, DiskSpd) or taken from a file name by `--pattern`: the import is
refused whole with one located line and exit 2, before anything is written, and the store and
the results folder are exactly as they were. An import interrupted while it stores its
points leaves nothing behind either (one transaction)."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arraybench.store.db import Store
from tests.conftest import DATA, main_cli
from tests.hostile.stores import SAMPLE, refused, results_with_a_run, snapshot

HUGE = 10**40 - 1  # forty nines


def _json(edit: Callable[[dict[str, Any]], None]) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        doc = json.loads(SAMPLE.read_text())
        edit(doc)
        path = folder / "edited.json"
        path.write_text(json.dumps(doc))  # NaN and Infinity as Python writes them
        return path

    return build


def _replaced(
    source: Path, name: str, old: str, new: str, count: int = 1
) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        text = source.read_text()
        assert old in text, (source, old)
        path = folder / name
        path.write_text(text.replace(old, new, count))
        return path

    return build


def _read_job(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["jobs"][0]["read"]


def _elbencho(folder: Path) -> Path:
    """A real elbencho CSV whose first READ/WRITE phase claims 10^300 IOPS."""
    rows = list(csv.reader((DATA / "elbencho/coribb_iops-direct.04threads.56977775.csv").open()))
    column, operation = rows[0].index("IOPS [last]"), rows[0].index("operation")
    line = next(i for i, r in enumerate(rows) if r[operation] in ("READ", "WRITE"))
    rows[line][column] = "1e300"
    path = folder / "phases.csv"
    with path.open("w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return path


DISKSPD = DATA / "diskspd/Write8k.txt"
TERSE = DATA / "fresh_fio3.33_terse_v3_then_json_randrw_2jobs_stonewall.txt"
VDBENCH = DATA / "vdbench/vdb_raw_flatfile.html"

CASES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "json IOPS 1e300": (_json(lambda d: _read_job(d).update(iops=1e300)),
                        "edited.json (run 1, group 0): job 'random-read' read: IOPS 1e+300"),
    "json latency NaN": (_json(lambda d: _read_job(d)["lat_ns"].update(mean=float("nan"))),
                         "mean latency (ns) nan is not a finite number"),
    "json 40-digit I/O count": (_json(lambda d: _read_job(d).update(total_ios=HUGE)),
                                "read: I/Os 1e+40 is out of range"),
    "json negative bytes": (_json(lambda d: _read_job(d).update(io_bytes=-HUGE)),
                            "bytes -1e+40 is out of range"),
    "json time stamp in year 10^22": (_json(lambda d: d.update(timestamp=10**30)),
                                      "edited.json (run 1, group 0): time stamp 1e+30"),
    "json 40-digit block size": (
        _json(lambda d: d["jobs"][0]["job options"].update(bs=str(HUGE))), "out of range"),
    "json 40-digit numjobs": (
        _json(lambda d: d["jobs"][0]["job options"].update(numjobs=str(HUGE))),
        "workers 1e+40 is out of range (1 to 1,000,000)"),
    "json infinite percentile": (
        _json(lambda d: _read_job(d)["clat_ns"]["percentile"].update({"99.000000": 1e400})),
        "99th percentile (ns) inf is not a finite number"),
    "terse 40-digit KiB": (
        _replaced(TERSE, "terse.txt", "mixed;0;0;41048;", f"mixed;0;0;{HUGE};"),
        "terse.txt (run 1, group 0): job 'mixed' read: bytes 1.02e+43"),
    "vdbench rate 1e30": (
        _replaced(VDBENCH, "flatfile.html", " avg_2-60 9999988 15773.1017 ",
                  " avg_2-60 9999988 1e30 "),
        "flatfile.html:106: column 'rate' 1e+30 is out of range"),
    "elbencho IOPS 1e300": (_elbencho, "phases.csv:"),
    "diskspd 40-digit I/O count": (
        _replaced(DISKSPD, "diskspd.txt", "162301329408 |     19812174",
                  f"162301329408 |     {HUGE}", count=3),
        "diskspd.txt:325: totals 1e+40 is out of range"),
    "diskspd infinite percentile": (
        _replaced(DISKSPD, "diskspd.txt", "min |        N/A |      0.015 |",
                  "min |        N/A |        inf |"),
        "diskspd.txt:574: pct inf is not a finite number"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_a_number_out_of_range_refuses_the_import_and_stores_nothing(
    tmp_path: Path, case: str
) -> None:
    build, said = CASES[case]
    results = tmp_path / "results"
    results_with_a_run(results)
    before = snapshot(results)
    hostile = build(tmp_path)
    line = refused(["import", str(hostile), "--results", str(results)], said)
    assert line.startswith("error: import refused: "), line
    assert "nothing was stored" in line
    assert snapshot(results) == before


def test_a_hostile_file_among_good_ones_refuses_them_all(tmp_path: Path) -> None:
    """All or nothing: three good files and one with an absurd figure store no point."""
    folder = tmp_path / "archive"
    folder.mkdir()
    for source in (SAMPLE, DATA / "20_fioplot_fio3.16_json_randread.json", DISKSPD):
        shutil.copy(source, folder)
    CASES["vdbench rate 1e30"][0](folder)
    results = tmp_path / "results"
    results_with_a_run(results)
    before = snapshot(results)
    refused(["import", str(folder), "--results", str(results)], "flatfile.html:106:")
    assert snapshot(results) == before


def test_a_refused_import_into_a_new_folder_creates_nothing(tmp_path: Path) -> None:
    hostile = CASES["json IOPS 1e300"][0](tmp_path)
    results = tmp_path / "fresh"
    refused(["import", str(hostile), "--results", str(results)], "IOPS 1e+300")
    assert not results.exists()


@pytest.mark.parametrize(
    ("name", "pattern", "said"),
    [
        (f"w{HUGE}.json", r"w(?P<workers>\d+)", "the name pattern's workers 1e+40"),
        (f"qd{HUGE}.json", r"qd(?P<iodepth>\d+)", "the name pattern's iodepth 1e+40"),
        (f"BS{HUGE}k.json", r"BS(?P<bs>\d+k)", "the name pattern's bs"),
        ("d0000000000000000000000000000000000000000000000007.json", r"d(?P<devices>\d+)", ""),
        ("h2000000.json", r"h(?P<hosts>\d+)", "the name pattern's hosts 2000000"),
    ],
)
def test_a_pattern_group_out_of_range_refuses_the_import(
    tmp_path: Path, name: str, pattern: str, said: str
) -> None:
    results = tmp_path / "results"
    results_with_a_run(results)
    before = snapshot(results)
    shutil.copy(SAMPLE, tmp_path / name)
    argv = ["import", str(tmp_path / name), "--pattern", pattern, "--results", str(results)]
    if not said:  # leading zeros: 7 devices, a number in range
        assert main_cli(*argv).returncode == 0
        return
    refused(argv, said)
    assert snapshot(results) == before


def test_an_import_interrupted_while_storing_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C after the second of four points was written: the run, its points and its
    folder are gone, the store and the folder as before (exit 130, one line)."""
    results = tmp_path / "results"
    results_with_a_run(results)
    before = snapshot(results)
    stored = []
    add_point = Store.add_point

    def interrupted(self: Store, *args: Any, **kwargs: Any) -> int:
        if len(stored) == 2:
            raise KeyboardInterrupt
        stored.append(add_point(self, *args, **kwargs))
        return stored[-1]

    monkeypatch.setattr(Store, "add_point", interrupted)
    source = DATA / "18_fioblog_fio3.30_normal_nsec_multi_runs.txt"  # four points
    refused(["import", str(source), "--results", str(results)], "interrupted", code=130)
    assert len(stored) == 2  # two points had been written inside the transaction
    assert snapshot(results) == before
