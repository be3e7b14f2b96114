"""`arraybench` and `python -m arraybench`: the signal handlers first, then the program.

Importing the command line takes half a second or more (seconds on a loaded machine), and
Python's own SIGINT handler would raise KeyboardInterrupt somewhere inside an import: a
traceback, and an exit by the signal (-2) instead of 130. Until `cli.main` installs the
handlers that end a run cleanly (run.interrupts), and again after it has put them back,
nothing is under way that needs cleaning up: a signal then ends the process at once, with
one line and the shell's exit code (130 for Ctrl-C, 128 + N for signal N). Once the output
is written, the signals are held until the process has exited (its code stands).
"""

import contextlib
import os
import signal
import sys

EXIT_BASE = 128
MESSAGES: dict[int, str] = {signal.SIGINT: "interrupted", signal.SIGTERM: "interrupted by SIGTERM",
            signal.SIGHUP: "interrupted by SIGHUP"}  # fmt: skip


def _end_now(signum: int, _frame: object) -> None:
    """Nothing to clean up here: one line, the exit code, no traceback, no Python cleanup."""
    with contextlib.suppress(OSError):  # a terminal that is gone (SIGHUP)
        os.write(2, f"error: {MESSAGES.get(signum, 'interrupted')}\n".encode())
    os._exit(EXIT_BASE + signum)


def main() -> int:
    for signum in MESSAGES:
        if signal.getsignal(signum) is not signal.SIG_IGN:  # nohup, a shell's background job
            signal.signal(signum, _end_now)
    from arraybench.cli import main as cli_main

    code = cli_main()
    for stream in (sys.stdout, sys.stderr):  # a signal while the output drains: _end_now
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    # Python's shutdown puts the default handlers back before it ends: a signal then would
    # kill the process (-2, no line). Held from here, it is dropped when the process exits.
    signal.pthread_sigmask(signal.SIG_BLOCK, set(MESSAGES))
    return code


if __name__ == "__main__":
    sys.exit(main())
