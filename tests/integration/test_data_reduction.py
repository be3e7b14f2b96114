"""`data:` ratios through real fio: what arraybench reports it reached is what the target holds.

A run writes a 32 MiB file target with one sequential writing workload (at 280 MB/s here it
wraps the file many times in its 1 second); the ratios `show --format json` carries for it
(measured on a sample fio wrote before the run) are compared with the requested ones (10 %)
and with an independent measurement of the target file (compression 5 %; dedupe, a random
draw in each, within five binomial spreads of the pair: dedupe_tolerance): each 8 KiB
granule compressed with zlib at its default level, distinct granules counted by SHA-256 (not
the code under test's BLAKE2b and level 1).
"""

from __future__ import annotations

import hashlib
import json
import math
import zlib
from pathlib import Path

import pytest

from arraybench.engines.fio.datasample import SAMPLE_BYTES, sample_data
from arraybench.plan.workload import DataPattern
from tests.conftest import main_cli, needs_fio
from tests.loopdev import attached, sparse_file

FIO_342 = Path("/work/shared/tools/fio-3.42/fio")
GRANULE = 8192
CASES = [(c, d) for c in (1.0, 2.0, 4.0) for d in (1.0, 2.0)]


def independent_ratios(path: Path, limit: int | None = None) -> tuple[float, float]:
    """(compression, dedupe) of a file or device as an array would reduce it, written apart
    from arraybench's own: per aligned 8 KiB granule, zlib's default level, SHA-256;
    `limit`: its first bytes only (what a sequential writer reached)."""
    with path.open("rb") as f:
        blob = f.read(limit if limit is not None else -1)
    granules = [blob[i : i + GRANULE] for i in range(0, len(blob) - GRANULE + 1, GRANULE)]
    unique = {hashlib.sha256(g).digest(): g for g in granules}
    stored = sum(min(GRANULE, len(zlib.compress(g))) for g in unique.values())
    return len(unique) * GRANULE / stored, len(granules) / len(unique)


