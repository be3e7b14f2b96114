"""30 real public fio outputs (tests/data/public, provenance in tests/data/MANIFEST.md) import
with fio's own printed figures: IOPS and bandwidth within 0.5 %, mean latency within 1 %.

fio's printed figures are read here by regular expressions of the test's own, block by block
and direction by direction, never by the parser under test. fio 3.x prints IOPS and
bandwidth with 3-4 significant digits (and fio 3.12 sometimes drops a carry: 21964 IOPS
printed "21.0k"); the parsed figure must print as fio printed it in that case.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arraybench.engines.fio.parse import parse_fio_json
from arraybench.engines.fio.textparse import parse_fio_text
from arraybench.engines.measurement import Measurement
from arraybench.importer import import_paths
from arraybench.store.db import Store
from tests.unit.test_textparse import fio_num2str

PUBLIC = Path(__file__).resolve().parent.parent / "data" / "public"
FILES = sorted(p for p in PUBLIC.iterdir() if p.is_file())
HEADER = re.compile(r"^(?:<[^<>\s]+> ?)?(?!All clients)\S.*?: \(groupid=\d+, jobs=\d+\)", re.M)
END = re.compile(r"^(?:Run status group|All clients|<[^<>\s]+> *$)", re.M)
DIRECTION = re.compile(r"^\s*(read|write|trim)\s*: (?:IOPS=|io=)", re.M)
POWER = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
BINARY = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "k": 1000}
NS = {"nsec": 1, "usec": 1e3, "msec": 1e6}


def test_there_are_thirty_public_outputs_with_provenance() -> None:
    manifest = (PUBLIC.parent / "MANIFEST.md").read_text()
    assert len(FILES) == 30
    for path in FILES:
        assert f"| {path.name} |" in manifest, path.name


def test_the_public_outputs_import_without_a_skip(tmp_path: Path) -> None:
    store = Store(tmp_path / "results")
    result = import_paths(store, [PUBLIC], run_name="public")
    assert not result.skipped, result.skipped
    assert len(result.points) >= 100
    assert not [n for n in result.notes if "implausible" in n]


def _printed_text(text: str) -> list[tuple[str, str, str, float | None]]:
    """(direction, printed IOPS, printed bandwidth, printed mean latency ns) per block and
    direction, in file order."""
    found = []
    for header in HEADER.finditer(text):
        end = END.search(text, header.end())
        nxt = HEADER.search(text, header.end())
        stop = min(m.start() for m in (end, nxt) if m) if (end or nxt) else len(text)
        block = text[header.end() : stop]
        starts = list(DIRECTION.finditer(block))
        for i, start in enumerate(starts):
            part = block[start.start() : starts[i + 1].start() if i + 1 < len(starts) else None]
            line = part.splitlines()[0]
            new = re.search(r"IOPS=([^,]+), BW=([^\s(]+)", line)
            old = re.search(r"bw=([^,]+), iops=\s*([^,]+),", line)
            iops, bw = (new.group(1), new.group(2)) if new else (old.group(2), old.group(1))
            lat = re.search(r"^\s+lat \((\w+)\): min=.*?avg=\s*([\d.]+)", part, re.M)
            clat = re.search(r"^\s+clat \((\w+)\): min=.*?avg=\s*([\d.]+)", part, re.M)
            mean = lat or clat
            ns = float(mean.group(2)) * NS[mean.group(1)] if mean else None
            found.append((start.group(1), iops.strip(), bw.strip(), ns))
    return found


def _close(parsed: float, printed: str, value: float, tolerance: float) -> bool:
    if abs(parsed - value) <= tolerance * value or abs(parsed - value) < 1:
        return True
    return fio_num2str(int(parsed)) == printed  # fio's own (carry-dropping) display


def _dropped_carry(printed: str, parsed: float, value: float) -> bool:
    """fio 3.12 printed e.g. "21.0MiB/s" for 21.96 MiB/s: it lost the carry of the rounded
    fraction. Then the parsed figure lies within one unit above the printed one."""
    match = re.match(r"(\d+)\.0([kKMG]i?B)", printed)
    if not match:
        return False
    unit = value / int(match.group(1))
    return 0.95 * unit <= parsed - value < unit


def _bw_value(text: str, old: bool) -> float:
    match = re.match(r"([\d.]+)([kKMG]?)(i?)B", text)
    assert match, text
    number, power, binary = match.groups()
    base = 1024 if binary or old else 1000
    return float(number) * base ** {"": 0, "K": 1, "M": 2, "G": 3}[power.upper()]


@pytest.mark.parametrize("path", [p for p in FILES if p.suffix == ".txt"], ids=lambda p: p.name)
def test_text_outputs_give_fios_printed_figures(path: Path) -> None:
    text = path.read_text()
    printed = _printed_text(text)
    jobs: list[Measurement] = [j for d in parse_fio_text(text, path.name) for j in d.jobs]
    parsed = [(ddir, j.direction(ddir)) for j in jobs for ddir in ("read", "write", "trim")
              if not j.direction(ddir).empty]  # fmt: skip
    assert len(parsed) == len(printed)
    old = "fio-2." in text
    for (ddir, stats), (p_ddir, iops, bw, lat) in zip(parsed, printed, strict=True):
        assert ddir == p_ddir
        match = re.match(r"([\d.]+)([kM]?)$", iops)
        assert match, iops
        value = float(match.group(1)) * POWER[match.group(2)]
        assert _close(stats.iops, iops, value, 0.005), (path.name, ddir, iops, stats.iops)
        bw_value = _bw_value(bw, old)
        within = abs(stats.bw_bytes - bw_value) <= max(0.005 * bw_value, 1024)  # 2.x: whole KiB
        assert within or _dropped_carry(bw, stats.bw_bytes, bw_value), (path.name, bw)
        if lat is not None and stats.lat_mean_ns is not None:
            assert stats.lat_mean_ns == pytest.approx(lat, rel=0.01), (path.name, ddir)


def _json_documents(text: str) -> list[dict[str, object]]:
    decoder, docs, pos = json.JSONDecoder(), [], 0
    while (start := text.find("{", pos)) >= 0:
        doc, pos = decoder.raw_decode(text, start)
        docs.append(doc)
    return docs


@pytest.mark.parametrize("path", [p for p in FILES if p.suffix == ".json"], ids=lambda p: p.name)
def test_json_outputs_give_fios_printed_figures(path: Path) -> None:
    text = path.read_text()
    raw_jobs = [j for d in _json_documents(text) for j in d["jobs"]]  # type: ignore[attr-defined]
    jobs = [j for d in parse_fio_json(text) for j in d.jobs]
    assert len(jobs) == len(raw_jobs)
    for job, raw in zip(jobs, raw_jobs, strict=True):
        for ddir in ("read", "write", "trim"):
            stats, printed = job.direction(ddir), raw[ddir]
            if stats.empty:
                assert printed["total_ios"] == 0
                continue
            assert stats.iops == pytest.approx(printed["iops"], rel=0.005)
            assert stats.bw_bytes == pytest.approx(printed["bw"] * 1024, rel=0.005)
            assert stats.lat_mean_ns == pytest.approx(printed["lat_ns"]["mean"], rel=0.01)
