"""A Ctrl-C arriving while a helper thread starts is handled after the start, not inside it."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from arraybench.monitor.shielded import start_shielded

pytestmark = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="Python handles signals in the main thread only",
)


class SignalledWhileStarting(threading.Thread):
    """A thread whose start is interrupted by a SIGINT to this process, as a user's Ctrl-C can."""

    def start(self) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        super().start()


def test_a_sigint_during_start_comes_after_the_thread_started() -> None:
    seen: list[bool] = []
    thread = SignalledWhileStarting(target=lambda: seen.append(True))
    handler = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):  # the handler in place, once the start is over
        start_shielded(thread)
    thread.join(5)
    assert seen == [True]  # the thread did start and run
    assert signal.getsignal(signal.SIGINT) is handler  # the caller's handler is back


def test_without_a_signal_nothing_is_raised_and_handlers_stay() -> None:
    handlers = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)]
    thread = threading.Thread(target=lambda: None)
    start_shielded(thread)
    thread.join(5)
    assert [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)] == handlers
