"""The command line of one mdtest run: `mpirun ... mdtest ...`, an argv list, never a shell.

Every plan value reaching that argv passes `mdtest_arg` (the one gate): nothing is escaped,
a value mpirun or mdtest would read as something else is refused with a located line (exit
2). Measured with mdtest 4.0.0 and Open MPI 4.1.4:

* mdtest's `-d` takes several directories separated by `@` (`-d a@b` runs in `a` and `b`);
* a value starting with `-` is read as the next option by both programs' parsers;
* mpirun's `--host` list is split at `,` and a host's slot count follows `:`;
* the job file keeps one argument per line (`engine.py`): a line break or another control
  character cannot be carried, and a terminal would interpret some when printed back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from arraybench.errors import PlanError
from arraybench.plan.machines import Host

# mdtest's order of phases: directories, then files; create -> stat -> read -> remove
ALL_OPS = ("dir-create", "dir-stat", "dir-delete", "create", "stat", "read", "delete")
DIR_OPS = ("dir-create", "dir-stat", "dir-delete")
FILE_OPS = ("create", "stat", "read", "delete")
# the phase flag each operation needs (mdtest runs every phase when none is given)
_PHASE_FLAG = {"create": "-C", "stat": "-T", "read": "-E", "delete": "-r"}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_HINT = "rename it, or point a symlink with a plain name at it"


def mdtest_arg(value: str, where: str, refused: str = "") -> str:
    """`value` unchanged when mpirun and mdtest read exactly it as one argument; else
    PlanError naming `where`. `refused`: characters this argument's reader splits at (`@`
    for mdtest's -d, `,:` for mpirun's host list)."""
    if not value:
        raise PlanError(f"{where} is empty", "give a value")
    found = _CONTROL.search(value)
    if found:
        raise PlanError(f"{where} {value!r} contains control character {ord(found.group()):#04x}"
                        ", which mdtest's job file cannot carry", _HINT)  # fmt: skip
    if value.startswith("-"):
        raise PlanError(f"{where} {value!r} starts with '-', which mpirun and mdtest read as an "
                        "option", "give a path that does not start with '-' (./-name)")  # fmt: skip
    for char in refused:
        if char in value:
            raise PlanError(f"{where} {value!r} contains {char!r}, which {_SPLITS[char]}", _HINT)
    return value


_SPLITS = {
    "@": "mdtest's -d reads as a list of directories",
    ",": "mpirun's --host reads as a list of hosts",
    ":": "mpirun's --host reads as a host's slot count",
    " ": "Open MPI splits plm_rsh_agent (its ssh command) at",
    '"': "ends a quoted value of an ssh_config file",
}


@dataclass(frozen=True)
class MdtestSpec:
    """One mdtest run: `tasks` per node on every host (or here), each on `items` files and
    directories, every asked operation, `iterations` times."""

    directory: str
    tasks: int  # per node: the load ladder's level
    items: int  # per task (mdtest -n)
    ops: tuple[str, ...]
    iterations: int = 1
    hosts: tuple[str, ...] = ()  # empty: this machine only
    mdtest: str = "mdtest"
    mpirun: str = "mpirun"
    ssh_config: str = ""  # the hosts' ssh settings (`ssh_config`), for mpirun's ssh launcher

    @property
    def ordered_ops(self) -> tuple[str, ...]:
        return tuple(op for op in ALL_OPS if op in self.ops)

    @property
    def nodes(self) -> int:
        return max(1, len(self.hosts))


def mdtest_args(spec: MdtestSpec) -> list[str]:
    """mdtest's own arguments: the directory, items per task, iterations, the phases asked."""
    args = [mdtest_arg(spec.mdtest, "mdtest binary"),
            "-d", mdtest_arg(spec.directory, "metadata.directory", "@"),
            "-n", str(spec.items), "-i", str(spec.iterations)]  # fmt: skip
    dirs = any(op in DIR_OPS for op in spec.ops)
    files = any(op in FILE_OPS for op in spec.ops)
    if dirs and not files:
        args.append("-D")
    elif files and not dirs:
        args.append("-F")
    phases = {op.removeprefix("dir-") for op in spec.ops}
    if phases != set(_PHASE_FLAG):  # some phases only: name each (mdtest runs all otherwise)
        args += [flag for phase, flag in _PHASE_FLAG.items() if phase in phases]
    return args


def mpirun_args(spec: MdtestSpec, open_mpi: bool = True, root: bool = False) -> list[str]:
    """mpirun's part: `tasks` per node, on the plan's hosts when it names some. Open MPI
    refuses more tasks than cores without --oversubscribe (the ladder goes past the cores of
    a small node on purpose), and root without --allow-run-as-root (a test machine, a
    container): both are Open MPI's own flags, left out for another MPI."""
    args = [mdtest_arg(spec.mpirun, "mpirun binary")]
    if open_mpi:
        args.append("--oversubscribe")
        if root:
            args.append("--allow-run-as-root")
    if spec.hosts and spec.ssh_config:  # mpirun's own launcher, with the plan's keys
        config = mdtest_arg(spec.ssh_config, "the hosts' ssh_config", " ")
        args += ["--mca", "plm_rsh_agent", f"ssh -F {config}"]
    if spec.hosts:
        hosts = [mdtest_arg(h, f"hosts[{i}]", ",:") for i, h in enumerate(spec.hosts)]
        args += ["--host", ",".join(f"{h}:{spec.tasks}" for h in hosts),
                 "--npernode", str(spec.tasks)]  # fmt: skip
    args += ["-np", str(spec.tasks * spec.nodes)]
    return args


def command(spec: MdtestSpec, open_mpi: bool = True, root: bool = False) -> list[str]:
    return [*mpirun_args(spec, open_mpi, root), *mdtest_args(spec)]


def ssh_config(hosts: Sequence[Host]) -> str:
    """An ssh_config for mpirun's launcher (`ssh -F`): per host its user, port, key and known
    hosts from the plan (`hosts[].ssh`); key login only (BatchMode: never a password
    prompt). Every value passes the gate; paths are quoted."""
    word, path = ' "', '"'  # a blank ends a bare word, a quote ends a quoted path
    lines = []
    for i, host in enumerate(hosts):
        where = f"hosts[{i}].ssh"
        lines.append(f"Host {mdtest_arg(host.address, f'hosts[{i}].address', ',:' + word)}")
        ssh = host.ssh
        if ssh is not None:
            if ssh.host is not None:
                lines.append(f"  HostName {mdtest_arg(ssh.host, f'{where}.host', word)}")
            if ssh.user is not None:
                lines.append(f"  User {mdtest_arg(ssh.user, f'{where}.user', word)}")
            lines.append(f"  Port {ssh.port}")
            if ssh.key is not None:
                key = mdtest_arg(ssh.key, f"{where}.key", path)
                lines.append(f'  IdentityFile "{key}"')
            if ssh.known_hosts is not None:
                known = mdtest_arg(ssh.known_hosts, f"{where}.known_hosts", path)
                lines += [f'  UserKnownHostsFile "{known}"', "  StrictHostKeyChecking yes"]
        lines.append("  BatchMode yes")
    return "\n".join(lines) + "\n"
