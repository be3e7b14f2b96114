"""Throw-away test hosts: network namespaces on this machine, each with a real fio server.

``TestHosts(n, workdir)`` (root only) creates namespaces ``abh-<pid>-<i>``, each joined to the
root namespace by its own veth pair (root side ``abv<pid>-<i>``) on a /30 of a 10.201.X.0/24
that no interface on the machine uses: root side 10.201.X.(4i+1), host side 10.201.X.(4i+2).
Each namespace runs ``fio --server=ip:<host address>,<port>`` bound to its own address only,
in its own working folder. Everything is removed on exit, even after a failure;
``cleanup_stale()`` removes what a killed run left (namespaces and links of dead pids).

For failure tests: ``kill_server(i)`` SIGKILLs every process in the namespace (the server and
the per-connection and per-job processes it forked: killing the listening server alone leaves
a running job alive), ``cut_link(i)`` sets the host's link down (a hang, not a disconnect).
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType

import pytest

from arraybench.engines.fio.runner import fio_binary
from arraybench.errors import ArraybenchError
from arraybench.hosts.server import (
    DEFAULT_PORT,
    HostError,
    HostSpec,
    SshSpec,
    tcp_problem,
)
from tests.loopback_hosts import await_server, launch_server

NS_PREFIX = "abh"
LINK_PREFIX = "abv"
HOST_IFACE = "eth0"
SUBNET_FIRST = "10.201"
MAX_HOSTS = 63  # /30 blocks in one /24
_NS_RE = re.compile(rf"^{NS_PREFIX}-(\d+)-(\d+)$")
_LINK_RE = re.compile(rf"^{LINK_PREFIX}(\d+)-(\d+)$")
_counter = itertools.count()  # host numbers unique within this process
SSHD = shutil.which("sshd") or "/usr/sbin/sshd"

# The marks of a module whose tests run on network-namespace hosts (and, with sshd, on hosts
# reached over SSH): one list, so every such module skips for the same reasons.
needs_netns = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="iproute2 (ip) missing"),
]
needs_sshd = pytest.mark.skipif(not Path(SSHD).exists(), reason="openssh-server is not installed")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
    if check and done.returncode != 0:
        raise HostError(f"ip {' '.join(args)} failed: {done.stderr.strip()}", "are you root?")
    return done


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def namespace_pids(namespace: str) -> list[int]:
    done = _ip("netns", "pids", namespace, check=False)
    return [int(p) for p in done.stdout.split() if p.isdigit()]


def namespace_processes(namespaces: list[str], marker: bytes) -> list[int]:
    """The processes in `namespaces` whose command line holds `marker` (e.g. the writers a
    test started on its hosts)."""
    found = []
    for namespace in namespaces:
        for pid in namespace_pids(namespace):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if marker in cmdline:
                found.append(pid)
    return found


def _kill_namespace(namespace: str) -> None:
    for pid in namespace_pids(namespace):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def list_namespaces() -> list[str]:
    """Every named network namespace (``ip netns list`` prints "NAME (id: N)")."""
    lines = _ip("netns", "list", check=False).stdout.splitlines()
    return [line.split()[0] for line in lines if line.strip()]


def cleanup_stale() -> list[str]:
    """Remove namespaces and root-side links left by runs whose process is gone."""
    removed = []
    for name in list_namespaces():
        match = _NS_RE.match(name)
        if match and not _pid_alive(int(match.group(1))):
            _kill_namespace(name)
            _ip("netns", "del", name, check=False)
            removed.append(name)
    for line in _ip("-o", "link", "show", check=False).stdout.splitlines():
        link = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        match = _LINK_RE.match(link)
        if match and not _pid_alive(int(match.group(1))):
            _ip("link", "del", link, check=False)
            removed.append(link)
    return removed


def free_subnet() -> int:
    """A third octet X such that nothing on this machine uses 10.201.X.0/24."""
    used = _ip("-4", "-o", "addr", "show", check=False).stdout
    used += _ip("-4", "route", "show", "table", "all", check=False).stdout
    taken = {int(m) for m in re.findall(rf"{re.escape(SUBNET_FIRST)}\.(\d+)\.", used)}
    for octet in range(1 + os.getpid() % 200, 255):
        if octet not in taken:
            return octet
    for octet in range(1, 255):
        if octet not in taken:
            return octet
    raise HostError(f"no free {SUBNET_FIRST}.X.0/24 for test hosts", "run cleanup_stale()")


class TestHosts:
    """N fio servers in network namespaces (a context manager; root only)."""

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
        self.namespaces: list[str] = []
        self.links: list[str] = []
        self.hosts: list[HostSpec] = []
        self.controller_addresses: list[str] = []
        self._servers: dict[int, subprocess.Popen[bytes]] = {}
        self._sshd: dict[int, subprocess.Popen[bytes]] = {}

    def plan_hosts(self, size: str = "16m") -> str:
        """The plan's `hosts:` entries (YAML lines), each with one scratch file of `size`,
        `t-NAME.dat`, in its server's folder."""
        return "".join(
            f"  - {{name: {h.name}, address: {h.address}, port: {h.port}, "
            f"targets: [{{path: t-{h.name}.dat, size: {size}}}]}}\n"
            for h in self.hosts
        )

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> TestHosts:
        try:
            with _subnet_lock():
                octet = free_subnet()
                for i in range(self.count):
                    self._add_host(i, octet, next(_counter))
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

    def _add_host(self, i: int, octet: int, number: int) -> None:
        pid = os.getpid()
        namespace, link = f"{NS_PREFIX}-{pid}-{number}", f"{LINK_PREFIX}{pid}-{number}"
        root_addr = f"{SUBNET_FIRST}.{octet}.{4 * i + 1}"
        host_addr = f"{SUBNET_FIRST}.{octet}.{4 * i + 2}"
        _ip("netns", "add", namespace)
        self.namespaces.append(namespace)
        _ip("link", "add", link, "type", "veth", "peer", "name", HOST_IFACE, "netns", namespace)
        self.links.append(link)
        _ip("addr", "add", f"{root_addr}/30", "dev", link)
        _ip("link", "set", link, "up")
        _ip("-n", namespace, "addr", "add", f"{host_addr}/30", "dev", HOST_IFACE)
        _ip("-n", namespace, "link", "set", HOST_IFACE, "up")
        _ip("-n", namespace, "link", "set", "lo", "up")
        self.controller_addresses.append(root_addr)
        self.hosts.append(HostSpec(name=f"h{i}", address=host_addr, port=self.port))

    def close(self) -> None:
        """Kill every process in the namespaces, delete them and their links."""
        for namespace in self.namespaces:
            _kill_namespace(namespace)
        for proc in [*self._servers.values(), *self._sshd.values()]:
            _reap(proc)
        self._servers.clear()
        self._sshd.clear()
        for namespace in self.namespaces:
            _ip("netns", "del", namespace, check=False)
        existing = _ip("-o", "link", "show", check=False).stdout
        for link in self.links:
            if re.search(rf"\b{re.escape(link)}[@:]", existing):
                _ip("link", "del", link, check=False)
        self.namespaces, self.links = [], []

    # ------------------------------------------------------------------ servers

    def host_folder(self, i: int) -> Path:
        """The fio server's working directory (relative file names in jobs land here)."""
        return self.workdir / self.hosts[i].name

    def start_server(self, i: int, timeout_s: float = 10.0) -> None:
        host = self.hosts[i]
        folder = self.host_folder(i)
        folder.mkdir(parents=True, exist_ok=True)
        command = ["ip", "netns", "exec", self.namespaces[i], self.binary]
        command.append(f"--server=ip:{host.address},{host.port}")
        self._servers[i] = launch_server(command, folder)
        await_server(host, folder, timeout_s, "test host")

    def pids(self, i: int) -> list[int]:
        return namespace_pids(self.namespaces[i])

    def job_running(self, i: int) -> bool:
        """True once the server runs a job: more than the server and its connection process."""
        return len(self.pids(i)) > 2

    def kill_server(self, i: int) -> None:
        """SIGKILL the host's fio server and every process it forked (connections, jobs)."""
        _kill_namespace(self.namespaces[i])
        proc = self._servers.pop(i, None)
        if proc is not None:
            _reap(proc)

    def cut_link(self, i: int) -> None:
        """Take the host's network link down: its TCP peers hang instead of seeing a reset."""
        _ip("-n", self.namespaces[i], "link", "set", HOST_IFACE, "down")

    def restore_link(self, i: int) -> None:
        _ip("-n", self.namespaces[i], "link", "set", HOST_IFACE, "up")

    # ------------------------------------------------------------------ ssh

    def start_sshd(self, i: int, folder: Path, timeout_s: float = 10.0) -> SshSpec:
        """A real sshd inside host i's network namespace (this machine's mounts: /sys and the
        cgroup tree as a real host sees its own), bound to its address, port 22, key login for
        root only (keys generated in ``folder``). Returns the SshSpec to reach it; the daemon
        dies with the namespace (``close``/``kill_server``) or by ``stop_sshd(i)``."""
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("hostkey", "idkey"):
            if not (folder / name).exists():
                subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                                str(folder / name)], check=True, capture_output=True)  # fmt: skip
        (folder / "authorized_keys").write_text((folder / "idkey.pub").read_text())
        address = self.hosts[i].address
        known = f"{address} {(folder / 'hostkey.pub').read_text()}"
        (folder / "known_hosts").write_text(known)
        config = folder / "sshd_config"
        # SHLVL=1: bash run by sshd sources the user's ~/.bashrc only at level 1; this machine's
        # (a developer's, pyenv's init: 0.1 CPU-s and 0.1 s per command) is not a host's
        config.write_text(
            f"ListenAddress {address}\nPort 22\nHostKey {folder / 'hostkey'}\n"
            f"AuthorizedKeysFile {folder / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            f"StrictModes no\nPidFile {folder / 'sshd.pid'}\nSetEnv SHLVL=1\n"
        )
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation directory
        # nsenter, not `ip netns exec`: that one also gives the process a mount namespace with a
        # fresh /sys holding no cgroup mounts, unlike a real host; the SSH sessions (and the
        # fio servers started over them) must see the machine's /sys and cgroup tree
        netns = f"--net=/run/netns/{self.namespaces[i]}"
        command = ["nsenter", netns, SSHD, "-D", "-e", "-f", str(config)]
        with open(folder / "sshd.log", "ab") as log:
            self._sshd[i] = subprocess.Popen(command, stdout=log, stderr=log,
                                             stdin=subprocess.DEVNULL)  # fmt: skip
        if not wait_until(lambda: tcp_problem(address, 22, 0.5) is None, timeout_s):
            said = (folder / "sshd.log").read_text(errors="replace").strip()
            raise HostError(f"test host {self.hosts[i].name}: sshd did not start: {said}")
        return SshSpec(
            user="root",
            identity_file=folder / "idkey",
            options=(f"UserKnownHostsFile={folder / 'known_hosts'}", "StrictHostKeyChecking=yes"),
            pidfile=str(folder / "fio-server.pid"),
        )

    def stop_sshd(self, i: int) -> None:
        """Kill host i's sshd (a host whose SSH is down); its fio server keeps running."""
        proc = self._sshd.pop(i, None)
        if proc is not None:
            proc.kill()
            _reap(proc)


