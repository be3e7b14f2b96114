"""DiskSpd's text results (real outputs, tests/data/diskspd, provenance in MANIFEST.md) import
with DiskSpd's printed totals: I/O per s and MiB/s within 0.5 %, mean latency within 1 %,
per direction and in total, and the source tool recorded."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arraybench.importer import import_paths
from arraybench.store.db import Store

FOLDER = Path(__file__).resolve().parent.parent / "data" / "diskspd"
FILES = sorted(FOLDER.glob("*.txt"))
TOTAL = re.compile(
    r"^total:\s+(\d+) \|\s+(\d+) \|\s+([\d.]+) \|\s+([\d.]+) \|\s+([\d.]+) \|", re.MULTILINE
)


def _printed(text: str) -> dict[str, tuple[int, float, float, float]]:
    """scope -> (I/Os, MiB/s, I/O per s, AvgLat ms) from the 'total:' rows DiskSpd printed
    under Total IO, Read IO and Write IO, in that order."""
    rows = TOTAL.findall(text)
    assert len(rows) == 3
    return {scope: (int(r[1]), float(r[2]), float(r[3]), float(r[4]))
            for scope, r in zip(("total", "read", "write"), rows, strict=True)}  # fmt: skip


def test_there_are_real_diskspd_outputs() -> None:
    manifest = (FOLDER.parent / "MANIFEST.md").read_text()
    assert len(FILES) >= 3
    for path in FILES:
        assert f"| diskspd/{path.name} |" in manifest


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_diskspd_totals_import_as_printed(tmp_path: Path, path: Path) -> None:
    store = Store(tmp_path / "results")
    result = import_paths(store, [path], run_name="diskspd")
    assert not result.skipped
    (point,) = store.points(result.run_id)
    assert point.ioengine == "diskspd"
    (finding,) = store.findings(result.run_id, "import")
    assert finding.data["tool"] == "diskspd"
    for scope, (ios, mibs, iops, lat_ms) in _printed(path.read_text()).items():
        if not ios:
            assert not point.metric(scope, "ios")
            continue
        assert point.metric(scope, "ios") == ios
        assert point.metric(scope, "iops") == pytest.approx(iops, rel=0.005)
        mbps = point.metric(scope, "mbps")
        assert mbps is not None and mbps * 1e6 / 2**20 == pytest.approx(mibs, rel=0.005, abs=0.01)
        assert point.metric(scope, "lat_mean_us") == pytest.approx(lat_ms * 1000, rel=0.01)
