"""A process's state for tests that stop and continue one (SIGSTOP, SIGCONT)."""

from __future__ import annotations

from pathlib import Path


def process_state(pid: int) -> str | None:
    """The one-letter state (R, S, D, T stopped, Z ...) or None when the process is gone.
    The command name in /proc/PID/stat sits in parentheses and may hold spaces and
    parentheses itself: the state is the first field after the last ')'."""
    try:
        text = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return fields[0] if fields else None
