"""Throw-away test hosts without network namespaces: N real fio servers on loopback addresses.

``LoopbackHosts(n, workdir, port=P)`` starts ``fio --server=ip:127.0.0.<i + 1>,<P + i>`` for
host i in its own working folder ``workdir/h<i>`` (relative file names in jobs land there),
each in its own process session. For a machine where ``TestHosts`` (tests/netns.py) cannot
run: no root, no iproute2, or a sandbox without network namespaces (gVisor).

Each host its own address, not only its own port: fio's client names the logs it receives
``<log>.<address>`` and its JSON gives each job's host by address alone, so arraybench refuses
two hosts on one address (hosts/client.py). Linux routes all of 127.0.0.0/8 to ``lo``, so
127.0.0.2 ... need no set-up. The hosts share one network stack: a test that cuts one host's
link cannot run on them; a benchmark that only needs N servers can. Every server (and the
processes it forked) is killed and reaped on exit, even after a failure. No pytest import:
benchmarks/ load this on machines without it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path
from types import TracebackType

from arraybench.engines.fio.runner import fio_binary
from arraybench.hosts.server import DEFAULT_PORT, HostError, HostSpec, wait_for_port
from arraybench.system.procs import PROC, command_bytes, numeric_dirs, process_tree_pids
from arraybench.system.signals import signals_held

MAX_HOSTS = 254  # 127.0.0.1 ... 127.0.0.254


def processes_running(cmdline: bytes) -> list[int]:
    """The living processes whose command line is `cmdline` (NUL between the words, as
    system/procs.py `command_bytes` reads it); a zombie's is empty."""
    return [pid for pid in numeric_dirs(PROC) if command_bytes(pid) == cmdline]


def frozen_tree(root: int) -> list[int]:
    """SIGSTOP `root` and every process below it, looking again until no new one appears."""
    stopped: list[int] = []
    while new := [p for p in process_tree_pids(root) if p not in stopped]:
        for pid in new:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGSTOP)
        stopped += new
    return stopped


def launch_server(command: list[str], folder: Path) -> subprocess.Popen[bytes]:
    """A fio server (or the command that runs one) in `folder`, its own session, its output
    appended to `folder`/server.log. Shared with tests/netns.py's hosts."""
    with open(folder / "server.log", "ab") as log:
        return subprocess.Popen(
            command, cwd=folder, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True,
        )  # fmt: skip


def await_server(host: HostSpec, folder: Path, timeout_s: float, who: str) -> None:
    """HostError with the server's own words when its port does not open in `timeout_s`."""
    if not wait_for_port(host.address, host.port, timeout_s):
        said = (folder / "server.log").read_text(errors="replace").strip()
        raise HostError(f"{who} {host.name}: fio --server did not start: {said}")


def loopback_address(i: int) -> str:
    return f"127.0.0.{i + 1}"


class LoopbackHosts:
    """N fio servers on 127.0.0.1 ... 127.0.0.N, one port each (a context manager; any user)."""

    __test__ = False  # not a pytest test class

    def __init__(
        self, count: int, workdir: Path, *, port: int = DEFAULT_PORT, binary: str | None = None
    ) -> None:
        if not 0 < count <= MAX_HOSTS:
            raise ValueError(f"count must be within 1..{MAX_HOSTS}, got {count}")
        self.count = count
        self.workdir = workdir
        self.port = port
        self.binary = binary or fio_binary()
        self.hosts = [
            HostSpec(name=f"h{i}", address=loopback_address(i), port=port + i) for i in range(count)
        ]
        self._servers: dict[int, subprocess.Popen[bytes]] = {}

    def __enter__(self) -> LoopbackHosts:
        try:
            for i in range(self.count):
                self.start_server(i)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def host_folder(self, i: int) -> Path:
        """The fio server's working directory (relative file names in jobs land here)."""
        return self.workdir / self.hosts[i].name

    def start_server(self, i: int, timeout_s: float = 10.0) -> None:
        host = self.hosts[i]
        folder = self.host_folder(i)
        folder.mkdir(parents=True, exist_ok=True)
        command = [self.binary, f"--server=ip:{host.address},{host.port}"]
        # signals held from the fork until the server is recorded: close() kills only those
        with signals_held():
            self._servers[i] = launch_server(command, folder)
        await_server(host, folder, timeout_s, "loopback host")

    def kill_server(self, i: int) -> None:
        """SIGKILL host i's server and every process it forked, then reap the server."""
        proc = self._servers.pop(i, None)
        if proc is None:
            return
        # the server forks each connection and job into a session of its own, out of reach of
        # killpg: stop the whole tree first (a stopped process forks no more, and none is
        # orphaned to init while we look), then kill every process in it
        for pid in frozen_tree(proc.pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        # a fork under way while the tree was stopped ends after: its child, orphaned, escapes
        # the tree (seen when SIGTERM came during a point). Every forked process keeps the
        # server's command line, which names this host's own address and port: kill those
        # until none is left living (one in a system call dies when that returns)
        command = "\0".join(proc.args).encode()  # type: ignore[arg-type]
        deadline = time.monotonic() + 5
        while (left := processes_running(command)) and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)

    def close(self) -> None:
        """Kill every server; one that fails to die does not keep the others alive."""
        failed: BaseException | None = None
        for i in list(self._servers):
            try:
                self.kill_server(i)
            except BaseException as exc:
                failed = failed or exc
        if failed is not None:
            raise failed
