"""An archive named like dbi's Dorado results (TestNN-Typerandread-BS8k-DeviceCountNN.txt),
imported with the device count taken from the file names, reports the devices x parallelism
grid: one row per device count, each cell the point's throughput @ mean latency."""

from __future__ import annotations

import html as htmllib
import re
import shutil
from pathlib import Path

from arraybench import cli
from arraybench.store.db import Store
from arraybench.units import format_latency, format_throughput

DATA = Path(__file__).resolve().parent.parent / "data"
PATTERN = r"(?P<label_test>Test\d+)-Type(?P<rw>\w+?)-BS(?P<bs>\d+k)-DeviceCount(?P<devices>\d+)"


def _archive(tmp_path: Path) -> Path:
    folder = tmp_path / "archive"
    folder.mkdir()
    for prefix in ("28_", "29_"):
        for path in DATA.glob(f"{prefix}*"):
            shutil.copy(path, folder / path.name)
    # sample 01 under its name in the archive (MANIFEST.md)
    shutil.copy(next(DATA.glob("01_*")), folder / "Test01-Typerandread-BS8k-DeviceCount01.txt")
    return folder


def test_imported_device_counts_make_the_grid_in_the_report(tmp_path: Path, capsys) -> None:
    results = tmp_path / "res"
    argv = ["import", str(_archive(tmp_path)), "--name", "dorado", "--pattern", PATTERN]
    assert cli.main([*argv, "--results", str(results)]) == 0
    capsys.readouterr()
    store = Store(results)
    ((run, _),) = store.list_runs()
    points = store.points(run.id)
    assert {p.devices for p in points} == {1, 2, 3}
    out = tmp_path / "dorado.html"
    assert cli.main(["report", run.id, "--results", str(results), "-o", str(out)]) == 0
    text = htmllib.unescape(re.sub(r"<[^>]+>", " ", out.read_text()))
    assert "randread-8k: devices x" in text
    # every point's cell is in the grid as the one formatter writes it
    for p in points:
        cell = f"{format_throughput(p.throughput(), p.unit)} @ "
        cell += format_latency(p.metric("total", "lat_mean_us"))
        assert cell in text, (p.key, cell)
