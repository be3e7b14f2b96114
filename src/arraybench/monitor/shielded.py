"""Starting a helper thread from the main thread without a Ctrl-C landing inside
`Thread.start`: there a KeyboardInterrupt leaves the thread's start-up lock half-released and a
later call fails with "release unlocked lock" (a traceback instead of the run's one line)."""

from __future__ import annotations

import signal
import threading

HELD = {signal.SIGINT, signal.SIGTERM}


def start_shielded(thread: threading.Thread) -> None:
    """Start `thread` with SIGINT and SIGTERM held back in the calling thread until it has
    started; a signal that came meanwhile is handled right after, as if it came then. The new
    thread inherits the held mask, so the kernel keeps delivering both to the main thread,
    where Python handles them anyway."""
    if threading.current_thread() is not threading.main_thread():
        thread.start()
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        thread.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
