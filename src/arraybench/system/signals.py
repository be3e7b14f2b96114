"""Signals in this process: steps the main thread must not be interrupted inside, with a
Ctrl-C (or SIGTERM) held back until the step is over and then raised where the caller can
clean up:

- `Thread.start`: a KeyboardInterrupt there leaves the thread's start-up lock half-released
  and a later call fails with "release unlocked lock" (a traceback instead of the run's line);
- starting fio (`subprocess.Popen` with a `preexec_fn`): CPython then runs the at-fork hooks
  in the parent, and a KeyboardInterrupt raised inside one (logging's `_releaseLock`) is
  printed as "Exception ignored" and lost: the run went on and ended with exit 0 (seen in CI).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterable, Iterator
from types import FrameType

HELD = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back for the block; a signal that came meanwhile is raised
    again right after it, to the handler that was in place (so its exception comes out of
    the `with`). A signal mask would not do: the kernel hands the signal to another thread
    and Python still runs the handler in the main thread, inside the block."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers run in the main thread only
        return
    came: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        came.append(signum)

    before = {s: signal.getsignal(s) for s in HELD}
    held = [s for s, handler in before.items() if handler is not None]  # None: set outside Python
    for s in held:
        signal.signal(s, hold)
    try:
        yield
    finally:
        for s in held:
            signal.signal(s, before[s])
        for signum in came:
            signal.raise_signal(signum)  # runs the handler now: its exception is raised here


def start_shielded(thread: threading.Thread) -> None:
    """Start `thread` with SIGINT and SIGTERM held back until it has started."""
    with signals_held():
        thread.start()


def join_started(thread: threading.Thread, timeout: float | None) -> None:
    """Wait for `thread` unless it never started: a signal that arrived as `start_shielded`
    was entered (before its handlers were in place) leaves it unstarted, and `join` would
    raise RuntimeError in the clean-up that follows (seen in CI: exit 1, not 130)."""
    if thread.ident is not None:
        thread.join(timeout)


def send_each(pids: Iterable[int], signum: int) -> tuple[list[int], list[int]]:
    """`signum` to each process in turn: (the ones signalled, the ones gone). PermissionError
    passes up at the first one refused, naming its pid (`filename`)."""
    sent: list[int] = []
    gone: list[int] = []
    for pid in pids:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            gone.append(pid)
            continue
        except PermissionError as exc:
            raise PermissionError(exc.errno, exc.strerror, str(pid)) from None
        sent.append(pid)
    return sent, gone
