"""Starting a helper thread from the main thread without a Ctrl-C landing inside
`Thread.start`: there a KeyboardInterrupt leaves the thread's start-up lock half-released and a
later call fails with "release unlocked lock" (a traceback instead of the run's one line)."""

from __future__ import annotations

import signal
import threading
from types import FrameType

HELD = (signal.SIGINT, signal.SIGTERM)


def start_shielded(thread: threading.Thread) -> None:
    """Start `thread` with SIGINT and SIGTERM held back until it has started; a signal that
    came meanwhile is raised again right after, to the handler that was in place. (A signal
    mask would not do: the kernel hands the signal to another thread and Python still runs
    the handler in the main thread, inside `start`.)"""
    if threading.current_thread() is not threading.main_thread():
        thread.start()  # signal handlers run in the main thread only
        return
    came: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        came.append(signum)

    before = {s: signal.getsignal(s) for s in HELD}
    held = [s for s, handler in before.items() if handler is not None]  # None: set outside Python
    for s in held:
        signal.signal(s, hold)
    try:
        thread.start()
    finally:
        for s in held:
            signal.signal(s, before[s])
        for signum in came:
            signal.raise_signal(signum)
