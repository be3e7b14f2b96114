"""Any fio, named: `--fio PATH` / $ARRAYBENCH_FIO, recorded with the run, the same release on
every host (`plan check` refuses another one in one line naming both), and what a newer fio
gives (directory figures >= 3.37, sprandom >= 3.41, steady state on latency >= 3.42), said per
feature where the fio found lacks it. The current fio is ../shared/tools/fio-3.42/fio
(tests/conftest.py `FIO_342`); the system's fio here is Debian 12's 3.33."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from arraybench.engines.fio.features import (
    DIR_OPS,
    SPRANDOM,
    STEADY_LAT,
    has,
    protocol_of,
    release,
    releases_of_protocol,
)
from tests.conftest import FIO_342, FIO_ENV, main_cli, needs_fio, needs_fio_342
from tests.netns import TestHosts, needs_netns, running_hosts
from tests.records import stored_findings


def _version(binary: str) -> str:
    return subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()


SYSTEM = _version(shutil.which("fio") or "") if shutil.which("fio") else ""
needs_old_fio = pytest.mark.skipif(
    not SYSTEM or has(SYSTEM, DIR_OPS), reason=f"the system's fio ({SYSTEM or 'none'}) is not "
    "older than 3.37: nothing is missing to say"
)  # fmt: skip


# --------------------------------------------------------------------------- the table


def test_releases_features_and_protocols() -> None:
    assert release("fio-3.42") == (3, 42) and release("fio-3.42-12-gabcdef") == (3, 42)
    assert release("fio version unknown") is None
    assert has("fio-3.37", DIR_OPS) and not has("fio-3.36", DIR_OPS)
    assert has("fio-3.41", SPRANDOM) and not has("fio-3.40", SPRANDOM)
    assert has("fio-3.42", STEADY_LAT) and not has("fio-3.41", STEADY_LAT)
    assert not has("unknown", DIR_OPS)
    # fio's client/server protocol (server.h FIO_SERVER_VER): several releases can share one
    assert releases_of_protocol(97) == "fio-3.31 to fio-3.33"
    assert releases_of_protocol(120) == "fio-3.42"
    assert releases_of_protocol(107) == "fio-3.38 to fio-3.39"
    assert releases_of_protocol(999) == "a fio of server protocol 999"


def test_a_fio_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    done = main_cli("plan", "check", "quick", "--fio", str(tmp_path / "fio"),
                    "--results", str(tmp_path))  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "names no executable file" in done.stderr


# --------------------------------------------------------------------------- plan check


def _plan(tmp_path: Path, extra: str, workload_extra: str = "") -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(
        "name: newer\n"
        f"targets: [{{path: {tmp_path / 't.dat'}, size: 8m}}]\n"
        "timing: {ramp: 0s, duration: 2s}\n"
        "load: {workers: [1], iodepth: [1]}\n"
        f"workloads:\n  - {{name: r, pattern: random, bs: 4k, read: 100{workload_extra}}}\n"
        f"{extra}"
    )
    return path


SPRANDOM_PLAN = "precondition: {pattern: sprandom, bs: 64k}\n"
STEADY_LAT_PLAN = ", timing: {ramp: 0s, duration: 3s, steady: {metric: lat, limit: 90, window: 2s}}"
DIRS_PLAN = "metadata: {threads: [1], files_per_thread: 40, ops: [dir-create, dir-stat, " \
    "dir-delete, create, stat, delete]}\n"  # fmt: skip


@needs_old_fio
def test_plan_check_on_an_older_fio_says_which_figures_need_which_fio(tmp_path: Path) -> None:
    done = main_cli("plan", "check", "cscs", "--scale", "0.01", "--results", str(tmp_path))
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())  # the lines as wrapped at 100 columns, joined
    assert (f"missing: metadata.ops dir-create, dir-stat, dir-delete: directory "
            f"create/stat/remove (dircreate, dirstat, dirdelete) needs fio >= 3.37; found "
            f"{SYSTEM}: these figures are left out") in said  # fmt: skip
    # the run times what this fio can: the outline says so
    assert "metadata test: create, stat, delete of 50 files per thread" in said
    for extra, workload, needs in ((SPRANDOM_PLAN, "", "3.41"), ("", STEADY_LAT_PLAN, "3.42")):
        done = main_cli("plan", "check", str(_plan(tmp_path, extra, workload)),
                        "--results", str(tmp_path))  # fmt: skip
        assert done.returncode == 2 and done.stdout == "", done.stdout
        assert done.stderr.count("\n") == 1
        assert f"needs fio >= {needs}; found {SYSTEM}" in done.stderr
        assert "--fio PATH" in done.stderr
        # `run` without `plan check` refuses the same, before a target is written
        ran = main_cli("run", str(_plan(tmp_path, extra, workload)),
                       "--results", str(tmp_path / "res"))  # fmt: skip
        assert ran.returncode == 2 and ran.stderr == done.stderr
        assert not (tmp_path / "t.dat").exists()


@needs_old_fio
def test_a_run_on_an_older_fio_leaves_the_directory_figures_out_and_says_so(
    tmp_path: Path,
) -> None:
    results = tmp_path / "res"
    done = main_cli("run", str(_plan(tmp_path, DIRS_PLAN)), "--set", "timing.duration=1s",
                    "--results", str(results))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (f"warning: metadata test: dir-create, dir-stat, dir-delete left out: {SYSTEM} has "
            "no directory engines (these figures need fio >= 3.37)") in done.stderr  # fmt: skip
    [metadata] = stored_findings(results, "metadata")
    assert [r["op"] for r in metadata["rows"]] == ["create", "stat", "delete"]
    assert "Directory" not in done.stdout and "File creation" in done.stdout


@needs_fio_342
def test_plan_check_on_fio_342_finds_every_feature(tmp_path: Path) -> None:
    plan = _plan(tmp_path, SPRANDOM_PLAN + DIRS_PLAN, STEADY_LAT_PLAN)
    done = main_cli("plan", "check", str(plan), "--fio", str(FIO_342), "--results", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert f"fio: {FIO_342} (fio-3.42)" in done.stdout
    said = " ".join(done.stdout.split())  # the lines as wrapped at 100 columns, joined
    for asked in ("metadata.ops dir-create, dir-stat, dir-delete", "precondition.pattern: "
                  "sprandom", "timing.steady.metric: lat (r)"):  # fmt: skip
        assert f"ok {asked}:" in said
    assert said.count("; found fio-3.42") == 3 and "missing:" not in said
    assert "metadata test: dir-create, dir-stat, dir-delete, create, stat, delete of" in said
    assert "steadystate=lat:90%" in done.stdout and "sprandom" in done.stdout


# --------------------------------------------------------------------------- runs on 3.42


@needs_fio_342
def test_fio_342_gives_directory_figures_sprandom_and_steady_latency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One run on fio 3.42: sprandom preconditioning, a point steady on latency, and the
    metadata test with its directory phases; the binary is recorded with the run."""
    monkeypatch.setenv(FIO_ENV, str(FIO_342))  # --fio sets it for this process: undone here
    results = tmp_path / "res"
    plan = _plan(tmp_path, SPRANDOM_PLAN + DIRS_PLAN, STEADY_LAT_PLAN)
    done = main_cli("run", str(plan), "--fio", str(FIO_342), "--results", str(results))
    assert done.returncode == 0, done.stderr
    assert "left out" not in done.stdout + done.stderr
    for operation in ("Directory creation", "Directory stat", "Directory removal"):
        assert operation in done.stdout
    [metadata] = stored_findings(results, "metadata")
    rows = {r["op"]: r for r in metadata["rows"]}
    assert list(rows) == ["dir-create", "dir-stat", "dir-delete", "create", "stat", "delete"]
    assert all(r["files"] == 40 and r["ops_per_s"] > 0 for r in rows.values())
    [run] = list((results / "runs").iterdir())
    assert "sprandom=1" in (run / "precondition" / "point.fio").read_text()
    [point] = [p for p in (run / "points").iterdir() if p.name.endswith("r-w1-qd1")]
    assert "steadystate=lat:90%" in (point / "point.fio").read_text()
    [provenance] = stored_findings(results, "provenance")
    assert provenance["engine"] == {"name": "fio", "version": "fio-3.42", "binary": str(FIO_342)}
    shown = json.loads(main_cli("show", "latest", "--results", str(results),
                                "--format", "json").stdout)  # fmt: skip
    assert shown["run"]["engine_version"] == "fio-3.42"


