"""Every local injection is journaled in the store before it is applied; what a controller
that died left in place (no revert ran) is undone from the journal alone by
`revert_leftovers` (what `arraybench revert` calls): the throttle's cgroup removed with its
process moved back, a stopped process continued."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.errors import ArraybenchError, PlanError
from arraybench.events import cgroup as cgroups
from arraybench.events.event_kinds.signal import SignalInjector
from arraybench.events.event_kinds.throttle import ThrottleInjector
from arraybench.plan.event_kinds.signal import SignalAction
from arraybench.plan.event_kinds.throttle import ThrottleAction
from arraybench.run.injections import StoreInjectionLog, refuse_leftovers, revert_leftovers
from arraybench.store.db import RunRecord, Store
from tests.loopdev import attached, sparse_file
from tests.procs import process_state

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices and cgroups need root"),
]


@pytest.fixture
def sleepers() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    try:
        yield procs
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            proc.wait()


def _state_within(pid: int, *states: str, seconds: float = 5.0) -> bool:
    """Whether the process reaches one of `states` within `seconds` (a busy machine delays a
    stop or a continue by a scheduling slice or more)."""
    deadline = time.monotonic() + seconds
    while process_state(pid) not in states:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _store(results: Path) -> Store:
    store = Store(results)
    store.create_run(RunRecord(
        id="r1", plan_name="p", scenario="s", labels={}, plan_yaml="name: p\n",
        folder=str(results / "runs" / "r1"), scale=1.0, status="running", started="x",
        finished=None, total_points=1, engine_version=None, arraybench_version="0", host="h",
        kernel="k", targets=[], latency_bound_us=1000.0, latency_stat="mean"))  # fmt: skip
    return store


def test_a_dead_controllers_local_injections_are_undone_from_the_journal(
    tmp_path: Path, sleepers: list[subprocess.Popen[bytes]]
) -> None:
    try:
        cg = cgroups.detect_io_cgroup()
    except ArraybenchError as exc:
        pytest.skip(f"no cgroup I/O controller: {exc.one_line()}")
    results = tmp_path / "res"
    store = _store(results)
    log = StoreInjectionLog(results, "r1", "rr/w1-qd1")
    throttled, stopped = sleepers
    origin = cgroups.cgroup_of(throttled.pid, cg)
    with attached(sparse_file(tmp_path / "backing.img", 16 << 20)) as dev:
        throttle = ThrottleInjector(ThrottleAction(device=dev, read_iops=100),
                                    lambda: [throttled.pid])  # fmt: skip
        freeze = SignalInjector(SignalAction(pid=stopped.pid))
        for injector in (throttle, freeze):
            injector.journal, injector.label = log, f"{injector.kind} test"
            injector.apply()
        folder = throttle.folder
        assert folder is not None and cgroups.cgroup_of(throttled.pid, cg) != origin
        assert _state_within(stopped.pid, "T")  # a signal takes effect a moment later
        # the controller dies here: no revert ran; both are journaled as applying
        rows = store.pending_injections()
        assert [(r.kind, r.state) for r in rows] == [
            ("throttle", "applying"),
            ("signal", "applying"),
        ]
        assert isinstance(rows[0].undo, dict) and isinstance(rows[1].undo, dict)
        assert rows[0].undo["folder"] == str(folder) and rows[1].undo["pids"] == [stopped.pid]
        with pytest.raises(PlanError) as refused:  # the next run refuses in one line
            refuse_leftovers(store, results)
        assert "arraybench revert" in refused.value.one_line()
        reverted = revert_leftovers(store)
        assert len(reverted.done) == 2 and not reverted.found.running and not reverted.problems
        assert not folder.exists()
        assert cgroups.cgroup_of(throttled.pid, cg) == origin
        assert _state_within(stopped.pid, "S", "R")
        assert store.pending_injections() == []
        refuse_leftovers(store, results)  # nothing left: a run may start


def test_injections_reverted_normally_leave_nothing_pending(
    tmp_path: Path, sleepers: list[subprocess.Popen[bytes]]
) -> None:
    results = tmp_path / "res"
    store = _store(results)
    freeze = SignalInjector(SignalAction(pid=sleepers[0].pid))
    freeze.journal = StoreInjectionLog(results, "r1", "p")
    freeze.apply()
    assert len(store.pending_injections("r1")) == 1
    freeze.revert()
    assert store.pending_injections("r1") == []
