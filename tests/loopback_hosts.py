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
from pathlib import Path
from types import TracebackType

from arraybench.engines.fio.runner import fio_binary
from arraybench.hosts.server import DEFAULT_PORT, HostError, HostSpec, wait_for_port

MAX_HOSTS = 254  # 127.0.0.1 ... 127.0.0.254


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
        with open(folder / "server.log", "ab") as log:
            # its own session (process group): close() kills the group, which holds the
            # connection and job processes the server forks, not the server alone
            self._servers[i] = subprocess.Popen(
                command, cwd=folder, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True,
            )  # fmt: skip
        if not wait_for_port(host.address, host.port, timeout_s):
            said = (folder / "server.log").read_text(errors="replace").strip()
            raise HostError(f"loopback host {host.name}: fio --server did not start: {said}")

    def kill_server(self, i: int) -> None:
        """SIGKILL host i's server and every process of its group, then reap the server."""
        proc = self._servers.pop(i, None)
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    def close(self) -> None:
        for i in list(self._servers):
            self.kill_server(i)
