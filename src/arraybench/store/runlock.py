"""Whether a run is being run right now, from its lock (`Store.lock_run`), for `watch`.

The process running a run holds an exclusive flock on `runs/ID/.arraybench.lock` from before
the run is stored until it exits; the kernel drops it however the process ends. That is the
one sure sign: a pid written somewhere can be reused by another process once the run's
process is gone (a killed run would be watched forever), and the store says "running" for a
run whose process was killed before it could say how it ended.

The probe opens the lock file once and asks about that open file each time: when the run's
folder is deleted while it runs, the file is gone from the folder but the open one is still
the file the run holds. Asking takes a shared lock for an instant and gives it back at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from pathlib import Path

from arraybench.store.db import LOCK_NAME


def lock_path(results_dir: Path, run_id: str) -> Path:
    """Where `Store.lock_run` keeps the run's lock."""
    return results_dir / "runs" / run_id / LOCK_NAME


def _open(path: Path) -> int | None:
    """The lock file opened for reading: never through a link, never waiting on a FIFO;
    None when it is missing or no regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY
                     | os.O_CLOEXEC)  # fmt: skip
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


class RunLockProbe:
    """Asks, as often as needed, whether the run's lock is held (see the module's text)."""

    def __init__(self, results_dir: Path, run_id: str) -> None:
        self.path = lock_path(results_dir, run_id)
        self.fd = _open(self.path)

    def held(self) -> bool | None:
        """True: a process runs the run; False: none does; None: cannot tell (no lock file,
        a filesystem without locks)."""
        if self.fd is None:
            self.fd = _open(self.path)  # made since: a resume started
            if self.fd is None:
                return None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return None
        fcntl.flock(self.fd, fcntl.LOCK_UN)  # at once: a resume must find it free
        return False

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