# --------------------------------------------------------------------------- many hosts


@pytest.fixture(scope="module")
def hosts_342(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestHosts]:
    """Two namespace hosts whose fio servers are fio 3.42."""
    if not FIO_342.exists():
        pytest.skip(f"{FIO_342} is absent")
    folder = tmp_path_factory.mktemp("hosts-342")
    with running_hosts(2, folder, port=8877, binary=str(FIO_342)) as test_hosts:
        yield test_hosts


def _hosts_plan(tmp_path: Path, hosts: TestHosts) -> Path:
    declared = "".join(
        f"  - {{name: {h.name}, address: {h.address}, port: {h.port}, "
        f"targets: [{{path: t-{h.name}.dat, size: 8m}}]}}\n"
        for h in hosts.hosts
    )
    path = tmp_path / "hosts.yaml"
    path.write_text(
        f"name: hosts342\nhosts:\n{declared}"
        "timing: {ramp: 0s, duration: 2s}\n"
        "start_lead: 1s\n"  # as the other namespace-host tests (3 s by default)
        "load: {workers: [1], iodepth: [1]}\n"
        "workloads:\n  - {name: rr, pattern: random, bs: 4k, read: 100, ioengine: psync}\n"
    )
    return path


def _on_namespace_hosts(test: Callable[..., None]) -> Callable[..., None]:
    for mark in needs_netns:  # the namespace hosts' own skip reasons
        test = mark(test)
    return test


