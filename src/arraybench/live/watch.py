"""`arraybench watch [RUN]`: a run started elsewhere followed from its results folder.

The store has a point's 1-second samples only when the point is over (they come from fio's
interval logs, which fio writes at its end), so the running arraybench writes its live
snapshot to `live.json` in the run's folder (`live/state.py`); this reads it, read-only and
validated (`read_snapshot`), about once a second.

Whether the run still runs is decided by its lock (`store/runlock.py`), not by live.json:
the file's pid can belong to another process once the run's is gone, and the file can be
gone with its folder while the run goes on. The watching ends when the lock is free, or when
the snapshot says the run ended and the store agrees; how the run ended is the store's word
(complete, interrupted, failed), or "killed" when the store still says running though no
process holds the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from arraybench.live.state import Snapshot, read_snapshot
from arraybench.system.procs import pid_alive

if TYPE_CHECKING:
    from arraybench.store.db import Store

POLL_S = 1.0
LIVE_STATES = ("starting", "running")
KILLED = "killed"  # the store says running, no process holds the run


def follow(
    folder: Path, running: Callable[[Snapshot | None], bool], ended: Callable[[], bool],
    poll_s: float = POLL_S,
) -> Iterator[Snapshot]:  # fmt: skip
    """Each new snapshot of the run in `folder` until `running` (given the last snapshot)
    says no, or the snapshot says the run ended and `ended` (the store) agrees. `running` is
    asked before the file is read: the run's last snapshot is written before it lets go."""
    seen: Snapshot | None = None
    while True:
        still = running(seen)
        snap = read_snapshot(folder)
        if snap is not None and (seen is None or snap["updated"] != seen["updated"]):
            seen = snap
            yield snap
        if not still or (snap is not None and snap["state"] not in LIVE_STATES and ended()):
            return
        time.sleep(poll_s)


def _running(
    store: Store, run_id: str
) -> tuple[Callable[[Snapshot | None], bool], Callable[[], None]]:
    """Whether the run runs: its lock held; where the lock cannot tell (no lock file, a
    filesystem without locks), the store says running and the snapshot's process lives."""
    from arraybench.store.runlock import RunLockProbe

    probe = RunLockProbe(store.path.parent, run_id)

    def running(snap: Snapshot | None) -> bool:
        held = probe.held()
        if held is not None:
            return held
        return store.get_run(run_id).status == "running" and (
            snap is None or pid_alive(snap["pid"])
        )

    return running, probe.close


def how_it_ended(store: Store, run_id: str) -> str:
    """complete, interrupted or failed as the store says; KILLED when it still says running."""
    status = store.get_run(run_id).status
    return KILLED if status == "running" else status


def watch_run(
    store: Store, run_id: str, folder: Path, view: Callable[[Iterator[Snapshot]], Snapshot | None]
) -> str | None:
    """`arraybench watch`: the run's snapshots shown by `view` until it ends; how it ended
    (complete, interrupted, failed, killed), from the store. None: the watcher pressed Ctrl-C
    (that stops the watching, not the run)."""
    running, close = _running(store, run_id)
    try:
        view(follow(folder, running, lambda: store.get_run(run_id).status != "running"))
    except KeyboardInterrupt:
        return None
    finally:
        close()
    return how_it_ended(store, run_id)
