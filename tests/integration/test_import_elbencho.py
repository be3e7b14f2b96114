"""elbencho's CSV result files (real outputs, tests/data/elbencho, provenance in MANIFEST.md)
import with elbencho's own [last] figures: IOPS and MiB/s within 0.5 %, mean I/O latency
within 1 %, hosts and threads as the load level, and the source tool recorded."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from arraybench.importer import import_paths
from arraybench.store.db import Store

FOLDER = Path(__file__).resolve().parent.parent / "data" / "elbencho"
FILES = sorted(FOLDER.glob("*.csv"))


def test_there_are_real_elbencho_outputs() -> None:
    manifest = (FOLDER.parent / "MANIFEST.md").read_text()
    assert len(FILES) >= 3
    for path in FILES:
        assert f"| elbencho/{path.name} |" in manifest


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_elbencho_last_done_figures_import_as_printed(tmp_path: Path, path: Path) -> None:
    with path.open(newline="") as handle:
        (row,) = [r for r in csv.DictReader(handle) if r["operation"] == "WRITE"]
    store = Store(tmp_path / "results")
    result = import_paths(store, [path], run_name="elbencho")
    (point,) = store.points(result.run_id)
    (finding,) = store.findings(result.run_id, "import")
    assert finding.data["tool"] == "elbencho" and point.ioengine == "elbencho"
    assert (point.workers, point.hosts) == (int(row["threads"]), int(row["hosts"]))
    assert point.bs == int(row["block size"])
    assert point.metric("write", "iops") == pytest.approx(float(row["IOPS [last]"]), rel=0.005)
    mbps = point.metric("write", "mbps")
    assert mbps is not None
    assert mbps * 1e6 / 2**20 == pytest.approx(float(row["MiB/s [last]"]), rel=0.005, abs=1)
    expected = float(row["IO lat us [avg]"])
    assert point.metric("write", "lat_mean_us") == pytest.approx(expected, rel=0.01)


def test_a_mixed_import_names_every_tool_on_the_run(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    data = FOLDER.parent
    for path in (FILES[0], next((data / "diskspd").iterdir()), next(data.glob("01_*"))):
        (folder / path.name).write_bytes(path.read_bytes())
    store = Store(tmp_path / "results")
    result = import_paths(store, [folder], run_name="mixed")
    assert store.get_run(result.run_id).labels["tools"] == "diskspd, elbencho, fio"
