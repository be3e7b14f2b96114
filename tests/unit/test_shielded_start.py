"""A Ctrl-C arriving while a helper thread starts is handled after the start, not inside it."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from arraybench.events.timeline import EventTimeline
from arraybench.plan.events import Event
from arraybench.system.signals import start_shielded

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


# Sends SIGINT from inside CPython's at-fork hook in the parent, where the CI run's Ctrl-C
# landed (logging's _releaseLock): a KeyboardInterrupt raised there is printed as "Exception
# ignored" and lost. Hooks cannot be unregistered, so this one fires only when armed.
_ARMED: list[bool] = []


def _signal_if_armed() -> None:
    if _ARMED:
        _ARMED.clear()
        os.kill(os.getpid(), signal.SIGINT)


os.register_at_fork(after_in_parent=_signal_if_armed)


def _alive_with_argv(argv: bytes) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if f.read().rstrip(b"\0") == argv:
                        found.append(int(name))
            except OSError:
                continue
    return found


def test_a_sigint_while_fio_starts_is_raised_and_the_process_is_ended(tmp_path) -> None:
    from arraybench.engines.fio.runner import FioProcess

    command = ["sleep", "97.5311"]  # a stand-in for fio: FioProcess starts any command
    _ARMED.append(True)
    try:
        with pytest.raises(KeyboardInterrupt):
            FioProcess(command, tmp_path, None, None)
    finally:
        _ARMED.clear()
    assert _alive_with_argv("\0".join(command).encode()) == []  # ended, not left running
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_fio_starts_as_before_without_a_signal(tmp_path) -> None:
    from arraybench.engines.fio.runner import FioProcess

    fio = FioProcess(["true"], tmp_path, None, None)
    assert fio.proc.wait(5) == 0 and fio.pid == fio.proc.pid and fio.started > 0


def test_a_timeline_cut_off_before_its_thread_started_stops_cleanly(monkeypatch) -> None:
    """A Ctrl-C whose handler runs before `start_shielded` has put its own in place (CI saw
    it at the generator's first line): the thread is made but never started."""
    from arraybench.events import timeline as module

    def signalled_first(thread: threading.Thread) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        start_shielded(thread)

    monkeypatch.setattr(module, "start_shielded", signalled_first)
    events = [Event.model_validate({"at": "5s", "run": {"argv": ["true"]}})]
    timeline = EventTimeline(events, pids=list)
    with pytest.raises(KeyboardInterrupt):
        timeline.start()
    timeline.stop()  # joined a thread never started: RuntimeError, exit 1 instead of 130
    [record] = timeline.records()
    assert (record.action, record.outcome) == ("skipped", "timeout")
    assert signal.getsignal(signal.SIGTERM) is not timeline._on_sigterm  # handler put back
