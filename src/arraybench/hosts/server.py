"""fio servers: host specs, the per-host check, and starting/stopping servers over SSH.

Security: fio's server protocol has NO authentication and no encryption. Anyone who can open
a TCP connection to a server's port can run any fio job as the server's user, and a job can
run shell commands (``exec_prerun``/``exec_postrun``) and write to any device that user may
write. So a server is always bound to one given address (``--server=ip:ADDR,PORT``), never to
all interfaces (0.0.0.0 / ::) by default; run it only on a trusted storage or management
network, for the duration of the campaign, as an unprivileged user where the targets allow it.

fio also refuses a client of another protocol version, so the controller and every host need
the same fio release (``check_host`` compares them).
"""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from arraybench.engines.fio.features import protocol_of, releases_of_protocol
from arraybench.engines.fio.runner import fio_binary
from arraybench.engines.fio.values import argv_value
from arraybench.errors import ArraybenchError
from arraybench.hosts.address import check_address, check_ssh_user
from arraybench.hosts.clock import measure_clock_offset
from arraybench.hosts.probe import probe_version, run_client_job
from arraybench.hosts.remote_safety import (
    judge,
    parse_facts,
    resolved_paths,
    target_command,
    unchecked_targets,
)
from arraybench.system import sshmux

DEFAULT_PORT = 8765  # fio's own default server port
CONNECT_TIMEOUT_S = 3.0
NO_AUTH_WARNING = (
    "fio's server protocol has no authentication: anyone who reaches a server's port can run "
    "jobs (and shell commands) as its user; keep servers on a trusted network, bound to one "
    "address, and stop them after the campaign"
)
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class HostError(ArraybenchError):
    """A host is unreachable, misconfigured, or its fio server cannot be started/stopped."""

    exit_code = 1


@dataclass(frozen=True)
class SshSpec:
    """How to reach a host over SSH (key-based: BatchMode, never a password prompt)."""

    user: str | None = None
    host: str | None = None  # SSH address when it differs from the fio address
    port: int = 22
    identity_file: Path | None = None
    options: tuple[str, ...] = ()  # extra "-o" values, e.g. "UserKnownHostsFile=..."
    fio: str = "fio"  # fio on the remote PATH, or its full path
    pidfile: str | None = None  # default: arraybench-fio-<port>.pid in the remote home