@needs_fio
@needs_fio_342
@pytest.mark.skipif(release(SYSTEM) == (3, 42), reason="the system's fio is 3.42: no mismatch")
@pytest.mark.slow
@_on_namespace_hosts
def test_many_hosts_on_fio_342_and_a_mismatch_refused_at_plan_check(
    tmp_path: Path, hosts_342: TestHosts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(FIO_ENV, raising=False)
    plan = _hosts_plan(tmp_path, hosts_342)
    # the system's fio against fio 3.42 servers: fio's client would refuse them at the first
    # point, so plan check refuses, before anything runs, naming both releases
    done = main_cli("plan", "check", str(plan), "--results", str(tmp_path))
    assert done.returncode == 1 and done.stdout == "", done.stdout
    assert done.stderr.count("\n") == 1, done.stderr
    assert "fio-3.42 (protocol 120) on the host" in done.stderr
    assert f"{SYSTEM} ({protocol_of(SYSTEM)}) on the controller" in done.stderr
    # the same fio on the controller: each host's release listed, then the run on 3.42
    done = main_cli("plan", "check", str(plan), "--fio", str(FIO_342), "--results", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "host h0: fio-3.42" in done.stdout and "host h1: fio-3.42" in done.stdout
    checked = main_cli("hosts", "check", str(plan), "--fio", str(FIO_342))
    assert checked.stdout.count("fio-3.42") == 2 and "mismatch" not in checked.stdout
    monkeypatch.setenv(FIO_ENV, str(FIO_342))
    results = tmp_path / "res"
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stderr
    shown = json.loads(main_cli("show", "latest", "--results", str(results),
                                "--format", "json").stdout)  # fmt: skip
    [point] = shown["points"]
    assert point["hosts"] == 2 and not point["partial"] and point["total_iops"] > 0
    assert shown["run"]["engine_version"] == "fio-3.42"
