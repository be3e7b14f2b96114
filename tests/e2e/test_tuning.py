"""host_tuning on a loop device: applied while fio runs, restored after a normal end, after
SIGTERM, and by `arraybench revert` after SIGKILL; plan check says what changes and refuses
what the device would refuse."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.cli import main
from arraybench.store.db import Store
from tests.conftest import needs_fio
from tests.hostile.procs import fio_under, gone, start_cli, wait_for
from tests.loopdev import attached, sparse_file

pytestmark = needs_fio

TUNED = {"scheduler": "none", "nr_requests": "64", "read_ahead_kb": "0"}


def _sysfs(dev: str, name: str) -> Path:
    return Path("/sys/block") / Path(dev).name / "queue" / name


def _values(dev: str) -> dict[str, str]:
    """The selected scheduler and the other values as sysfs shows them."""
    found = {k: _sysfs(dev, k).read_text().strip() for k in TUNED}
    found["scheduler"] = found["scheduler"].split("[")[1].split("]")[0]
    return found


@pytest.fixture
def loopdev(tmp_path: Path) -> Iterator[str]:
    """A loop device whose settings all differ from TUNED (mq-deadline, read-ahead 128 KiB)."""
    with attached(sparse_file(tmp_path / "backing.img", 64 << 20)) as dev:
        if "mq-deadline" not in _sysfs(dev, "scheduler").read_text():
            pytest.skip("this kernel offers no mq-deadline scheduler")
        _sysfs(dev, "scheduler").write_text("mq-deadline")
        _sysfs(dev, "read_ahead_kb").write_text("128")
        yield dev


def _plan(tmp_path: Path, dev: str, *, duration: str = "1s", tuning: str = "") -> Path:
    tuning = tuning or "{scheduler: none, nr_requests: 64, read_ahead_kb: 0}"
    files = ", ".join(str(_sysfs(dev, k)) for k in TUNED)
    event = f"{{at: 0.2s, run: [cat, {files}]}}"  # sysfs as the point sees it
    path = tmp_path / "plan.yaml"
    path.write_text(
        f"name: tuned\ntargets:\n  - path: {dev}\ntiming: {{ramp: 0s, duration: {duration}}}\n"
        f"load: {{workers: [1], iodepth: [1]}}\nmonitor: false\nhost_tuning: {tuning}\n"
        f"workloads:\n  - {{name: rr, pattern: random, bs: 4k, read: 100, events: [{event}]}}\n"
    )
    return path


def test_applied_during_the_point_and_restored_after_a_normal_end(
    loopdev: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _values(loopdev)
    assert before["scheduler"] == "mq-deadline" and before["read_ahead_kb"] == "128"
    results = tmp_path / "res"
    assert main(["run", str(_plan(tmp_path, loopdev)), "--results", str(results)]) == 0
    capsys.readouterr()
    assert _values(loopdev) == before  # nr_requests too, though the scheduler moved it

    store = Store(results, create=False)
    run = store.list_runs()[0][0]
    [events] = store.findings(run.id, "events")
    [cat] = [r for r in events.data["records"] if r["action"] == "run"]
    lines = cat["output"].splitlines()
    assert cat["outcome"] == "ok" and lines[0].startswith("[none] ") and lines[1:] == ["64", "0"]
    [found] = store.findings(run.id, "provenance")
    applied = {c["attribute"]: (c["original"], c["value"]) for c in found.data["host_tuning"]}
    assert applied == {k: (before[k], v) for k, v in TUNED.items()}
    settings = found.data["targets"][0]["queue"]["settings"]
    assert {k: settings[k] for k in TUNED} == TUNED  # the provenance shows what the run ran with
    assert main(["revert", "--results", str(results)]) == 0
    assert "nothing to revert" in capsys.readouterr().out


def _start(tmp_path: Path, dev: str, results: Path):  # type: ignore[no-untyped-def]
    proc = start_cli("run", str(_plan(tmp_path, dev, duration="20s")), "--results", str(results))
    wait_for(lambda: fio_under(results), "fio of the first point", proc)
    assert _values(dev) == TUNED  # in effect while fio runs
    return proc


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_restored_after_sigterm_and_ctrl_c(
    loopdev: str, tmp_path: Path, signum: int, code: int
) -> None:
    before = _values(loopdev)
    results = tmp_path / "res"
    proc = _start(tmp_path, loopdev, results)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert _values(loopdev) == before
    assert gone(tmp_path) == []


def test_revert_after_sigkill(
    loopdev: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _values(loopdev)
    results = tmp_path / "res"
    proc = _start(tmp_path, loopdev, results)
    proc.kill()
    proc.communicate(timeout=30)
    assert gone(tmp_path) == []
    assert _values(loopdev) == TUNED  # nothing ran after SIGKILL: the journal is all there is

    # a new tuned run would take the tuned values for originals: refused until reverted
    assert main(["run", str(_plan(tmp_path, loopdev)), "--results", str(results)]) == 2
    assert "arraybench revert" in capsys.readouterr().err
    assert main(["revert", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert f"{Path(loopdev).name} read_ahead_kb restored to 128" in out
    assert _values(loopdev) == before
    assert main(["revert", "--results", str(results)]) == 0
    assert "nothing to revert" in capsys.readouterr().out


def test_plan_check_says_what_changes_and_refuses_what_the_device_refuses(
    loopdev: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = Path(loopdev).name
    assert main(["plan", "check", str(_plan(tmp_path, loopdev))]) == 0
    out = capsys.readouterr().out
    assert f"host_tuning: {name} scheduler mq-deadline -> none" in out
    assert f"host_tuning: {name} read_ahead_kb 128 -> 0" in out
    refused = {
        "{scheduler: nosuch}": "host_tuning.scheduler: scheduler 'nosuch' is not offered",
        "{queue_depth: 8}": "host_tuning.queue_depth: /sys/block",  # no SCSI device under loop
        "{max_sectors_kb: 4194304}": "is above max_hw_sectors_kb",
        "{nomerges: 5}": "host_tuning.nomerges",  # out of range: the plan model, located
        "{read_ahead: 0}": "host_tuning.read_ahead",  # an unknown key
    }
    for tuning, said in refused.items():
        assert main(["plan", "check", str(_plan(tmp_path, loopdev, tuning=tuning))]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and said in err[0], (tuning, err)
    assert _values(loopdev)["scheduler"] == "mq-deadline"  # plan check changes nothing


def test_a_value_the_kernel_refuses_at_the_start_undoes_the_others(
    loopdev: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """nr_requests beyond what the loop driver's tags allow: only the kernel knows; the
    scheduler already changed is restored and no run is left marked running."""
    before = _values(loopdev)
    results = tmp_path / "res"
    plan = _plan(tmp_path, loopdev, tuning="{scheduler: none, nr_requests: 100000}")
    assert main(["run", str(plan), "--results", str(results)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "refused '100000'" in err[0], err
    assert _values(loopdev) == before
    assert Store(results, create=False).list_runs() == []
