"""Jobs of one group that ran for different times (each moves a fixed size, no
group_reporting): an imported point is fio's own group total, its "Run status group" line
(every job's bytes over the longest job's runtime), not the sum of each job's own rate, which
overstated it (three 4 MiB reads at 8, 4 and 2 MiB/s: 7 x the slowest job's rate summed, 3 x
in fio's total). Real fio, its normal text and JSON of one run; fio's group line read here by
the test's own expression, never by the parser under test."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from arraybench.importer import import_paths
from arraybench.store.db import Store
from tests.conftest import needs_fio

JOB = """\
[global]
ioengine=psync
rw=read
bs=4k
size=4m
filename={dir}/f.dat
[a]
rate=8m
[b]
rate=4m
[c]
rate=2m
"""
GROUP_LINE = re.compile(r"^\s+READ: bw=.*?, io=([\d.]+)MiB \(.*?\), run=(\d+)-(\d+)msec$", re.M)


@needs_fio
def test_jobs_of_unequal_runtime_import_as_fios_group_total(tmp_path: Path) -> None:
    job = tmp_path / "j.fio"
    job.write_text(JOB.format(dir=tmp_path))
    out = tmp_path / "both.out"
    done = subprocess.run(["fio", "--output-format=json,normal", f"--output={out}", str(job)],
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    both = out.read_text()
    start = both.index("{")
    end = json.JSONDecoder().raw_decode(both, start)[1]
    (tmp_path / "json").mkdir()
    (tmp_path / "text").mkdir()
    (tmp_path / "json" / "out.json").write_text(both[start:end])
    (tmp_path / "text" / "out.txt").write_text(both[:start] + both[end:])
    (mib, shortest, longest) = GROUP_LINE.search(both).groups()  # type: ignore[union-attr]
    assert int(longest) > 1.5 * int(shortest)  # the jobs did run for different times
    group_mbps = float(mib) * 2**20 / (int(longest) / 1000) / 1e6
    store = Store(tmp_path / "results")
    for kind in ("text", "json"):
        result = import_paths(store, [tmp_path / kind], run_name=kind)
        (point,) = store.points(result.run_id)
        assert point.metric("total", "mbps") == pytest.approx(group_mbps, rel=0.005), kind
        assert point.metric("total", "iops") == pytest.approx(3 * 1024 / (int(longest) / 1000),
                                                              rel=1e-6), kind  # fmt: skip
