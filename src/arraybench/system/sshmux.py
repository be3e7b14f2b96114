"""One SSH connection per host for the ssh commands of one arraybench command (OpenSSH's
connection sharing: ControlMaster): a plain ssh costs a handshake each time (0.28 CPU-s and
0.36 s here against 0.13 CPU-s and 0.13 s over a shared connection), and a run makes dozens
(servers, provenance, samplers, events, integrity writers), so an event over SSH takes effect
sooner. Outside `shared_connections()` (a library caller) ssh connects each time as before.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from arraybench.system.procs import left_by_the_dead

# a shared connection idle this long closes itself: what a SIGKILLed controller leaves
PERSIST_S = 30
# a host that stops answering ends its shared connection (and the commands waiting on it)
# after ALIVE_S x ALIVE_COUNT seconds, as a new connection's ConnectTimeout would
ALIVE_S, ALIVE_COUNT = 5, 3
CLOSE_TIMEOUT_S = 5.0

PREFIX = "arraybench-ssh-"
SOCKET_NAME = 40  # ssh's %C: the SHA-1 of user, host and port in hex
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes; ssh adds a suffix while binding
RANDOM_NAME = 8  # the random part of a mkdtemp name
PLAIN_PATH = re.compile(r"[\w./+-]+")

_lock = threading.Lock()
_sharing = 0  # the `shared_connections` blocks entered (nested ones share the outermost's)
_folder: Path | None = None  # made by the first ssh command inside them


def ssh_options() -> list[str]:
    """The -o options that share connections, or [] outside `shared_connections()`. Given
    after the plan's own ssh options: ssh takes an option's first value, so a plan saying
    `ControlMaster=no` keeps its own choice."""
    global _folder
    with _lock:
        if _sharing and _folder is None:
            _folder = _new_folder()
        folder = _folder
    if folder is None:
        return []
    return [
        "-o", "ControlMaster=auto",
        "-o", f"ControlPath={folder}/%C",  # a hash of user, host and port: 40 characters
        "-o", f"ControlPersist={PERSIST_S}",
        "-o", f"ServerAliveInterval={ALIVE_S}",
        "-o", f"ServerAliveCountMax={ALIVE_COUNT}",
    ]  # fmt: skip


@contextlib.contextmanager
def shared_connections() -> Iterator[None]:
    """Share one connection per host inside the block (a command without ssh makes nothing);
    on leaving the outermost, every shared connection is closed and its folder removed."""
    global _sharing, _folder
    with _lock:
        _sharing += 1
    try:
        yield
    finally:
        with _lock:
            _sharing -= 1
            folder = None if _sharing else _folder
            if not _sharing:
                _folder = None
        if folder is not None:
            _close_all(folder)


def _new_folder() -> Path | None:
    """A private folder (0700) for the sockets, named by this process: a SIGKILLed command's
    is removed by the next command that makes one. None where the socket path would pass the
    kernel's limit for one or is not a plain path (ssh would refuse it): then ssh connects
    each time."""
    tmp = tempfile.gettempdir()
    named = f"{PREFIX}{os.getpid()}-{'x' * RANDOM_NAME}"  # as mkdtemp names it
    if len(tmp) + 1 + len(named) + 1 + SOCKET_NAME > MAX_SOCKET_PATH:
        return None
    if not PLAIN_PATH.fullmatch(tmp):  # ssh reads `-o ControlPath=...` as a config line:
        return None  # a space, quote or % (its tokens) in $TMPDIR would break every command
    for stale in left_by_the_dead(Path(tmp), rf"{re.escape(PREFIX)}(\d+)-\w+"):
        with contextlib.suppress(OSError):
            if stale.lstat().st_uid == os.getuid():
                shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=tmp))


def _close_all(folder: Path) -> None:
    """Ask each connection's master process to exit (its sessions with it), then remove the
    folder; a master already gone leaves only its socket file."""
    for socket in sorted(folder.iterdir()):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                ["ssh", "-o", f"ControlPath={socket}", "-O", "exit", "arraybench-host"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=CLOSE_TIMEOUT_S,
                check=False,
            )
    shutil.rmtree(folder, ignore_errors=True)
