"""Processes from /proc: the load's process tree, thread -> process, a process's parent and
start time, the processes whose name or command line match; a child's output within a time
limit (`communicate_or_kill`).

The machine's facts, below engines/fio/runner.py and events/ alike: nothing here imports
arraybench (events/procs.py turns a user's pattern or pid file into a question for these,
with the user's error when it is not one). Signals are system/signals.py's."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import subprocess
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

PROC = Path("/proc")


def communicate_or_kill(
    proc: subprocess.Popen[bytes], timeout_s: float
) -> tuple[bytes, bytes, bool]:
    """A child's stdout and stderr once it ends; one still running after ``timeout_s`` is
    killed first and its output so far read (the third value: it was killed)."""
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return out or b"", err or b"", True
    return out or b"", err or b"", False


def numeric_dirs(folder: Path) -> Iterator[int]:
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


def living_in_group(pgid: int) -> list[int]:
    """The processes of process group `pgid` that are not zombies: a killed child whose parent
    had already ended stays in its group as a zombie until init reaps it, which some inits
    (a VM's) do only every second or two."""
    found = []
    for pid in numeric_dirs(PROC):
        fields = _stat_fields(pid)
        if fields is not None and len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            found.append(pid)
    return found


def pid_alive(pid: int) -> bool:
    """A process with this pid exists (someone else's too)."""
    if pid <= 0:  # 0 and -N name process groups, not a process
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    except (OverflowError, ValueError):  # past the kernel's pids
        return False
    return True


def left_by_the_dead(folder: Path, pattern: str) -> list[Path]:
    """The folders in `folder` (not links) whose name fullmatches `pattern`, its first group
    the pid of the process that made them, that process gone: what a SIGKILL left."""
    found = []
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            named = re.fullmatch(pattern, entry.name)
            with contextlib.suppress(OSError):
                if (
                    named
                    and not pid_alive(int(named.group(1)))
                    and stat.S_ISDIR(entry.lstat().st_mode)
                ):
                    found.append(entry)
    return found


def parent_of(pid: int) -> int | None:
    """The parent pid of a process; None when it is gone."""
    fields = _stat_fields(pid)
    return (
        int(fields[1]) if fields is not None and len(fields) > 1 and fields[1].isdigit() else None
    )


def start_ticks(pid: int) -> int | None:
    """When the process started (clock ticks since boot), None when it is gone."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields is not None and len(fields) > 19 else None


def tgid_of(pid: int) -> int | None:
    """The process (thread group) a thread id belongs to; None when it is gone."""
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("Tgid:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def process_tree_pids(root: int, *, threads: bool = False) -> list[int]:
    """`root` and every process descending from it (by parent pid), with `threads` also their
    thread ids. This is what the load is: fio calls setsid() in each job process it forks, so
    its jobs are NOT in fio's process group (nor its session); only the parent links hold."""
    children: dict[int, list[int]] = {}
    for pid in numeric_dirs(PROC):
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
            found.extend(t for t in numeric_dirs(PROC / str(pid) / "task") if t != pid)
    return sorted(set(found))


def processes_of(pids: Collection[int]) -> list[int]:
    """Thread ids -> the distinct processes they belong to (gone ones dropped), sorted."""
    result = {tgid for tgid in (tgid_of(p) for p in pids) if tgid is not None}
    return sorted(result)


def command_bytes(pid: int) -> bytes | None:
    """The argv as the kernel keeps it: NUL between the words (none after the last)."""
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().rstrip(b"\0")
    except OSError:
        return None


def command_line(pid: int) -> str | None:
    raw = command_bytes(pid)
    return None if raw is None else raw.replace(b"\0", b" ").decode(errors="replace")


def cwd_of(pid: int) -> Path | None:
    """The process's working directory; None when it is gone (or not ours to see)."""
    try:
        return Path(os.readlink(PROC / str(pid) / "cwd"))
    except OSError:
        return None


def executable_name(pid: int) -> str | None:
    """The file name of the program the process runs (`fio`); None when it is gone."""
    try:
        return Path(os.readlink(PROC / str(pid) / "exe")).name
    except OSError:
        return None


def command_name(pid: int) -> str | None:
    try:
        return (PROC / str(pid) / "comm").read_text().rstrip("\n")
    except OSError:
        return None


def matching(
    found: Callable[[str], bool], *, full: bool = False, exclude: Collection[int] = ()
) -> list[int]:
    """Processes whose name (as pgrep) or, with `full`, whole command line (pgrep -f) `found`
    says yes to, sorted. This process is never listed."""
    skip = {os.getpid(), *exclude}
    hits = []
    for pid in numeric_dirs(PROC):
        if pid in skip:
            continue
        text = command_line(pid) if full else command_name(pid)
        if text and found(text):
            hits.append(pid)
    return sorted(hits)


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
