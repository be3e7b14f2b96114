"""A Ctrl-C arriving while a helper thread starts is handled after the start, not inside it."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from arraybench.monitor.shielded import start_shielded


class SignalledWhileStarting(threading.Thread):
    """A thread whose start is interrupted by a SIGINT to this process, as a user's Ctrl-C can."""

    def start(self) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        super().start()


def test_a_sigint_during_start_comes_after_the_thread_started() -> None:
    seen: list[bool] = []
    thread = SignalledWhileStarting(target=lambda: seen.append(True))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    with pytest.raises(KeyboardInterrupt):  # the default handler, once the start is over
        start_shielded(thread)
    thread.join(5)
    assert seen == [True]  # the thread did start and run
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == mask  # the caller's mask is back


def test_the_started_thread_leaves_both_signals_to_the_main_thread() -> None:
    masks: list[set[signal.Signals]] = []
    thread = threading.Thread(target=lambda: masks.append(signal.pthread_sigmask(
        signal.SIG_BLOCK, [])))  # fmt: skip
    start_shielded(thread)
    thread.join(5)
    assert {signal.SIGINT, signal.SIGTERM} <= masks[0]
