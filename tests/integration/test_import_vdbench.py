"""vdbench's flatfile.html (real outputs, tests/data/vdbench, provenance in MANIFEST.md)
imports with vdbench's own averages: I/O rate and MB/sec within 0.5 %, response time within
1 %, and the source tool recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from arraybench.importer import import_paths
from arraybench.store.db import Store

FOLDER = Path(__file__).resolve().parent.parent / "data" / "vdbench"
FILES = sorted(FOLDER.glob("*.html"))


def _average_with_io(text: str) -> dict[str, float]:
    """vdbench's avg_F-L row of the run that did I/O, by lower-case column name."""
    lines = [ln.split() for ln in text.splitlines() if ln.strip() and ln[0] not in "*<"]
    header = [name.lower() for name in lines[0]]
    found = []
    for fields in lines[1:]:
        row = dict(zip(header, fields, strict=True))
        if row["interval"].startswith("avg_") and float(row["rate"]) > 0:
            found.append({k: float(v) for k, v in row.items() if v.replace(".", "").isdigit()})
    (average,) = found
    return average


def test_there_are_real_vdbench_outputs() -> None:
    manifest = (FOLDER.parent / "MANIFEST.md").read_text()
    assert len(FILES) >= 3
    for path in FILES:
        assert f"| vdbench/{path.name} |" in manifest


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_vdbench_averages_import_as_printed(tmp_path: Path, path: Path) -> None:
    store = Store(tmp_path / "results")
    result = import_paths(store, [path], run_name="vdbench")
    (point,) = store.points(result.run_id)
    assert point.ioengine == "vdbench"
    (finding,) = store.findings(result.run_id, "import")
    assert finding.data["tool"] == "vdbench"
    printed = _average_with_io(path.read_text())
    assert point.metric("total", "iops") == pytest.approx(printed["rate"], rel=0.005)
    mbps = point.metric("total", "mbps")
    assert mbps is not None and mbps * 1e6 / 2**20 == pytest.approx(printed["mb/sec"], rel=0.005)
    assert point.metric("total", "lat_mean_us") == pytest.approx(printed["resp"] * 1000, rel=0.01)
    for scope in ("read", "write"):
        if point.metric(scope, "ios"):
            lat = point.metric(scope, "lat_mean_us")
            assert lat == pytest.approx(printed[f"{scope}_resp"] * 1000, rel=0.01)