@dataclass(frozen=True)
class HostSpec:
    """One fio server: ``name`` names its results folder; ``address`` is what fio connects to."""

    name: str
    address: str
    port: int = DEFAULT_PORT
    ssh: SshSpec | None = None

    def __post_init__(self) -> None:
        if not _NAME_RE.match(self.name):
            raise HostError(
                f"host name {self.name!r} is not usable as a folder name",
                "use letters, digits, '.', '_' or '-' (at most 64)",
            )
        if not 0 < self.port < 65536:
            raise HostError(f"host {self.name}: port {self.port} is out of range", "use 1-65535")
        refuse_wildcard(self.address, f"host {self.name}")

    @property
    def endpoint(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{host}:{self.port}"


@dataclass(frozen=True)
class TargetSafety:
    """What the target check must judge: which phase writes each host's targets, and what
    the plan consents to destroy. `writers` None: every target is taken as written."""

    writers: Mapping[str, Mapping[str, str]] | None = None  # host -> target path -> phase
    allow_destroy: tuple[str, ...] = ()

    def of(self, host: str) -> Mapping[str, str] | None:
        return None if self.writers is None else self.writers.get(host, {})


@dataclass
class HostCheck:
    """What ``arraybench hosts check`` reports for one host."""

    name: str
    reachable: bool
    fio_version: str | None = None
    version_matches: bool = False
    clock_offset_ms: float | None = None  # host clock - controller clock
    clock_uncertainty_ms: float | None = None
    problems: list[str] = field(default_factory=list)
    resolved: dict[str, str] = field(default_factory=dict)  # target -> its path, links followed

    @property
    def ok(self) -> bool:
        return not self.problems


# --------------------------------------------------------------------------- addresses


def refuse_wildcard(address: str, what: str) -> None:
    """fio servers are bound to one address: any spelling of 0.0.0.0 / :: (or a name resolving
    to one) would expose them everywhere (see hosts.address)."""
    check_address(address, what)


def tcp_problem(address: str, port: int, timeout_s: float = CONNECT_TIMEOUT_S) -> str | None:
    """None when a TCP connection to address:port opens, else why not (one line)."""
    try:
        with socket.create_connection((address, port), timeout=timeout_s):
            return None
    except TimeoutError:
        reason = f"no answer within {timeout_s:g} s"
    except OSError as exc:
        reason = exc.strerror or str(exc)
    return f"cannot connect to the fio server port {address}:{port} ({reason})"


def wait_for_port(address: str, port: int, timeout_s: float, *, open_: bool = True) -> bool:
    """Poll until the port accepts connections (``open_``) or refuses them; True on success."""
    deadline = time.monotonic() + timeout_s
    while True:
        is_open = tcp_problem(address, port, timeout_s=1.0) is None
        if is_open == open_:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


# --------------------------------------------------------------------------- SSH lifecycle


def server_argument(address: str, port: int) -> str:
    """``--server=ip:ADDR,PORT`` (``ip6:`` for IPv6), refusing the wildcard addresses."""
    refuse_wildcard(address, "fio server")
    family = "ip6" if ":" in address else "ip"
    return f"--server={family}:{address},{port}"


def _ssh(spec: HostSpec) -> SshSpec:
    if spec.ssh is None:
        raise HostError(
            f"host {spec.name} has no SSH settings",
            "start `fio --server` on it yourself, or give its ssh user and key in the plan",
        )
    return spec.ssh


def remote_pidfile(spec: HostSpec) -> str:
    return _ssh(spec).pidfile or f"arraybench-fio-{spec.port}.pid"


def ssh_destination(spec: HostSpec) -> str:
    """``user@host`` for ssh, refused when ssh could read it as an option (a leading '-') or
    as another destination; it is always given after ``--`` as well."""
    ssh = _ssh(spec)
    host = check_address(ssh.host, f"host {spec.name}: ssh.host") if ssh.host else spec.address
    if ssh.user is None:
        return host
    return f"{check_ssh_user(ssh.user, f'host {spec.name}')}@{host}"


def ssh_command(spec: HostSpec, remote_command: str) -> list[str]:
    """``ssh -o BatchMode=yes ... -- user@host 'remote command'`` (one string: the remote shell
    parses it, so every part is quoted by the callers). No plan value stands where ssh reads an
    option: the port is a number, the key file follows ``-i``, and ``--`` ends the options
    before the destination."""
    ssh = _ssh(spec)
    where = f"host {spec.name}"
    command = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-p", str(int(ssh.port))]
    if ssh.identity_file is not None:
        command += ["-i", argv_value(str(ssh.identity_file), f"{where}: ssh.key")]
    for option in ssh.options:
        command += ["-o", argv_value(option, f"{where}: ssh option")]
    command += sshmux.ssh_options()  # after the plan's: ssh takes an option's first value
    if "\0" in remote_command:  # the remote script has line breaks; only NUL cannot pass
        raise HostError(f"{where}: the remote command contains a NUL byte", None)
    if remote_command.startswith(("-", "+")):
        # sshd runs `$SHELL -c COMMAND`: a first word like --version or +O would be the shell's
        # own option (`bash: --: invalid option`); after a space it is the command it is
        remote_command = " " + remote_command
    return [*command, "--", ssh_destination(spec), remote_command]


def start_server_command(spec: HostSpec) -> list[str]:
    """ssh ... fio --server=ip:ADDR,PORT --daemonize=PIDFILE (bound to ADDR only)."""
    fio = _ssh(spec).fio
    remote = [fio, server_argument(spec.address, spec.port), f"--daemonize={remote_pidfile(spec)}"]
    return ssh_command(spec, shlex.join(remote))


def stop_server_command(spec: HostSpec) -> list[str]:
    """ssh ... kill the daemon named in the pidfile, then remove the pidfile."""
    pidfile = shlex.quote(remote_pidfile(spec))
    return ssh_command(spec, f'kill "$(cat {pidfile})" && rm -f {pidfile}')


def _run_ssh(command: list[str], spec: HostSpec, doing: str, timeout_s: float) -> None:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise HostError(
            f"host {spec.name}: ssh did not finish {doing} within {timeout_s:g} s",
            "check the SSH address and that key login works (ssh -o BatchMode=yes)",
        ) from exc
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip() or "no message").splitlines()[-1]
        raise HostError(
            f"host {spec.name}: {doing} over ssh failed (exit {done.returncode}): {said}",
            f"command: {shlex.join(command)}",
        )