def dedupe_tolerance(dedupe: float, granules: int) -> float:
    """The relative bound between two independent measurements of fio's dedupe: the sample
    (SAMPLE_BYTES) and `granules` on the target. fio repeats each buffer with probability
    p = 1 - 1/dedupe, so the distinct share is binomial, relative spread sqrt(p / (1-p) / N)
    per measurement (at 2:1 over 4096 granules 1.6 %; 8 samples here spread 1.1-2.1 %): five
    of the pair's combined spreads, never under 5 %."""
    p = 1 - 1 / dedupe
    spread = math.sqrt(p / (1 - p) * (1 / (SAMPLE_BYTES // GRANULE) + 1 / max(granules, 1)))
    return max(0.05, 5 * spread)


def data_plan(tmp_path: Path, data: str, bs: str = "8k", target: str = "") -> Path:
    path = tmp_path / "plan.yaml"
    target = target or f"{{path: {tmp_path / 'target.dat'}, size: 32m}}"
    path.write_text(
        "name: data\n"
        f"targets:\n  - {target}\n"
        "timing: {ramp: 0s, duration: 1s}\n"
        "load: {workers: [1], iodepth: [4]}\n"
        f"data: {data}\n"
        f"workloads:\n  - {{name: fill, pattern: sequential, bs: {bs}, read: 0}}\n"
    )
    return path


@needs_fio
@pytest.mark.slow
@pytest.mark.parametrize(("compression", "dedupe"), CASES)
def test_reported_ratios_are_the_targets(tmp_path: Path, compression: float, dedupe: float):
    results = tmp_path / "results"
    plan = data_plan(tmp_path, f"{{compression: {compression}, dedupe: {dedupe}, granule: 8k}}")
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stderr
    assert "data of fill: requested" in done.stdout + done.stderr
    shown = json.loads(main_cli("show", "latest", "--results", str(results),
                                "--format", "json").stdout)  # fmt: skip
    [point] = shown["points"]
    data = point["data"]
    assert data["requested"] == {"compression": compression, "dedupe": dedupe,
                                 "granule_bytes": GRANULE}  # fmt: skip
    achieved = data["achieved"]
    assert achieved["granule_bytes"] == GRANULE
    assert achieved["compression"] == pytest.approx(compression, rel=0.10)
    assert achieved["dedupe"] == pytest.approx(dedupe, rel=0.10)
    assert not [f for f in point["flags"] if f["kind"].startswith("data-")]
    # a time-based point on a slow (loaded) machine may not reach the file's end: the rest is
    # the layout's random data, measured apart from what the workload wrote
    written = min(point["write_bytes"], (tmp_path / "target.dat").stat().st_size)
    on_target = independent_ratios(tmp_path / "target.dat", written - written % GRANULE)
    assert achieved["compression"] == pytest.approx(on_target[0], rel=0.05)
    assert on_target[1] == pytest.approx(dedupe, rel=0.10)
    tolerance = dedupe_tolerance(dedupe, written // GRANULE)
    assert achieved["dedupe"] == pytest.approx(on_target[1], rel=tolerance)


@needs_fio
@pytest.mark.slow
@pytest.mark.parametrize(("compression", "dedupe"), [(2.0, 2.0), (4.0, 1.0)])
def test_reported_ratios_are_a_loop_devices(tmp_path: Path, compression: float, dedupe: float):
    """The same on a block device: 32 MiB of loop device over a sparse file, read back."""
    with attached(sparse_file(tmp_path / "backing.img", 32 << 20)) as dev:
        plan = data_plan(tmp_path, f"{{compression: {compression}, dedupe: {dedupe}}}",
                         target=f"{{path: {dev}}}")  # fmt: skip
        results = tmp_path / "results"
        done = main_cli("run", str(plan), "--results", str(results), "--allow-destroy", dev)
        assert done.returncode == 0, done.stderr
        shown = json.loads(main_cli("show", "latest", "--results", str(results),
                                    "--format", "json").stdout)  # fmt: skip
        achieved = shown["points"][0]["data"]["achieved"]
        on_device = independent_ratios(Path(dev))
    assert achieved["compression"] == pytest.approx(compression, rel=0.10)
    assert achieved["dedupe"] == pytest.approx(dedupe, rel=0.10)
    assert achieved["compression"] == pytest.approx(on_device[0], rel=0.05)
    assert on_device[1] == pytest.approx(dedupe, rel=0.10)
    tolerance = dedupe_tolerance(dedupe, (32 << 20) // GRANULE)
    assert achieved["dedupe"] == pytest.approx(on_device[1], rel=tolerance)


@needs_fio
@pytest.mark.skipif(not FIO_342.exists(), reason="no fio 3.42 in ../shared/tools")
@pytest.mark.parametrize(("compression", "dedupe"), CASES)
def test_fio_342_reaches_the_same_ratios(tmp_path: Path, compression: float, dedupe: float):
    """The options chosen for fio 3.33 reach the ratios on the current fio too."""
    sample = sample_data(str(FIO_342), DataPattern(compression=compression, dedupe=dedupe),
                         GRANULE, tmp_path)  # fmt: skip
    assert sample.error is None and sample.achieved is not None
    assert sample.achieved.compression == pytest.approx(compression, rel=0.10)
    assert sample.achieved.dedupe == pytest.approx(dedupe, rel=0.10)
    assert sample.misses == []


@needs_fio
def test_plan_check_data_prints_requested_and_achieved(tmp_path: Path):
    plan = data_plan(tmp_path, "vdi")
    done = main_cli("plan", "check", str(plan), "--data", "--results", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    [line] = [x for x in done.stdout.splitlines() if x.startswith("data of fill")]
    assert "requested compression 2.00:1, dedupe 3.00:1 at 8 KiB; achieved" in line
    assert "MISSED" not in line
    assert "dedupe_percentage=67" in done.stdout  # the job file: 1 / (1 - 0.67) = 3.0
    assert not any((tmp_path / "r" / "scratch").iterdir())  # the sample is removed


@pytest.mark.parametrize(
    ("data", "bs", "said"),
    [
        ("{dedupe: 2.0}", "4k", "data (workload 'fill'): dedupe 2:1 at 8 KiB granules needs a "
         "block size that is a multiple of the granule, not 4 KiB"),
        ("{compression: 100}", "8k", "data (workload 'fill'): compression 100:1 at 8 KiB "
         "granules: fio's nearest is"),
        ("{dedupe: 2, granule: 16k}", "8k", "data (workload 'fill'): dedupe 2:1 at 16 KiB"),
        ("{granule: 256}", "8k", "data.granule: 256 is out of range: use 512 to 1m"),
    ],
)  # fmt: skip
def test_plan_check_refuses_a_ratio_fio_cannot_reach(tmp_path: Path, data: str, bs: str,
                                                     said: str):  # fmt: skip
    done = main_cli("plan", "check", str(data_plan(tmp_path, data, bs)), "--results",
                    str(tmp_path / "r"))  # fmt: skip
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: ") and said in line
    assert "Traceback" not in done.stderr


def test_percentages_of_earlier_versions_are_read_as_ratios(tmp_path: Path):
    done = main_cli("plan", "check", str(data_plan(tmp_path, "{compressibility: 50, dedupe: 50}")),
                    "--results", str(tmp_path / "r"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "buffer_compress_percentage=51" in done.stdout  # 2:1 measured with zlib
    assert "dedupe_percentage=50" in done.stdout
    bad = main_cli("plan", "check", str(data_plan(tmp_path, "{compressibility: 100}")),
                   "--results", str(tmp_path / "r"))  # fmt: skip
    assert bad.returncode == 2
    [line] = bad.stderr.strip().splitlines()
    assert "data" in line and "write ratios now: {compression: 2.0, dedupe: 1.5}" in line


def test_presets_and_zeros(tmp_path: Path):
    zeros = main_cli("plan", "check", str(data_plan(tmp_path, "zeros")), "--results",
                     str(tmp_path / "r"))  # fmt: skip
    assert zeros.returncode == 0, zeros.stderr
    assert "zero_buffers=1" in zeros.stdout and "refill_buffers" not in zeros.stdout
    unknown = main_cli("plan", "check", str(data_plan(tmp_path, "random")), "--results",
                       str(tmp_path / "r"))  # fmt: skip
    assert unknown.returncode == 2
    assert "unknown preset 'random'" in unknown.stderr
    assert DataPattern.model_validate("db").compression == 2.0


def test_a_huge_block_is_sampled_in_blocks_of_at_most_1_mib():
    from arraybench.engines.fio.datasample import sample_block

    assert sample_block(DataPattern(dedupe=2.0), 1 << 30) == 1 << 20
    assert sample_block(DataPattern(compression=2.0, granule=8192), 3 << 19) == 1 << 20
    assert sample_block(DataPattern(compression=2.0), 8192) == 8192


@needs_fio
@pytest.mark.slow
def test_read_back_measures_what_the_workload_left_on_the_target(tmp_path: Path):
    """`read_back` as large as the target reads all of it after the workload's last point:
    the ratios stored are the file's (random overwrites leave less dedupe than the stream's,
    so the test writes with random 8 KiB writes, where the two differ)."""
    plan = data_plan(tmp_path, "{compression: 2.0, dedupe: 2.0, read_back: 32m}")
    plan.write_text(plan.read_text().replace("pattern: sequential", "pattern: random"))
    results = tmp_path / "results"
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stderr
    assert f"data of fill read back from {tmp_path / 'target.dat'}: compression" in done.stdout
    shown = json.loads(main_cli("show", "latest", "--results", str(results),
                                "--format", "json").stdout)  # fmt: skip
    back = shown["points"][0]["data"]["on_target"][str(tmp_path / "target.dat")]
    assert back["whole"] and back["bytes_read"] == 32 << 20 and back["granule_bytes"] == GRANULE
    compression, dedupe = independent_ratios(tmp_path / "target.dat")
    assert back["compression"] == pytest.approx(compression, rel=0.01)
    assert back["dedupe"] == pytest.approx(dedupe, rel=0.01)


def test_read_back_regions_are_whole_granules_inside_the_target():
    from arraybench.engines.fio.datasample import read_back_regions

    assert read_back_regions(32 << 20, 64 << 20, 8192, 1) == [(0, 32 << 20)]
    regions = read_back_regions(1 << 30, 8 << 20, 8192, 7)
    assert len(regions) == 8 and all(length == 1 << 20 for _, length in regions)
    assert all(offset % 8192 == 0 and offset + (1 << 20) <= 1 << 30 for offset, _ in regions)
    assert len({offset for offset, _ in regions}) == 8
    assert regions == read_back_regions(1 << 30, 8 << 20, 8192, 7)  # seeded
