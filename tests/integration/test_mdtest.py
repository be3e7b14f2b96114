"""mdtest as the metadata test's engine (docs/engines.md, "mdtest"): its command line through
one gate, its SUMMARY rate lines stored as printed (a run at 1, 2 and 4 tasks, an import of a
real output), and what plan check refuses. The figures are compared with the test's own
reading of mdtest's lines, not with the parser under test."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from arraybench.analysis.metadata import OP_LABELS
from arraybench.engines.base import RunSpec
from arraybench.engines.mdtest.argv import (
    MdtestSpec,
    command,
    mdtest_arg,
    mdtest_args,
    ssh_config,
)
from arraybench.engines.mdtest.engine import MdtestEngine
from arraybench.engines.mdtest.summary import OPS, parse_mdtest
from arraybench.errors import FioRunError, PlanError
from arraybench.importer import import_paths
from arraybench.plan.catalog import resolve
from arraybench.plan.machines import Host
from arraybench.run.campaign import Campaign
from arraybench.store.db import Store
from tests.conftest import main_cli, needs_fio, small_plan
from tests.integration.test_campaign import Recorder

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "mdtest"
MDTEST = (ROOT.parent / "shared" / "tools" / "ior-4.0.0" / "mdtest").resolve()
needs_mdtest = pytest.mark.skipif(
    not MDTEST.exists() or shutil.which("mpirun") is None,
    reason=f"mdtest ({MDTEST}) or mpirun (Debian's openmpi-bin) is not installed",
)
ROW = re.compile(r"^\s+(\w[\w ]*?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
ALL = ["dir-create", "dir-stat", "dir-delete", "create", "stat", "delete"]


def _tables(text: str) -> list[dict[str, tuple[float, ...]]]:
    """Every SUMMARY rate table as {mdtest's label: (max, min, mean, std)}: the test's own."""
    tables: list[dict[str, tuple[float, ...]]] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("SUMMARY"):
            inside = line.startswith("SUMMARY rate")
            if inside:
                tables.append({})
            continue
        m = ROW.match(line)
        if inside and m and m.group(1) != "Operation":
            tables[-1][m.group(1)] = tuple(float(m.group(i)) for i in range(2, 6))
        elif inside and tables[-1] and not line.strip():
            inside = False
    return tables


# ------------------------------------------------------------------ the gate, the command line


@pytest.mark.parametrize(("value", "refused", "said"), [
    ("/mnt/a@b", "@", "list of directories"),
    ("-rf", "", "read as an option"),
    ("/mnt/a\nb", "", "control character 0x0a"),
    ("node1,node2", ",:", "list of hosts"),
    ("node1:4", ",:", "slot count"),
    ("", "", "is empty"),
])  # fmt: skip
def test_the_gate_refuses_what_mpirun_or_mdtest_would_misread(
    value: str, refused: str, said: str
) -> None:
    with pytest.raises(PlanError, match=said):
        mdtest_arg(value, "metadata.directory", refused)


def test_the_command_names_the_asked_phases_and_the_ladder_level() -> None:
    spec = MdtestSpec("/mnt/md", 4, 30000, ("create", "stat", "delete"), 3, ("n1", "n2"))
    argv = command(spec, open_mpi=True, root=False)
    assert argv[:7] == ["mpirun", "--oversubscribe", "--host", "n1:4,n2:4", "--npernode", "4",
                        "-np"] and argv[7] == "8"  # fmt: skip
    assert argv[8:] == ["mdtest", "-d", "/mnt/md", "-n", "30000", "-i", "3", "-F", "-C", "-T",
                        "-r"]  # fmt: skip
    every = mdtest_args(MdtestSpec("/d", 1, 5, tuple(ALL)))
    assert every[-3:] == ["-C", "-T", "-r"] and "-F" not in every and "-D" not in every
    dirs = mdtest_args(MdtestSpec("/d", 1, 5, ("dir-create", "dir-stat")))
    assert dirs[-3:] == ["-D", "-C", "-T"]


# ------------------------------------------------------------------ reading mdtest's output


@pytest.mark.parametrize("path", sorted(DATA.glob("*.txt")), ids=lambda p: p.name)
def test_every_summary_row_is_read_as_printed(path: Path) -> None:
    text = path.read_text()
    expected = _tables(text)
    summaries = parse_mdtest(text.splitlines(), path.name)
    assert len(summaries) == len(expected) >= 1
    for summary, table in zip(summaries, expected, strict=True):
        assert {r.label: (r.max, r.min, r.mean, r.std) for r in summary.rates} == table
        assert all(r.op == OPS[r.label] for r in summary.rates)
    tasks = [s.tasks for s in summaries]
    assert tasks == ([1, 2, 3, 4] if "ladder" in path.name else [2])


def test_import_of_an_mdtest_output_gives_its_summary_means(tmp_path: Path) -> None:
    path = DATA / "ladder-1-4-tasks.txt"
    store = Store(tmp_path / "results")
    result = import_paths(store, [path], run_name="mdtest")
    assert {f.data["tool"] for f in store.findings(result.run_id, "import")} == {"mdtest"}
    points = {(p.workload, p.workers): p for p in store.points(result.run_id)}
    for tasks, table in zip([1, 2, 3, 4], _tables(path.read_text()), strict=True):
        for label, (_, _, mean, _) in table.items():
            key = (f"mdtest-{OPS[label]}", tasks)
            if mean == 0:  # a phase that did not run is not a point
                assert key not in points
                continue
            assert points[key].metric("total", "iops") == pytest.approx(mean, rel=1e-9)
            assert points[key].ioengine == "mdtest"


# ------------------------------------------------------------------ a run, plan check


def _plan(tmp_path: Path, metadata: str) -> Path:
    return small_plan(tmp_path, workers="[1]", extra=f"metadata: {metadata}\n",
                      workloads="  - {name: r, pattern: random, bs: 8k, read: 100}\n")  # fmt: skip


@needs_fio
@needs_mdtest
def test_a_run_stores_mdtest_summary_at_1_2_and_4_tasks(tmp_path: Path) -> None:
    plan = resolve(
        str(
            _plan(
                tmp_path,
                f"{{engine: mdtest, mdtest: {MDTEST}, threads: [1, 2, 4],"
                f" files_per_thread: 10, repetitions: 2, ops: {ALL}}}",
            )
        )
    )
    store = Store(tmp_path / "results")
    result = Campaign(store, tmp_path / "results", Recorder()).start(plan, 1.0)
    assert result.status == "complete"
    for tasks in (1, 2, 4):
        point = store.point(result.run_id, f"metadata/t{tasks}")
        assert point is not None
        folder = Path(point.folder)
        argv = (folder / "point.mdtest").read_text().splitlines()
        mpirun = os.path.abspath(shutil.which("mpirun") or "")
        assert argv[2:4] == [mpirun, "--oversubscribe"] and str(MDTEST) in argv
        assert ("--allow-run-as-root" in argv) == (os.geteuid() == 0)
        assert argv[argv.index("-np") + 1] == str(tasks)
        text = (folder / "mdtest.txt").read_text()  # the raw output, kept beside the point
        assert f"launched with {tasks} total task(s) on 1 node(s)" in text
        (table,) = _tables(text)
        (finding,) = [f for f in store.findings(result.run_id, "metadata")
                      if f.point_id == point.id]  # fmt: skip
        rows = {r["op"]: r for r in finding.data["rows"]}
        # mdtest's tree rows follow the operations asked (it times them every run)
        assert list(rows) == [*ALL, "tree-create", "tree-delete"]
        assert finding.data["threads"] == tasks
        for op, row in rows.items():
            top, bottom, mean, std = table[OP_LABELS[op]]
            assert (row["ops_per_s"], row["ops_min"], row["ops_max"], row["ops_std"]) == (
                mean, bottom, top, std)  # fmt: skip
            assert row["iterations"] == 2 and row["tool"] == "mdtest"
            assert row["files"] == 10 * tasks  # items per task x tasks, as mdtest says


@needs_mdtest
def test_plan_check_says_the_tool_and_refuses_in_one_line(tmp_path: Path) -> None:
    ok = main_cli("plan", "check", str(_plan(tmp_path, f"{{engine: mdtest, mdtest: {MDTEST}, "
                                                       "threads: [1, 2]}")))  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert "on mdtest through mpirun, 1 iteration(s) each" in " ".join(ok.stdout.split())
    for metadata, said in [
        ("{engine: mdtest, mdtest: /nonexistent/mdtest}", "/nonexistent/mdtest not found"),
        ("{engine: mdtest, directory: /mnt/a@b}", "list of directories"),
        ("{ops: [create, read]}", "`read` (mdtest's file read phase) needs engine: mdtest"),
        ("{repetitions: 3}", "repetitions > 1 needs engine: mdtest"),
    ]:
        bad = main_cli("plan", "check", str(_plan(tmp_path, metadata)))
        assert bad.returncode == 2, (metadata, bad.stdout)
        assert said in bad.stderr and len(bad.stderr.strip().splitlines()) <= 2
    plan = _plan(tmp_path, f"{{engine: mdtest, mdtest: {MDTEST}}}")
    plan.write_text(plan.read_text().replace("scenario: test\n", "scenario: t\nengine: mdtest\n"))
    wrong = main_cli("plan", "check", str(plan))
    assert wrong.returncode == 2 and "runs only the metadata test" in wrong.stderr


# ------------------------------------------------------------------ stopping, failing


def _mdtest_processes(folder: Path) -> list[int]:
    """mpirun and mdtest processes working in `folder` (their cwd)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            name = (entry / "comm").read_text().strip() if entry.name.isdigit() else ""
            if name in ("mpirun", "mdtest", "orted") and (entry / "cwd").resolve() == folder:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _job(tmp_path: Path, items: int, directory: Path) -> tuple[MdtestEngine, Path]:
    engine = MdtestEngine(str(MDTEST))
    folder = tmp_path / "point"
    folder.mkdir()
    job = folder / engine.job_name
    job.write_text(engine.job(MdtestSpec(str(directory), 2, items, ("create", "stat", "delete"),
                                         mdtest=str(MDTEST))))  # fmt: skip
    return engine, job


@needs_mdtest
def test_the_watchdog_and_an_interrupt_stop_mpirun_and_its_tasks(tmp_path: Path) -> None:
    engine, job = _job(tmp_path, 2_000_000, tmp_path / "md")  # far longer than the test
    with pytest.raises(FioRunError, match=r"point t: mdtest ran \d+s, past its watchdog of 1s"):
        engine.run(job, RunSpec("t", 1.0))
    assert _mdtest_processes(job.parent) == []

    def interrupt(elapsed: float) -> None:
        if elapsed > 1.0:
            raise KeyboardInterrupt

    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        engine.run(job, RunSpec("t", 600.0, on_tick=interrupt))
    assert time.monotonic() - began < 30 and _mdtest_processes(job.parent) == []


@needs_mdtest
def test_a_failing_mdtest_is_one_line_naming_the_point(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")  # -d under a regular file: mdtest cannot make its tree
    engine, job = _job(tmp_path, 5, blocker / "md")
    with pytest.raises(FioRunError) as info:
        engine.results(engine.run(job, RunSpec("metadata/t2", 60.0)), "metadata/t2")
    line = info.value.one_line()
    assert line.startswith("point metadata/t2: mpirun exited with code ") and "\n" not in line
    assert "FAILED" in line or "ERROR" in line or "mpirun" in line


def test_the_hosts_ssh_config_passes_the_gate() -> None:
    host = Host.model_validate({"name": "h0", "address": "10.0.0.2", "targets": [],
                                "ssh": {"user": "root", "key": "/k/id key", "port": 2222,
                                        "known_hosts": "/k/known"}})  # fmt: skip
    text = ssh_config([host])
    assert text.splitlines() == ["Host 10.0.0.2", "  User root", "  Port 2222",
                                 '  IdentityFile "/k/id key"', '  UserKnownHostsFile "/k/known"',
                                 "  StrictHostKeyChecking yes", "  BatchMode yes"]  # fmt: skip
    assert host.ssh is not None
    evil = host.model_copy(
        update={"ssh": host.ssh.model_copy(update={"user": "root\n  ProxyCommand x"})}
    )
    with pytest.raises(PlanError, match="control character"):
        ssh_config([evil])