def start_server_over_ssh(spec: HostSpec, timeout_s: float = 30.0) -> None:
    """Start a daemonized fio server bound to spec.address and wait until its port answers."""
    if tcp_problem(spec.address, spec.port, timeout_s=1.0) is None:
        raise HostError(
            f"host {spec.name}: something already listens on {spec.endpoint}",
            "stop it, or declare the host as 'fio server already running' with that port",
        )
    _run_ssh(start_server_command(spec), spec, "starting fio --server", timeout_s)
    if not wait_for_port(spec.address, spec.port, timeout_s):
        raise HostError(
            f"host {spec.name}: fio --server was started but {spec.endpoint} does not answer",
            "is the address configured on that host, and the port free and not firewalled?",
        )


def stop_server_over_ssh(spec: HostSpec, timeout_s: float = 30.0) -> None:
    """Stop the server started by start_server_over_ssh and wait until its port closes."""
    _run_ssh(stop_server_command(spec), spec, "stopping fio --server", timeout_s)
    if not wait_for_port(spec.address, spec.port, timeout_s, open_=False):
        raise HostError(
            f"host {spec.name}: fio --server was told to stop but {spec.endpoint} still answers",
            f"stop it by hand (pidfile {remote_pidfile(spec)} in the SSH user's home)",
        )


# --------------------------------------------------------------------------- checks


def check_host(
    spec: HostSpec,
    controller_fio_version: str,
    targets: Sequence[str] = (),
    *,
    binary: str | None = None,
    timeout_s: float = 20.0,
    safety: TargetSafety | None = None,
) -> HostCheck:
    """Reachability, the server's fio version, the clock offset and the targets of one host.

    Every problem is one line in ``problems``; an unreachable host gets exactly one.
    """
    check = HostCheck(name=spec.name, reachable=False)
    problem = tcp_problem(spec.address, spec.port)
    if problem is not None:
        check.problems.append(f"{spec.name}: {problem}; is `fio --server` running there?")
        return check
    check.reachable = True
    binary = binary or fio_binary()
    _check_clock_and_version(check, spec, controller_fio_version, binary, timeout_s)
    if targets:
        problems, check.resolved = _target_problems(spec, list(targets), timeout_s,
                                                    safety or TargetSafety())  # fmt: skip
        check.problems += problems
    return check


def _check_clock_and_version(
    check: HostCheck, spec: HostSpec, controller_version: str, binary: str, timeout_s: float
) -> None:
    """One fio run: its probe line gives the version, its ping-pong job the clock offset."""
    clock = measure_clock_offset(binary, spec.address, spec.port, timeout_s)
    check.fio_version = probe_version(clock.output)
    _judge_version(check, spec, controller_version, clock.output)
    if check.fio_version is None:
        return
    if clock.estimate is None:
        check.problems.append(f"{spec.name}: clock offset not measured: {clock.problem}")
        return
    check.clock_offset_ms = clock.estimate.offset_ms
    check.clock_uncertainty_ms = clock.estimate.uncertainty_ms
    if not clock.estimate.consistent:
        check.problems.append(
            f"{spec.name}: the clock bounds contradict each other (did a clock step?): "
            f"offset {clock.estimate.offset_ms:+.1f} ms is unreliable"
        )


_OTHER_PROTOCOL_RE = re.compile(r"bad server cmd version (\d+)")
PROBE_JOB = "[arraybench-probe]\nioengine=null\nsize=4k\n"  # no file, no I/O: the probe only


def _judge_version(
    check: HostCheck, spec: HostSpec, controller_version: str, output: str = ""
) -> None:
    problem = version_problem(spec, check.fio_version, controller_version, output)
    check.version_matches = problem is None
    if problem is not None:
        check.problems.append(problem)


