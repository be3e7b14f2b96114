"""Processes from /proc: the load's process group, name patterns, thread -> process."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from pathlib import Path

from arraybench.events.errors import InjectorError
from arraybench.userfiles import InputFileError, read_whole
from arraybench.userregex import UserRegexError, compile_user_regex

PROC = Path("/proc")
PID_FILE_BYTES = 4096  # a pid and a newline; more is no pid file


def _numeric_dirs(folder: Path) -> Iterator[int]:
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name.isdigit():
            yield int(name)


def _stat_fields(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name: [state, ppid, pgrp, session, ...].

    The name sits in parentheses and may itself hold spaces and parentheses: split after the
    last ')'.
    """
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    end = text.rfind(")")
    return text[end + 2 :].split() if end >= 0 else None


def process_state(pid: int) -> str | None:
    """The one-letter state (R, S, D, T stopped, Z ...) or None when the process is gone."""
    fields = _stat_fields(pid)
    return fields[0] if fields else None


def tgid_of(pid: int) -> int | None:
    """The process (thread group) a thread id belongs to; None when it is gone."""
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("Tgid:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def process_group_pids(pgid: int, *, threads: bool = False) -> list[int]:
    """Every process whose process group is `pgid`, and with `threads` also their thread ids.

    Not enough for fio: its job processes call setsid() and leave the group; use
    process_tree_pids(fio's pid) for the load."""
    found: list[int] = []
    for pid in _numeric_dirs(PROC):
        fields = _stat_fields(pid)
        if fields is None or len(fields) < 3 or fields[2] != str(pgid):
            continue
        found.append(pid)
        if threads:
            found.extend(t for t in _numeric_dirs(PROC / str(pid) / "task") if t != pid)
    return sorted(found)


def process_tree_pids(root: int, *, threads: bool = False) -> list[int]:
    """`root` and every process descending from it (by parent pid), with `threads` also their
    thread ids. This is what the load is: fio calls setsid() in each job process it forks, so
    its jobs are NOT in fio's process group (nor its session); only the parent links hold."""
    children: dict[int, list[int]] = {}
    for pid in _numeric_dirs(PROC):
        fields = _stat_fields(pid)
        if fields is not None and len(fields) >= 2 and fields[1].isdigit():
            children.setdefault(int(fields[1]), []).append(pid)
    if _stat_fields(root) is None:
        return []
    found: list[int] = []
    queue = [root]
    while queue:
        pid = queue.pop()
        found.append(pid)
        queue.extend(c for c in children.get(pid, []) if c not in found)
        if threads:
            found.extend(t for t in _numeric_dirs(PROC / str(pid) / "task") if t != pid)
    return sorted(set(found))


def processes_of(pids: Collection[int]) -> list[int]:
    """Thread ids -> the distinct processes they belong to (gone ones dropped), sorted."""
    result = {tgid for tgid in (tgid_of(p) for p in pids) if tgid is not None}
    return sorted(result)


def _cmdline(pid: int) -> str | None:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    return raw.rstrip(b"\0").replace(b"\0", b" ").decode(errors="replace")


def _comm(pid: int) -> str | None:
    try:
        return (PROC / str(pid) / "comm").read_text().rstrip("\n")
    except OSError:
        return None


def find_processes(pattern: str, *, full: bool = False, exclude: Collection[int] = ()) -> list[int]:
    """Processes whose name (as pgrep) or, with `full`, whole command line (pgrep -f) matches
    the regular expression `pattern` (searched, not anchored, in linear time: userregex.py).
    This process is never listed."""
    try:
        regex = compile_user_regex(pattern, "the signal event's process")
    except UserRegexError as exc:  # the plan's loader refuses it first: a plan made by hand
        raise InjectorError(str(exc), "see `process` in docs/plan.md") from None
    skip = {os.getpid(), *exclude}
    found = []
    for pid in _numeric_dirs(PROC):
        if pid in skip:
            continue
        text = _cmdline(pid) if full else _comm(pid)
        if text and regex.found(text):
            found.append(pid)
    return sorted(found)


def read_pid_file(path: str) -> int:
    """The pid written in a pid file (first word); InjectorError when unreadable."""
    try:  # a regular file only, read within PID_FILE_BYTES: a FIFO there must not hang us
        words = read_whole(Path(path), "the pid file", PID_FILE_BYTES).decode().split()
        pid = int(words[0])
    except (InputFileError, OSError, ValueError, IndexError) as exc:
        raise InjectorError(
            f"cannot read a pid from {path}: {exc}", "check the pid_file of the event"
        ) from None
    if pid <= 0:
        raise InjectorError(f"{path} holds no valid pid ({pid})")
    return pid


def alive(pid: int) -> bool:
    state = process_state(pid)
    return state is not None and state not in ("Z", "X")


def leaves(pids: Collection[int]) -> list[int]:
    """The processes of `pids` that are no other's parent among them: fio's job processes
    in fio's tree (stopping fio's main process or a server's connection process would cut
    its reporting, not the I/O)."""
    parents = set()
    for pid in pids:
        fields = _stat_fields(pid)
        if fields is not None and len(fields) >= 2 and fields[1].isdigit():
            parents.add(int(fields[1]))
    return sorted(p for p in set(pids) if p not in parents)