@contextlib.contextmanager
def _subnet_lock() -> Iterator[None]:
    """Held from choosing a free subnet until its addresses are up: two test processes (pytest
    -n 2 workers) choosing at once could otherwise both take the same one."""
    with open(Path(tempfile.gettempdir()) / "arraybench-test-hosts.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _reap(proc: subprocess.Popen[bytes]) -> None:
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def our_namespaces() -> list[str]:
    """Namespaces this process created and has not removed yet (for tests)."""
    prefix = f"{NS_PREFIX}-{os.getpid()}-"
    return [name for name in list_namespaces() if name.startswith(prefix)]


def wait_until(predicate: Callable[[], bool], timeout_s: float, step_s: float = 0.02) -> bool:
    """Poll ``predicate`` until it returns True or the time is up."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step_s)
    return False


def started_or_skip(
    count: int, workdir: Path, *, port: int = DEFAULT_PORT, binary: str | None = None
) -> TestHosts:
    """`count` hosts up and running (their servers `binary`, default the controller's fio),
    or the calling test skipped with the reason (a kernel or a sandbox without network
    namespaces). The caller closes them."""
    hosts = TestHosts(count, workdir, port=port, binary=binary)
    try:
        hosts.__enter__()
    except ArraybenchError as exc:
        pytest.skip(f"cannot create network namespaces here: {exc.one_line()}")
    return hosts


@contextlib.contextmanager
def running_hosts(
    count: int, workdir: Path, *, port: int, ssh: bool = False, binary: str | None = None
) -> Iterator[TestHosts]:
    """A module fixture's hosts: what a killed run left removed first, `count` fio servers up
    (or the test skipped), with ``ssh`` an sshd on each (keys in ``workdir/ssh-h<i>``, see
    `ssh_hosts_yaml`); all closed on exit, also when a start fails."""
    cleanup_stale()
    hosts = started_or_skip(count, workdir, port=port, binary=binary)
    try:
        if ssh:
            for i in range(count):
                hosts.start_sshd(i, workdir / f"ssh-h{i}")
        yield hosts
    finally:
        hosts.close()


def ssh_hosts_yaml(
    hosts: TestHosts, *, fio_port: int, journals: Path, target: Callable[[HostSpec], str]
) -> str:
    """The plan's `hosts:` entries for hosts started by `running_hosts(ssh=True)`: key login,
    this venv's Python on the host (the hosts share this machine's files), integrity journals
    in ``journals``, fio servers on ``fio_port`` + host number, an 8 MiB target each."""
    declared = ""
    for i, h in enumerate(hosts.hosts):
        keys = hosts.workdir / f"ssh-h{i}"
        declared += (
            f"  - {{name: {h.name}, address: {h.address}, port: {fio_port + i},\n"
            f"     ssh: {{user: root, key: {keys / 'idkey'}, known_hosts: {keys / 'known_hosts'},"
            f" python: {sys.executable}, journals: {journals}}},\n"
            f"     targets: [{{path: {target(h)}, size: 8m}}]}}\n"
        )
    return declared
