"""plan check tells the whole truth: every phase the run executes, a duration range the run
keeps, and the same target verdict as `run`."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from arraybench.cli import main
from arraybench.plan import catalog
from tests.conftest import main_cli, run_cli
from tests.loopdev import attached, sparse_file

ROOT = Path(__file__).resolve().parents[2]
SPAN = re.compile(r"the run executes \d+ phases, about (\S+) \((\S+) to ([^)]+)\):")

# the phases (and words) each template's run has beyond its points
EXPECTED = {
    "quick": ["points", "report"],
    "inout": ["points", "report"],
    "aerodisk": ["points", "report"],
    "cscs": [
        "points",
        "metadata",
        # the directory operations too where mdtest or fio >= 3.37 runs them
        "create, stat, delete of",
    ],
    "dbi-db": ["points", "interference", "5 background steps"],
    "hus-fmd": ["points", "bytes written / GC throughput", "analysis cliff"],
    "snia-pts": ["purge", "precondition", "rounds", "5 to 25 rounds", "points"],
}


def _seconds(text: str) -> float:
    """`2m52s`, `1h05m`, `45s` -> seconds; `no known limit` -> infinity."""
    if text == "no known limit":
        return float("inf")
    parts = re.findall(r"(\d+)([hms])", text)
    return float(sum(int(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in parts))


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["plan", "check", *args]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", catalog.template_names())
def test_plan_check_lists_every_phase(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _check(capsys, name, "--results", str(tmp_path))
    head = out.split("\npoints:")[0]
    flat = " ".join(head.split())  # a phase's text wraps where the results path is long
    for word in EXPECTED[name]:
        assert word in flat, (name, word, head)
    assert "lay out 1 target file(s): 1 GiB" in flat  # the scratch file, written first
    typical, low, high = SPAN.search(head).groups()  # type: ignore[union-attr]
    assert _seconds(low) <= _seconds(typical) <= _seconds(high)
    assert max(len(line) for line in head.splitlines()) <= 100


def test_rounds_and_acceptance_are_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = " ".join(_check(capsys, "snia-pts", "--results", str(tmp_path)).split())
    assert "until iops-4k-w is steady over 5 rounds" in out
    assert "1 point: 1 workload" in out  # the write saturation test, besides the rounds
    plan = tmp_path / "p.yaml"
    plan.write_text(
        "name: p\nworkloads:\n  - {name: w, pattern: random, bs: 8k, read: 0, "
        "verify: {region: 1m},\n     events: [{at: 1s, duration: 1s, prompt: Pull cable A}]}\n"
        "acceptance: [{workload: w, min_iops: 1000}]\n"
    )
    out = " ".join(_check(capsys, str(plan), "--results", str(tmp_path)).split())
    assert 'event prompt "Pull cable A" at +1s for 1s, every point' in out
    assert "verify: checkable writes in the last 1 MiB" in out
    assert "acceptance: w: min_iops 1000 (w); exit code 3 when it fails" in out
    assert "to no known limit" in out  # an operator's prompt has no upper bound


def test_readme_template_and_plan_check_agree_on_quick(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _check(capsys, "quick", "--results", str(tmp_path))
    said = SPAN.search(out)
    assert said is not None
    text = f"about {said.group(1)} ({said.group(2)} to {said.group(3)})"
    assert text in " ".join((ROOT / "README.md").read_text().split())
    assert text in catalog.load_template("quick").description


@pytest.mark.serial  # wall time inside plan check's range
def test_a_small_run_finishes_inside_the_stated_range(tmp_path: Path) -> None:
    """cscs at --scale 0.01 with one workload: a point, two metadata levels and the report;
    with a relative --results, as the default ./arraybench-results is."""
    args = ["cscs", "--only", "iops-4k-read", "--scale", "0.01", "--results", "r",
            "--set", "metadata.threads=[1,2]"]  # fmt: skip
    checked = main_cli("plan", "check", *args, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    said = SPAN.search(checked.stdout)
    assert said is not None and "metadata" in checked.stdout
    started = time.monotonic()
    # a real process: the range stated is the wall time a user sees, start-up included
    done = run_cli("run", *args, cwd=tmp_path)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert _seconds(said.group(2)) - 1 <= elapsed <= _seconds(said.group(3)) + 1, (
        elapsed,
        said.group(0),
    )


@pytest.mark.root
def test_plan_check_refuses_the_target_run_refuses(tmp_path: Path) -> None:
    """An ext4 loop device: `plan check` says what `run` says, with the same exit code."""
    backing = sparse_file(tmp_path / "disk.img", 64 << 20)
    with attached(backing) as dev:
        made = subprocess.run(["mkfs.ext4", "-q", "-F", dev], capture_output=True, check=False)
        if made.returncode != 0:
            pytest.skip("mkfs.ext4 is not available")
        args = ["quick", "--target", dev, "--results", str(tmp_path / "r")]
        checked = main_cli("plan", "check", *args)
        ran = main_cli("run", *args)
        assert checked.returncode == ran.returncode == 2
        assert "ext4" in checked.stderr and checked.stderr == ran.stderr
        allowed = main_cli("plan", "check", *args, "--allow-destroy", dev)
        assert allowed.returncode == 0 and f"{dev} (block device, 64 MiB)" in allowed.stdout


def test_plan_check_shows_a_many_host_points_job_file_on_its_first_hosts_targets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "name: mh\n"
        "hosts:\n"
        "  - {name: h0, address: 10.0.0.10, targets: [{path: /dev/sdb}]}\n"
        "  - {name: h1, address: 10.0.0.11, targets: [{path: /dev/sdc}]}\n"
        "host_sets: [[h0, h1]]\n"
        "load: {workers: [1], iodepth: [1]}\n"
        "workloads: [{name: rr, pattern: random, bs: 4k, read: 100}]\n"
    )
    out = _check(capsys, str(plan), "--results", str(tmp_path))
    assert "job file of rr/w1-qd1-h2 on h0" in out
    assert "filename=/dev/sdb\n" in out and "filename=\n" not in out  # not an empty target