def version_problem(
    spec: HostSpec, host_version: str | None, controller_version: str, output: str
) -> str | None:
    """One line naming both fio releases when the host's server is not the controller's
    (`host_version`: from its probe answer; None: no answer, then fio's client `output` may
    name the server's protocol, which names its release: `features.SERVER_PROTOCOL`)."""
    fix = ("install the same fio release on both, or name the host's release on the "
           "controller with --fio PATH (ARRAYBENCH_FIO)")  # fmt: skip
    if host_version is None:
        other = _OTHER_PROTOCOL_RE.search(output)
        if other is None:
            return (f"{spec.name}: {spec.endpoint} accepts connections but gave no fio probe "
                    f"answer: not a fio server, or a fio of another protocol version "
                    f"(controller: {controller_version})")  # fmt: skip
        ours = protocol_of(controller_version)
        return (f"{spec.name}: fio server protocol mismatch: "
                f"{releases_of_protocol(int(other.group(1)))} (protocol {other.group(1)}) on "
                f"the host, {controller_version}{f' ({ours})' if ours else ''} on the "
                f"controller: {fix}")  # fmt: skip
    if host_version == controller_version:
        return None
    return (f"{spec.name}: fio {host_version} on the host, {controller_version} on the "
            f"controller: {fix}")  # fmt: skip


def probe_fio_release(
    spec: HostSpec, controller_version: str, binary: str, timeout_s: float = 5.0
) -> tuple[str | None, str | None]:
    """(the host's fio version, a mismatch line) from one null job through fio's client; (None,
    None) when no fio answers there, not even with its protocol (the run's host check says
    why, `check_host`): only a release known to differ is refused before the run."""
    if tcp_problem(spec.address, spec.port, min(CONNECT_TIMEOUT_S, 1.0)) is not None:
        return None, None
    with tempfile.TemporaryDirectory(prefix="arraybench-probe-") as tmp:
        run = run_client_job(binary, spec.address, spec.port, PROBE_JOB, Path(tmp), timeout_s)
    version = probe_version(run.output)
    if version is None and not _OTHER_PROTOCOL_RE.search(run.output):
        return None, None
    return version, version_problem(spec, version, controller_version, run.output)


def _target_problems(
    spec: HostSpec, targets: list[str], timeout_s: float, safety: TargetSafety
) -> tuple[list[str], dict[str, str]]:
    """Targets missing, unusable or unsafe to write on the host, seen over SSH (the local
    safety rule, see remote_safety), and each absolute target's resolved path there.

    Not through fio: a fio job, even a read, lays out a regular file smaller than its size
    (unlinking it first: measured with fio 3.33), so it cannot look at a target safely.
    """
    if spec.ssh is None:
        return [
            f"{spec.name}: targets not checked: no SSH access to this host (fio's own protocol "
            "cannot look at a file without risking it)",
            *unchecked_targets(spec.name, targets, writers=safety.of(spec.name),
                               allow_destroy=safety.allow_destroy),
        ], {}  # fmt: skip
    command = ssh_command(spec, target_command(targets))
    writers = safety.of(spec.name)
    # fail closed: a check that could not run refuses every target the run writes
    refused = "; refused: nothing written could be checked" if writers is None or writers else ""
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired:
        return [f"{spec.name}: the target check over ssh ran past {timeout_s:g} s{refused}"], {}
    if done.returncode != 0:
        said = (done.stderr.strip() or "no message").splitlines()[-1]
        return [f"{spec.name}: target check over ssh failed: {said}{refused}"], {}
    facts = parse_facts(done.stdout, targets)
    problems = judge(spec.name, facts, writers=writers, allow_destroy=safety.allow_destroy)
    return problems, resolved_paths(facts)


def check_hosts(
    specs: Sequence[HostSpec],
    controller_fio_version: str,
    targets: dict[str, list[str]] | None = None,
    *,
    binary: str | None = None,
    safety: TargetSafety | None = None,
) -> list[HostCheck]:
    """check_host on every host at once (each check takes about 1.5 s of fio start-up)."""
    binary = binary or fio_binary()
    targets = targets or {}
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(specs)))) as pool:
        futures = [
            pool.submit(
                check_host,
                s,
                controller_fio_version,
                targets.get(s.name, []),
                binary=binary,
                safety=safety,
            )
            for s in specs
        ]
        return [f.result() for f in futures]
