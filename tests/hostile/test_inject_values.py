"""Hostile strings on their way into fio job files and command lines: refused, one line, exit 2.

fio reads a job file value only up to a newline, '#' or ';', substitutes '$...' and cuts edge
blanks (see arraybench.engines.fio.values); each such value must be refused before anything runs, at
`plan check` and at `run`, wherever it comes from (--target, the plan, a host's targets).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arraybench import cli
from arraybench.engines.fio.interference import InterferenceSpec, render_interference_jobfile
from arraybench.engines.fio.layout import layout_command
from arraybench.engines.fio.metadata import MetadataSpec, render_metadata_jobfile
from arraybench.engines.fio.values import argv_value, fio_path, fio_value
from arraybench.errors import PlanError
from tests.conftest import small_plan

HOSTILE = {
    "newline": "u\nfilename=/dev/loop0",
    "exec_prerun": "u\nexec_prerun=touch PWNED",
    "carriage return": "u\rx",
    "nul": "u\x00x",
    "tab": "u\tx",
    "hash": "lnk#scratch",
    "semicolon": "a;b",
    "env": "lnk${UNSET}",
    "fio keyword": "a$ncpus",
    "backslash": "a\\",
    "leading blank": " lnk",
    "trailing blank": "lnk ",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_fio_path_refuses_what_fio_would_misread(name: str) -> None:
    value = HOSTILE[name] if "blank" in name else "/tmp/x/" + HOSTILE[name]
    with pytest.raises(PlanError) as caught:
        fio_path(value, "targets[0].path")
    line = caught.value.one_line()
    assert "targets[0].path" in line and "\n" not in line and "\x00" not in line


def test_ordinary_values_pass_and_colons_are_escaped() -> None:
    assert fio_path("/data/my file-1.dat", "t") == "/data/my file-1.dat"
    assert fio_path("/data/a:b", "t") == "/data/a\\:b"
    assert fio_value("libaio", "ioengine") == "libaio"
    assert argv_value("--filename=/a b", "t") == "--filename=/a b"
    with pytest.raises(PlanError):
        argv_value("--filename=/a\x00b", "t")


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err + captured.out
    return lines[0]


@pytest.mark.parametrize("name", ["newline", "exec_prerun", "hash", "semicolon", "env"])
def test_plan_check_refuses_a_hostile_target_option(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = str(tmp_path / HOSTILE[name])
    code = cli.main(["plan", "check", str(small_plan(tmp_path)), "--target", target])
    assert code == 2
    assert "targets[0].path" in _one_error_line(capsys)


def _plan_with(tmp_path: Path, extra: str, targets: bool = True) -> Path:
    path = small_plan(tmp_path, extra=extra)
    if not targets:  # hosts with their own targets only
        text = path.read_text()
        start = text.index("targets:")
        end = text.index("timing:")
        path.write_text(text[:start] + text[end:])
    return path


PLAN_CASES = {
    "host target": (
        'hosts:\n  - {name: h1, address: 127.0.0.1, targets: [{path: "/tmp/x/u\\nexec_prerun='
        'touch PWNED", size: 16m}]}\n',
        "hosts[0].targets[0].path",
        False,
    ),
    "host target hash": (
        'hosts:\n  - {name: h1, address: 127.0.0.1, targets: [{path: "/tmp/lnk#x"}]}\n',
        "hosts[0].targets[0].path",
        False,
    ),
    "metadata directory": (
        'metadata: {directory: "/tmp/md;x", threads: [1]}\n',
        "metadata.directory",
        True,
    ),
    "ioengine": ('ioengine: "psync\\nexec_prerun=touch PWNED"\n', "ioengine", True),
}


@pytest.mark.parametrize("case", sorted(PLAN_CASES))
def test_plan_check_refuses_hostile_plan_values(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra, where, targets = PLAN_CASES[case]
    code = cli.main(["plan", "check", str(_plan_with(tmp_path, extra, targets))])
    assert code == 2
    assert where in _one_error_line(capsys)


def test_run_refuses_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pwned = tmp_path / "PWNED"
    target = f"{tmp_path}/u\nexec_prerun=touch {pwned}"
    results = tmp_path / "results"
    plan = str(small_plan(tmp_path))
    code = cli.main(["run", plan, "--target", target, "--results", str(results)])
    assert code == 2
    assert "targets[0].path" in _one_error_line(capsys)
    assert not pwned.exists()
    assert not (results / "runs").exists() or not any((results / "runs").iterdir())


def test_job_file_writers_refuse_on_their_own() -> None:
    """The writers call the same gate: a value that skipped the plan check cannot escape."""
    with pytest.raises(PlanError, match=r"metadata\.directory"):
        render_metadata_jobfile(MetadataSpec("/tmp/md\nexec_prerun=touch PWNED", 1))
    spec = InterferenceSpec(["/tmp/a;b"], steps=1, interval_s=1)
    with pytest.raises(PlanError, match="interference target"):
        render_interference_jobfile(spec, 1 << 20)
    with pytest.raises(PlanError, match="target path"):
        layout_command(Path("/tmp/lnk${UNSET}"), 1 << 20, "fio")


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_frontend_region_never_grows_the_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """frontend_blocks x bs (4096 x 64 KiB = 256 MiB) larger than a 16 MiB file: fio's region
    is bounded by the file, which keeps its size."""
    target = tmp_path / "front.dat"
    with open(target, "wb") as fh:
        fh.truncate(16 << 20)
    workloads = (
        "  - {name: fe, pattern: random, bs: 64k, read: 0, region: frontend,"
        " frontend_blocks: 4096}\n"
    )
    plan = small_plan(tmp_path, workers="[1]", workloads=workloads)
    plan.write_text(plan.read_text().replace("direct: true", "").replace("size: 32m", ""))
    code = cli.main(["run", str(plan), "--target", str(target), "--results",
                     str(tmp_path / "results")])  # fmt: skip
    capsys.readouterr()
    assert code == 0
    assert target.stat().st_size == 16 << 20
    jobfile = next((tmp_path / "results" / "runs").glob("*/points/*/point.fio"))
    assert "size=16m" in jobfile.read_text().lower() or "size=16777216" in jobfile.read_text()


def test_a_nul_anywhere_in_a_plan_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = small_plan(tmp_path)
    plan.write_text(plan.read_text().replace("purpose: tests", 'purpose: "a\\0b"'))
    assert cli.main(["plan", "check", str(plan)]) == 2
    line = _one_error_line(capsys)  # the plan model or the value gate may say it first
    assert "labels.purpose" in line and ("NUL" in line or "control character" in line)


def test_the_default_metadata_directory_is_checked_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under a results folder fio would misread, the metadata test's default directory is
    refused at the start, not after the grid of points ran."""
    plan = small_plan(tmp_path, extra="metadata: {threads: [1], files_per_thread: 10}\n")
    results = tmp_path / "res#ults"
    code = cli.main(["run", str(plan), "--target", str(tmp_path / "t.dat"),
                     "--results", str(results)])  # fmt: skip
    assert code == 2
    assert "metadata.directory" in _one_error_line(capsys)
    assert not list(results.glob("runs/*/points/*"))


def test_a_plain_link_to_a_name_fio_misreads_is_refused_at_the_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = tmp_path / "data#1.dat"
    real.write_bytes(b"\0" * (1 << 20))
    (tmp_path / "plain").symlink_to(real)
    results = tmp_path / "results"
    code = cli.main(["run", str(small_plan(tmp_path)), "--target", str(tmp_path / "plain"),
                     "--results", str(results)])  # fmt: skip
    assert code == 2
    assert "resolves to" in _one_error_line(capsys)
    assert not list(results.glob("runs/*/points/*"))
