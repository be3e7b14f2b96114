"""The signals that stop arraybench, and the ones CPython swallowed.

Ctrl-C (SIGINT), SIGTERM and SIGHUP raise KeyboardInterrupt (`Terminated` for the last two)
where the program is, so fio is ended, events reverted and the run marked by the same code.
But CPython cannot let an exception out of everywhere: raised inside an at-fork hook, a
`__del__` or a weakref callback it is printed as "Exception ignored" and lost, and the run
would go on to exit 0 as if the user had not asked it to stop (seen in CI: a Ctrl-C inside
logging's at-fork hook while fio started). So each signal is also recorded here; the campaign
raises a recorded one again before each point and before it calls the run complete
(`raise_if_swallowed`), and the unraisable hook keeps the swallowed traceback off the terminal.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

from arraybench.errors import Terminated

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
CLEANUP_GRACE_S = 30.0  # a repeated SIGTERM/SIGHUP within this time does not cut cleanup short

_received: list[int] = []  # the signals since `install`, in order


def _exception(signum: int) -> KeyboardInterrupt:
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


def raise_if_swallowed() -> None:
    """Raise the first signal received since `install` again. Only called where the campaign
    goes on (each point, the end of the grid): had its exception come out, the campaign would
    not be there."""
    if _received:
        raise _exception(_received[0])


def _quiet_hook(previous: Callable[[Any], object]) -> Callable[[Any], object]:
    def hook(unraisable: Any) -> object:
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and _received:
            return None  # recorded: raised again at the next point, said in one line then
        return previous(unraisable)

    return hook


def install() -> Callable[[], None]:
    """Our handlers for SIGINT, SIGTERM and SIGHUP and the quiet unraisable hook; returns the
    function that puts back what was there. Only the main thread may set handlers."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    _received.clear()
    first: list[float] = []

    def handler(signum: int, _frame: FrameType | None) -> None:
        _received.append(signum)
        if signum != signal.SIGINT:
            if first and time.monotonic() - first[0] < CLEANUP_GRACE_S:
                return  # cleanup of the first one is under way
            first[:] = [time.monotonic()]
        raise _exception(signum)  # every Ctrl-C, as Python's own handler does

    before = {sig: signal.signal(sig, handler) for sig in HANDLED}
    hook_before = sys.unraisablehook
    sys.unraisablehook = _quiet_hook(hook_before)

    def restore() -> None:
        for sig, old in before.items():
            signal.signal(sig, old)
        sys.unraisablehook = hook_before
        _received.clear()

    return restore
