"""`arraybench watch [RUN]`: a run started elsewhere followed from its results folder.

The store has a point's 1-second samples only when the point is over (they come from fio's
interval logs, which fio writes at its end), so the running arraybench writes its live
snapshot to `live.json` in the run's folder (`live/state.py`); this reads it, read-only,
about once a second, and ends when the run ends: its snapshot says so, or the process that
wrote it is gone (killed), or there is no snapshot and the store says the run is not
running (a run of an older version, or one that ended long ago).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from arraybench.live.state import Snapshot, read_snapshot

if TYPE_CHECKING:
    from arraybench.store.db import Store

POLL_S = 1.0
LIVE_STATES = ("starting", "running")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def follow(
    folder: Path, store_running: Callable[[], bool], poll_s: float = POLL_S
) -> Iterator[Snapshot]:
    """Each new snapshot of the run in `folder`, the last one with the state it ended in."""
    seen = None
    while True:
        snap = read_snapshot(folder)
        if snap is None:
            if not store_running():
                return
        else:
            if snap["updated"] != seen:
                seen = snap["updated"]
                if snap["state"] in LIVE_STATES and not pid_alive(snap["pid"]):
                    snap["state"] = "ended (its process is gone)"
                yield snap
            if snap["state"] not in LIVE_STATES:
                return
            if not pid_alive(snap["pid"]):
                snap["state"] = "ended (its process is gone)"
                yield snap
                return
        time.sleep(poll_s)


def watch_run(
    store: Store, run_id: str, folder: Path, view: Callable[[Iterator[Snapshot]], Snapshot | None]
) -> str | None:
    """`arraybench watch`: the run's snapshots shown by `view` until it ends; how it ended
    (complete, interrupted, failed), from its last snapshot, else from the store. None: the
    watcher pressed Ctrl-C (that stops the watching, not the run)."""
    try:
        last = view(follow(folder, lambda: store.get_run(run_id).status == "running"))
    except KeyboardInterrupt:
        return None
    return last["state"] if last else store.get_run(run_id).status
