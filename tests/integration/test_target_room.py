"""A target too small for a point's stripes is found before the run, never by fio mid-run:
sequential workers each start one stripe (at least one block) further into the target, and
fio, given a pinned /dev/fd/N, cannot grow a file in the middle of a point (it failed with
`func=unlink, error=Operation not permitted`, exit 11, at cscs's third point at --scale 0.02).
A scratch file arraybench creates is made big enough; a user's target that is too small is
refused by `plan check` and `run` with the size it needs."""

from __future__ import annotations

from pathlib import Path

from arraybench.store.db import Store
from tests.conftest import main_cli, needs_fio


@needs_fio
def test_cscs_at_scale_002_on_its_scratch_file_runs_to_its_end(tmp_path: Path) -> None:
    results = tmp_path / "res"
    done = main_cli("run", "cscs", "--scale", "0.02", "--only", "bw-*", "--results",
                    str(results))  # fmt: skip
    assert done.returncode == 0, done.stderr
    ((run, points),) = Store(results, create=False).list_runs()
    assert run.status == "complete" and points == 8  # 2 bw-1m, 6 metadata levels
    scratch = results / "scratch" / "arraybench-scratch.dat"
    assert scratch.stat().st_size == 32 << 20  # 32 workers x 1 MiB, not the scaled 21 MiB


def test_plan_check_refuses_an_existing_file_too_small_and_says_the_size(tmp_path: Path) -> None:
    small = tmp_path / "small.dat"
    small.write_bytes(bytes(20 << 20))
    for command in ("plan", "run"):
        args = ["check"] if command == "plan" else []
        done = main_cli(command, *args, "cscs", "--scale", "0.02", "--target", str(small),
                        "--results", str(tmp_path / "res"))  # fmt: skip
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        said = (f"target {small}: 20 MiB is too small: workloads[2] (bw-1m-read): 32 "
                "sequential workers x 1 MiB need 32 MiB on each target")  # fmt: skip
        assert said in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "res" / "runs").exists() or not any((tmp_path / "res/runs").iterdir())
